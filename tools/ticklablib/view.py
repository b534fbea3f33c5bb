"""What `ticklab capture` shows on the terminal while a run streams in.

The kernel's console carries two things: its human text (tables, progress lines) and the
`TLR ...` record lines. People read the first; the log file keeps both in full. So the
default view prints the text lines as they come and hides the record lines, with one status
line under them: "experiment 7 of 10: <its name> | 18.7 s | about 40 s left". The
experiment count and the time left come from the kernel's `plan` record when it sent one
(without it: "experiment 7 of ?", no estimate). On a terminal the status line is rewritten
in place; in a pipe or a CI log nothing is rewritten: the status is printed as its own line
whenever the experiment changes. `--raw` (RAW=1) shows the stream as it is, bytes
untouched, and no status.

Text goes to `out` (stdout), the status and the capture's own notes to `err` (stderr); when
both are one terminal, the status line is cleared before any text is written above it.
"""

import re
import shutil
import time

from . import experiments
from .values import num

# Escape sequences (CSI, OSC, two-byte) and other control characters firmware and GRUB
# write to the serial port; a terminal would act on them (clear the screen, move the cursor).
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f]")
REDRAW_S = 0.5


def clean_text(line):
    """A console line as text a terminal prints without acting on it."""
    return _CONTROL.sub("", line.decode("utf-8", "replace")).rstrip()


def by_profile(field):
    """{profile: {experiment: seconds}} from each experiment's typical durations (`field`
    of spec.Experiment): typical_s, the machine seconds it took (the plan sends only
    budgets, which the quick profile uses a tenth of), or typical_icount_wall_s, the wall
    seconds it took under icount, where wall time is the instruction count over the
    emulator's speed, nothing like machine time."""
    out = {}
    for exp in experiments.EXPERIMENTS:
        for profile, seconds in getattr(exp, field).items():
            out.setdefault(profile, {})[exp.name] = seconds
    return out


TYPICAL_S = by_profile("typical_s")
TYPICAL_ICOUNT_WALL_S = by_profile("typical_icount_wall_s")
BUDGET_SHARE = 0.15   # of its budget an experiment with no typical figure is expected to take
VERDICT_S = 1.0       # machine time after the last experiment: verdict, summary, end


