"""How a run was made: the capture's own record of it (LOG.capture.json, written by
`ticklab capture` beside the log) joined with what the kernel saw (its boot, cpu and
environment records), in the words that head the report and the terminal summary.

The three environments ticklab meets give figures of three different kinds, and a reader
must know which before reading any number:
  virtual time (QEMU TCG with -icount): every figure is an instruction count, exact and
      repeatable, not the speed of any PC;
  KVM guest: real time on real silicon, but every device access is a VM exit;
  plain emulation (TCG without icount): the host's scheduling noise dominates.
A serial capture of a PC with no hypervisor is real hardware. Without a capture record
the kernel's view still tells TCG from KVM from none, but not icount from plain TCG.
"""

import json
import os

from . import experiments, inputs

CAPTURE_SUFFIX = ".capture.json"
FORMAT = "ticklab-capture/1"

UNKNOWN = "unknown (no %s beside the log)" % ("LOG" + CAPTURE_SUFFIX)

# CPUID leaf 0x40000000 signatures the kernel may report (cpu.hypervisor_signature)
SIGNATURES = {"TCGTCGTCGTCG": "tcg", "KVMKVMKVM": "kvm"}

HEADLINES = {
    "icount": "virtual time (icount shift=%s): figures are instruction counts",
    "kvm": "KVM guest: figures include VM exits",
    "tcg": "plain emulation (TCG): figures are host noise",
    "hardware": "real hardware: figures are this machine's own",
    "other-vm": "a virtual machine (%s): figures include the hypervisor's work",
}


def record_path(log):
    return log + CAPTURE_SUFFIX


def load(log):
    """The capture record beside `log` (for LOG.gz, LOG.gz's or else LOG's; none for
    standard input): (dict or None, problem text or None)."""
    for base in inputs.capture_record_paths(log):
        path = record_path(base)
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            break
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            return None, "%s cannot be read: %s" % (path, e)
    else:
        return None, None
    if not isinstance(doc, dict):
        return None, "%s is not a JSON object" % path
    return doc, None


def write(log, doc):
    """Write the capture record beside the log (replaced atomically)."""
    path = record_path(log)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)
    return path


def kernel_hypervisor(boot, cpu):
    """What the kernel saw: "none", "kvm", "tcg", "other" or None (not said)."""
    named = boot.get("hypervisor")
    if isinstance(named, str) and named:
        return named
    sig = cpu.get("hypervisor_signature")
    if isinstance(sig, str) and sig:
        return SIGNATURES.get(sig.rstrip("\x00").strip(), "other")
    if cpu.get("hypervisor") is False:
        return "none"
    return None


def mode_of(capture, seen, environment=None):
    """The kind of figures: icount, kvm, tcg, hardware, other-vm, or None (unknown). The
    capture record decides; without one, what the kernel saw: under TCG its environment
    record's `virtual_time_likely` (a TSC at exactly 1 GHz, as only -icount gives) tells
    virtual time from plain emulation."""
    if capture and capture.get("source") == "qemu":
        if capture.get("accel") == "kvm":
            return "kvm"
        return "icount" if capture.get("icount_shift") is not None else "tcg"
    if seen == "kvm":
        return "kvm"
    if seen == "none":
        return "hardware"
    if seen == "other":
        return "other-vm"
    if seen == "tcg":
        likely = (environment or {}).get("virtual_time_likely")
        if likely is True:
            return "icount"
        if likely is False:
            return "tcg"
    return None  # TCG without a capture record or the kernel's word: cannot be told


def how_started(capture):
    """One line: the QEMU settings or the serial port, or "unknown (...)"."""
    if not capture:
        return UNKNOWN
    if capture.get("source") == "serial":
        return "serial capture of %s at %s baud" % (capture.get("serial_device"),
                                                   capture.get("baud"))
    parts = ["QEMU %s" % (capture.get("qemu_version") or "(version unknown)"),
             (capture.get("accel") or "?").upper()]
    if capture.get("icount_shift") is not None:
        parts.append("-icount shift=%s" % capture["icount_shift"])
    parts.append("machine %s" % capture.get("machine"))
    parts.append("cpu %s" % (capture.get("cpu_model") or "QEMU's default"))
    parts.append("%s CPU(s), %s" % (capture.get("smp"), capture.get("mem")))
    parts.append("%s, boot %s" % (capture.get("firmware"), capture.get("boot")))
    if capture.get("kernel_args"):
        parts.append("args %r" % capture["kernel_args"])
    host = ", ".join(x for x in (capture.get("host_cpu"), capture.get("host_kernel")) if x)
    text = ", ".join(parts)
    return text + ("; host %s" % host if host else "")


