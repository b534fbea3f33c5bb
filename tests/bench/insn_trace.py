#!/usr/bin/python3
"""make bench, the instruction breakdown: boots ticklab under QEMU -icount with its gdb stub,
single-steps whole timer interrupts and counts their instructions function by function.

Under -icount shift=0 one guest instruction is one virtual ns, so these counts are what the
wakeup-latency and tick-overhead figures of guest_bench.py are made of. Three paths:
  hrtimer on DEVICE   an hrtimer interrupt of wakeup-latency's hrtimer series (its callback,
                      on_timer, is the measuring point): from the entry stub to the
                      callback's first instruction, the callback itself (the experiment's
                      own sampling), and from its return to IRETQ. Also the next start's
                      programming (clockevent_program_abs_ns from hrtimer_start), which on
                      a device armed by a delay lies between the clock read and the write.
  tick                a periodic tick interrupt (tick_event), from the stub to IRETQ.
Counts per function include what was inlined into it. Nothing here changes the guest: the
stub answers between instructions, and QEMU runs no timers while it steps (its default
single-step flags), so what is traced is the same path the timed runs take.

The traced boot runs with -icount shift=0,sleep=on (docs/hot-paths.md says why), its serial
output dropped: TRACE_SERIAL=file:LOG keeps it, TRACE_STDERR=FILE keeps QEMU's messages,
TRACE_DEBUG=1 names each callback the trace stops at.

Usage: tests/bench/insn_trace.py [--kernel build/ticklab.elf] [--samples N]
"""
import argparse
import bisect
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RIP = 16            # register numbers of QEMU's x86-64 'g' packet
RSP = 7


class Symbols:
    """Text symbols (functions) by address, the local ones with their source file."""

    def __init__(self, elf):
        out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True,
                             check=True).stdout
        self.funcs, self.data, cur_file = [], {}, ""
        for line in out.splitlines():
            f = line.split()
            if len(f) < 8 or not f[0].endswith(":") or f[1] == "Value":
                continue
            value, size, typ, bind, name = int(f[1], 16), int(f[2], 0), f[3], f[4], f[7]
            if typ == "FILE":
                cur_file = name
                continue
            if typ in ("FUNC", "NOTYPE") and value and f[6] != "UND":
                self.funcs.append((value, size, name, cur_file if bind == "LOCAL" else ""))
            elif typ == "OBJECT":
                self.data[(name, cur_file if bind == "LOCAL" else "")] = value
                self.data.setdefault((name, None), value)
        self.funcs.sort()
        self.addrs = [a for a, _, _, _ in self.funcs]
        iret = subprocess.run(["objdump", "-d", "--no-show-raw-insn", elf], capture_output=True,
                              text=True, check=True).stdout
        self.iretq = {int(l.split(":")[0], 16) for l in iret.splitlines() if "\tiretq" in l}

    def func(self, name, file=None):
        for a, size, n, fl in self.funcs:
            if n == name and (file is None or fl == file):
                return a, size
        raise KeyError(name)

    def name_at(self, pc):
        i = bisect.bisect_right(self.addrs, pc) - 1
        if i < 0:
            return "?"
        a, size, n, _ = self.funcs[i]
        # An interrupt's stub (isr.asm: entry, dispatch and exit in place, with the local
        # labels of its macros) and the split exit are one part: the entry stub.
        if n.startswith("isr_stub_") or n.startswith("..@") or n == "isr_irq_split":
            return "isr_stub"
        return n

    def irq_stubs(self):
        """The entry stubs of vectors 32-255 (isr.asm), where every interrupt starts."""
        return [a for a, _, n, _ in self.funcs
                if n.startswith("isr_stub_") and n[9:].isdigit() and int(n[9:]) >= 32]

    def var(self, name, file=None):
        return self.data[(name, file)]