class Plan:
    """Where the run is among its experiments, from plan / exp_start / exp_end records, and
    how long the rest will take: each experiment's expected machine time (the plan's
    expected_ns, else TYPICAL_S for the profile, else a share of its budget), scaled by how
    the experiments done so far compared with their expectation, converted to wall time at
    the pace they ran (wall seconds per machine second: icount runs far faster or slower
    than real time)."""

    def __init__(self):
        self.planned = None     # [{"exp", "budget_ns", "expected_ns"}], or None: no plan
        self.profile = None
        self.started = []       # experiment names in exp_start order
        self.current = None     # name of the experiment running, or None
        self.cur_wall = None    # monotonic time its exp_start arrived
        self.done_wall_s = 0.0  # wall seconds the finished experiments took
        self.done_machine_ns = 0  # machine ns they took, by their exp_end
        self.done_expected_ns = 0  # what was expected of them
        self.finished = set()
        self.icount = False     # the capture runs QEMU under -icount (set by capture)
        self.done_typical_wall_s = 0.0  # icount: the typical wall time of those finished

    def record(self, rec, now):
        if rec.type == "plan" and isinstance(rec.get("experiments"), list):
            self.planned = [e for e in rec["experiments"]
                            if isinstance(e, dict) and isinstance(e.get("exp"), str)]
            self.profile = rec.get("profile")
        elif rec.type == "exp_start" and isinstance(rec.get("exp"), str):
            self.started.append(rec["exp"])
            self.current, self.cur_wall = rec["exp"], now
        elif rec.type == "exp_end":
            if self.current is not None and self.cur_wall is not None:
                machine = num(rec.get("duration_ns"))
                if machine and machine > 0:
                    self.done_wall_s += now - self.cur_wall
                    self.done_machine_ns += machine
                    self.done_expected_ns += self.expected_ns(self.current) or machine
                    self.done_typical_wall_s += self.typical_wall_s(self.current) or 0.0
            if isinstance(rec.get("exp"), str):
                self.finished.add(rec["exp"])
            self.current = None

    def position(self):
        """(k, N or None) for the current (or last started) experiment."""
        k = len(self.started)
        return k, (len(self.planned) if self.planned is not None else None)

    def entry(self, name):
        return next((e for e in self.planned or [] if e.get("exp") == name), {})

    def expected_ns(self, name):
        """The machine ns an experiment is expected to take."""
        e = self.entry(name)
        if num(e.get("expected_ns")) is not None:
            return num(e.get("expected_ns"))
        typical = TYPICAL_S.get(self.profile, {}).get(name)
        if typical is not None:
            return typical * 1e9
        budget = num(e.get("budget_ns"))
        return budget * BUDGET_SHARE if budget else None

    def typical_wall_s(self, name):
        """Under icount, the wall seconds an experiment typically takes, or None."""
        return TYPICAL_ICOUNT_WALL_S.get(self.profile, {}).get(name) if self.icount else None

    def wall_left(self, now):
        """Under icount with a known profile: the typical wall seconds of what remains,
        scaled by how the finished experiments compared with theirs (the host's pace)."""
        pace = self.done_wall_s / self.done_typical_wall_s if self.done_typical_wall_s \
            else 1.0
        pace = min(max(pace, 0.3), 3.0)
        k = len(self.started)
        left = 0.0
        for i, entry in enumerate(self.planned):
            if i < k - 1 or (i == k - 1 and self.current is None):
                continue
            typical = (self.typical_wall_s(entry.get("exp")) or 0.0) * pace
            if i == k - 1 and self.cur_wall is not None:
                ran = now - self.cur_wall
                left += max(typical - ran, 0.1 * typical)
            else:
                left += typical
        return left + 0.5 * pace

    def seconds_left(self, now):
        """(estimated wall seconds to the run's end, whether it is only the budgets' bound),
        or (None, False) without a plan."""
        if self.planned is None:
            return None, False
        if self.icount and all(self.typical_wall_s(e.get("exp")) is not None
                               for e in self.planned):
            return self.wall_left(now), False
        rate = (self.done_wall_s / (self.done_machine_ns / 1e9)) if self.done_machine_ns \
            else 1.0
        pace = self.done_machine_ns / self.done_expected_ns if self.done_expected_ns else 1.0
        pace = min(max(pace, 0.3), 3.0)
        k = len(self.started)
        left_ns = bound_ns = 0.0
        for i, entry in enumerate(self.planned):
            if i < k - 1 or (i == k - 1 and self.current is None):
                continue  # done
            expected = (self.expected_ns(entry.get("exp")) or 0) * pace
            budget = num(entry.get("budget_ns")) or expected
            if i == k - 1 and self.cur_wall is not None:
                ran_ns = (now - self.cur_wall) / rate * 1e9
                # past its expectation: a tenth of that again, until its budget
                left_ns += max(expected - ran_ns, min(0.1 * expected, budget - ran_ns), 0.0)
                bound_ns += max(budget - ran_ns, 0.0)
            else:
                left_ns += expected
                bound_ns += budget
        left_ns += VERDICT_S * 1e9
        return min(left_ns, bound_ns + VERDICT_S * 1e9) / 1e9 * rate, False