def describe(capture, boot, cpu, environment):
    """The environment in words. Returns a dict:
    mode, headline, how_started, kernel (what the kernel saw), details [str], warnings [str].
    """
    boot, cpu, environment = boot or {}, cpu or {}, environment or {}
    seen = environment.get("hypervisor") if isinstance(environment.get("hypervisor"), str) \
        else kernel_hypervisor(boot, cpu)
    mode = mode_of(capture, seen, environment)
    from_kernel = mode in ("icount", "tcg") and not (capture and capture.get("source") == "qemu")
    if mode == "icount" and from_kernel:
        headline = ("virtual time (QEMU -icount, as the kernel saw it: a TSC at exactly "
                    "1 GHz): figures are instruction counts")
    elif mode == "tcg" and from_kernel:
        headline = ("plain emulation (TCG, as the kernel saw it: no -icount): figures are "
                    "host noise")
    elif mode == "icount":
        headline = HEADLINES["icount"] % capture.get("icount_shift")
    elif mode == "other-vm":
        headline = HEADLINES["other-vm"] % (boot.get("hypervisor_signature")
                                            or cpu.get("hypervisor_signature") or "?")
    elif mode:
        headline = HEADLINES[mode]
    elif seen == "tcg":
        headline = ("QEMU emulation (TCG): virtual time (icount) or plain emulation cannot "
                    "be told without the capture record")
    else:
        headline = "environment unknown: no capture record and the kernel named none"
    warnings = []
    if capture and capture.get("source") == "qemu" and seen in ("tcg", "kvm", "none") \
            and capture.get("accel") in ("tcg", "kvm") and seen != capture.get("accel"):
        warnings.append("the capture started QEMU with %s but the kernel saw %s: this log "
                        "and its capture record may not belong together"
                        % (capture.get("accel"), seen))
    details = kernel_details(boot, cpu, environment, seen)
    mode_from = None if mode is None else "the kernel's own records" if from_kernel or not (
        capture and capture.get("source") == "qemu") else "the capture record"
    return {"mode": mode, "mode_from": mode_from, "headline": headline,
            "how_started": how_started(capture),
            "kernel_saw": seen, "details": details, "warnings": warnings}


def kernel_details(boot, cpu, environment, seen):
    out = []
    sig = boot.get("hypervisor_signature") or cpu.get("hypervisor_signature")
    if seen == "none":
        out.append("the kernel saw no hypervisor")
    elif seen or sig:
        out.append("the kernel saw hypervisor %s%s" % (
            seen or "?", " (CPUID signature %s)" % sig if sig else ""))
    cost = environment.get("rdtsc_cost_cyc")
    if cost is not None:
        trapped = environment.get("rdtsc_trapped")
        out.append("RDTSC costs %s cycles%s" % (cost, ", trapped by the hypervisor"
                                                if trapped is True else
                                                ", not trapped" if trapped is False else ""))
    idle = environment.get("idle")
    if idle == "poll":
        why = environment.get("idle_reason") or ""
        out.append("no CPU halts (%s): waits spin with interrupts on, so %s has "
                   "no HLT series" % ("idle=auto under virtual time, exact mode"
                                      if why.startswith("idle=auto") else "idle=poll, exact mode",
                                      experiments.latency().name))
    elif idle == "halt":
        why = environment.get("idle_reason") or ""
        out.append("waits halt (%s)" % ("idle=auto: real time" if why.startswith("idle=auto, real")
                                         else "idle=auto: more than one CPU"
                                         if why.startswith("idle=auto") else "idle=halt"))
    reads = environment.get("clock_read_cost_ns")
    if isinstance(reads, dict) and reads:
        out.append("one clock read costs " + ", ".join(
            "%s %s ns" % (k, v) for k, v in reads.items()))
    return out