class Stub:
    """A minimal gdb remote-protocol client."""

    def __init__(self, port):
        for _ in range(100):
            try:
                self.s = socket.create_connection(("127.0.0.1", port), timeout=600)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("no gdb stub on port %d" % port)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # one small packet
        self.buf = b""                                                  # per step
        self.bps = set()
        self.cmd("qSupported")
        # Steps with timers and interrupts on (SSTEP_ENABLE alone): with QEMU's default
        # (timers off while stepping) icount warps virtual time to the next timer deadline
        # at each step, 50 ms at a time here; the traced code runs with interrupts off, so
        # nothing else can come in between.
        self.cmd("Qqemu.sstep=1")

    def _read_packet(self):
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i)
            if i >= 0 and j >= 0 and len(self.buf) >= j + 3:
                data = self.buf[i + 1:j]
                self.buf = self.buf[j + 3:]
                self.s.sendall(b"+")
                return data.decode()
            chunk = self.s.recv(65536)
            if not chunk:
                raise RuntimeError("the gdb stub closed the connection")
            self.buf += chunk

    def cmd(self, data):
        pkt = "$%s#%02x" % (data, sum(data.encode()) & 0xFF)
        self.s.sendall(pkt.encode())
        return self._read_packet()

    def regs(self):
        g = self.cmd("g")
        return [int.from_bytes(bytes.fromhex(g[i * 16:(i + 1) * 16]), "little")
                for i in range(17)]

    def rip(self):
        return self.regs()[RIP]

    def mem(self, addr, n):
        return bytes.fromhex(self.cmd("m%x,%x" % (addr, n)))

    def u64(self, addr):
        return int.from_bytes(self.mem(addr, 8), "little")

    def cstr(self, addr):
        return self.mem(addr, 16).split(b"\0")[0].decode(errors="replace")

    def brk(self, addr, on=True):
        self.cmd("%s0,%x,1" % ("Z" if on else "z", addr))
        (self.bps.add if on else self.bps.discard)(addr)

    def cont(self):
        """Continues; off a breakpoint the guest stopped at, by a step without it first
        (QEMU's stub would stop there again at once)."""
        pc = self.rip()
        if pc in self.bps:
            self.cmd("z0,%x,1" % pc)
            self.cmd("s")
            self.cmd("Z0,%x,1" % pc)
        return self.cmd("c")

    def step(self):
        self.cmd("s")
        return self.rip()


def boot(kernel, args, port):
    cmd = ["qemu-system-x86_64", "-machine", "q35", "-m", "256M", "-display", "none",
           "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-nic", "none",
           "-icount", "shift=0,sleep=on", "-rtc", "clock=vm", "-kernel", kernel,
           "-append", args, "-serial", os.environ.get("TRACE_SERIAL", "null"), "-S", "-gdb", "tcp:127.0.0.1:%d" % port]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.environ.get("TRACE_STDERR", os.devnull), "w"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trace_until(stub, stop, limit=20000):
    """Steps from the current instruction until stop(pc) (that pc included); the pcs."""
    pcs = [stub.rip()]
    while not stop(pcs[-1]) and len(pcs) < limit:
        pcs.append(stub.step())
    return pcs


def by_function(syms, pcs):
    """(function, instructions) in order of first appearance."""
    counts, order = {}, []
    for pc in pcs:
        n = syms.name_at(pc)
        if n not in counts:
            counts[n] = 0
            order.append(n)
        counts[n] += 1
    return [(n, counts[n]) for n in order]


def fmt_parts(parts):
    return ", ".join("%s %d" % (n, c) for n, c in parts)