def fmt_s(seconds):
    if seconds < 90:
        return "%.0f s" % seconds if seconds >= 10 else "%.1f s" % seconds
    return "%d min %02d s" % (seconds // 60, seconds % 60)


class View:
    """The capture's terminal output. Feed it every parsed line (`line`) and tick it
    (`tick`) between reads; `raw_bytes` in --raw mode; `note` for the capture's own
    messages; `done` at the end."""

    def __init__(self, out, err, raw=False, quiet=False):
        self.out, self.err = out, err
        self.raw, self.quiet = raw, quiet
        self.tty = err.isatty() and not raw and not quiet
        self.start = time.monotonic()
        self.plan = Plan()
        self.records = 0
        self.damaged = 0
        self.phase = "waiting for the kernel's first record"
        self.shown = ""
        self.last_drawn = 0.0
        self.drawn_key = None
        self.last_phase_line = None
        self.last_printed = None

    # --- input ---------------------------------------------------------------------
    def line(self, lineno, text, record, problem):
        """One capture line from the parser (records.StreamParser's on_line)."""
        now = time.monotonic()
        if problem is not None:
            self.damaged += 1
            if not self.quiet:
                self.note("capture: line %d: %s: %s" % (lineno, problem.kind,
                                                        problem.message[:160]))
        if record is not None:
            self.records += 1
            self.plan.record(record, now)
            self._phase_of(record)
        elif problem is None and not self.raw and not self.quiet:
            self._text(clean_text(text))
        self.tick()

    def raw_bytes(self, chunk):
        if self.raw and not self.quiet:
            self.out.buffer.write(chunk) if hasattr(self.out, "buffer") else \
                self.out.write(chunk.decode("utf-8", "replace"))
            self.out.flush()

    def tick(self):
        """Redraw the status line (a terminal) or print it when the phase changed."""
        if self.quiet or self.raw:
            return
        now = time.monotonic()
        if self.tty:
            key = (self.phase, self.plan.current, self.records, self.damaged)
            if now - self.last_drawn >= REDRAW_S or key != self.drawn_key:
                self.drawn_key = key
                self._draw(self.status(now))
        elif self.phase != self.last_phase_line:
            self.last_phase_line = self.phase
            self.last_printed = (self.phase, self.damaged)
            print("capture: %s" % self.status(now), file=self.err, flush=True)

    def note(self, text):
        """A message of the capture's own, printed above the status line."""
        self._clear()
        print(text, file=self.err, flush=True)
        self._redraw()

    def done(self):
        """The last status: drawn and ended on a terminal, printed once more in a pipe
        when it says something the last printed one did not (damage after the phase)."""
        if self.quiet or self.raw:
            return
        text = self.status(time.monotonic())
        if self.tty and self.shown:
            self._draw(text)
            self.err.write("\n")
            self.err.flush()
            self.shown = ""
        elif not self.tty and (self.phase, self.damaged) != self.last_printed:
            print("capture: %s" % text, file=self.err, flush=True)

    # --- the status line ------------------------------------------------------------
    def _phase_of(self, rec):
        if rec.type == "boot":
            self.phase = "inventory and calibration"
        elif rec.type == "exp_start" and isinstance(rec.get("exp"), str):
            self.phase = "experiment " + rec["exp"]
        elif rec.type == "exp_end":
            self.phase = "between experiments"
        elif rec.type == "verdict":
            self.phase = "verdict and summary"
        elif rec.type == "end":
            self.phase = "end (status %s)" % rec.get("status")

    def status(self, now):
        elapsed = now - self.start
        parts = []
        if self.plan.current is not None:
            k, n = self.plan.position()
            parts.append("experiment %d of %s: %s" % (k, n if n is not None else "?",
                                                      self.plan.current))
        else:
            parts.append(self.phase)
        parts.append(fmt_s(elapsed))
        left, upper = self.plan.seconds_left(now)
        if left is not None and self.phase != "verdict and summary" \
                and not self.phase.startswith("end"):
            parts.append("%s %s left" % ("at most" if upper else "about", fmt_s(left)))
        parts.append("%d record%s" % (self.records, "s" * (self.records != 1)))
        if self.damaged:
            parts.append("%d damaged" % self.damaged)
        return " | ".join(parts)

    def _text(self, text):
        self._clear()
        print(text, file=self.out, flush=True)
        self._redraw()

    def _draw(self, text):
        width = shutil.get_terminal_size((100, 24)).columns - 1
        text = text[:width]
        self.err.write("\r\x1b[K" + text)
        self.err.flush()
        self.shown = text
        self.last_drawn = time.monotonic()

    def _clear(self):
        if self.tty and self.shown:
            self.err.write("\r\x1b[K")
            self.err.flush()

    def _redraw(self):
        if self.tty and self.shown:
            self.err.write(self.shown)
            self.err.flush()