class Tracer:
    def __init__(self, kernel, samples):
        self.syms = Symbols(kernel)
        self.kernel = kernel
        self.samples = samples

    def interrupt(self, stub, keep):
        """One whole interrupt from its entry stub's first instruction to its IRETQ, or None
        when it is not one `keep(pcs)` wants (another device's)."""
        stubs = self.syms.irq_stubs()
        for a in stubs:
            stub.brk(a)
        stub.cont()
        for a in stubs:
            stub.brk(a, False)
        pcs = trace_until(stub, lambda pc: pc in self.syms.iretq)
        return pcs if keep(pcs) else None

    def returns(self, stub):
        """Steps from a function's first instruction to its return; the pcs inside it."""
        ret = stub.u64(stub.regs()[RSP])
        return trace_until(stub, lambda pc: pc == ret)[:-1]

    def tick(self, stub):
        """The shortest of a few tick interrupts (tick_event in them)."""
        te, te_size = self.syms.func("tick_event")
        stub.brk(te)
        stub.cont()          # the tick runs
        stub.brk(te, False)
        best = None
        for _ in range(4):
            pcs = self.interrupt(stub, lambda p: any(te <= pc < te + te_size for pc in p))
            if pcs and (best is None or len(pcs) < len(best)):
                best = pcs
        return best

    def hrtimers(self, stub):
        """Per device of wakeup-latency's hrtimer series with the CPU halted: (device, the
        interrupt's pcs before the callback, in it, after it, the next start's programming)."""
        s = self.syms
        cb, cb_size = s.func("on_timer", "wakeup_latency.c")
        prog, _ = s.func("clockevent_program_abs_ns")
        start, _ = s.func("hrtimer_start")
        in_cb = lambda pc: cb <= pc < cb + cb_size
        cur_dev = s.var("cur_dev", "wakeup_latency.c")
        poll = s.var("exp_poll_waits")
        results, done = [], set()
        stub.brk(cb)
        while True:
            r = stub.cont()
            if not r.startswith("T") and not r.startswith("S"):
                break                      # the guest ended
            if stub.mem(poll, 1) != b"\0":
                break                      # the hlt series are over
            dev = stub.cstr(stub.u64(stub.u64(cur_dev)))
            if dev in done:
                continue
            done.add(dev)
            stub.brk(cb, False)
            pcs = None
            for _ in range(10):
                pcs = self.interrupt(stub, lambda p: any(in_cb(pc) for pc in p))
                if pcs:
                    break
            # the next start's programming (hrtimer_start -> clockevent_program_abs_ns)
            stub.brk(start)
            stub.cont()
            stub.brk(start, False)
            stub.brk(prog)
            stub.cont()
            stub.brk(prog, False)
            arm = self.returns(stub)
            if pcs:
                i = next(k for k, pc in enumerate(pcs) if in_cb(pc))
                j = len(pcs) - 1
                while not in_cb(pcs[j]):
                    j -= 1
                results.append((dev, pcs[:i], pcs[i:j + 1], pcs[j + 1:], arm))
            stub.brk(cb)
        return results

    def run(self):
        port = free_port()
        q = boot(self.kernel, "exp=tick-overhead,wakeup-latency samples=%d idle=halt" % self.samples,
                 port)
        try:
            stub = Stub(port)
            tick = self.tick(stub)
            return tick, self.hrtimers(stub)
        finally:
            q.kill()
            q.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=os.path.join(ROOT, "build", "ticklab.elf"))
    ap.add_argument("--samples", type=int, default=20)
    a = ap.parse_args()
    t = Tracer(a.kernel, a.samples)
    print("\ninstruction breakdown (QEMU gdb stub, single steps under -icount shift=0: one "
          "instruction = 1 ns)")
    tick, hrt = t.run()
    for dev, before, cbk, after, arm in hrt:
        print("  hrtimer on %s, CPU halted (wakeup-latency):" % dev)
        print("    stub -> callback        %4d  %s" % (
            len(before), fmt_parts(by_function(t.syms, before))))
        print("    callback (the sampling) %4d" % len(cbk))
        print("    callback -> IRETQ       %4d  %s" % (len(after), fmt_parts(
            by_function(t.syms, after))))
        print("    arming (program_abs_ns) %4d  %s" % (len(arm), fmt_parts(
            by_function(t.syms, arm))))
    if tick:
        print("  tick (tick-overhead's first rate): stub -> IRETQ %d" % len(tick))
        print("    " + fmt_parts(by_function(t.syms, tick)))
    else:
        print("  tick: no tick interrupt was traced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
