"""The capture's terminal view: the kernel's text shown, records hidden, a status line with
experiment k of N and the time left from the plan record."""
import io

from streams import record
from ticklablib import records, view


class Stream(io.StringIO):
    def __init__(self, tty=False):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def feed(lines, tty=False):
    out, err = Stream(), Stream(tty)
    v = view.View(out, err)
    parser = records.StreamParser(on_line=v.line)
    parser.feed(b"\n".join(lines) + b"\n")
    parser.close()
    v.done()
    return v, out.getvalue(), err.getvalue()


def plan_rec(**expected):
    return record({"type": "plan", "experiments": [
        {"exp": name, "budget_ns": 10 * 10 ** 9, **({"expected_ns": ns} if ns else {})}
        for name, ns in expected.items()]})


def test_text_shown_records_hidden_escapes_removed():
    v, out, err = feed([b"\x1b[2J\x1b[01;01Hticklab 0.1.0", record({"type": "boot"}),
                        b"  table   1   2", b"\x00\x07bell"])
    assert out == "ticklab 0.1.0\n  table   1   2\nbell\n"
    assert "TLR" not in out and v.records == 1


def test_status_without_plan_is_k_of_unknown():
    _, _, err = feed([record({"type": "boot"}), record({"type": "exp_start", "exp": "a"}),
                      record({"type": "exp_end", "exp": "a", "duration_ns": 5}),
                      record({"type": "exp_start", "exp": "b"})])
    assert "capture: experiment 1 of ?: a | " in err
    assert "capture: experiment 2 of ?: b | " in err and "left" not in err


def test_status_with_plan_counts_and_estimates():
    _, _, err = feed([record({"type": "boot"}), plan_rec(a=2 * 10 ** 9, b=None, c=3 * 10 ** 9),
                      record({"type": "exp_start", "exp": "a"})])
    line = [x for x in err.splitlines() if "experiment 1 of 3: a" in x][0]
    # a 2 s, b only a budget of 10 s (15 % of it expected), c 3 s, then the verdict's 1 s
    assert "about 7.5 s left" in line
    _, _, err = feed([record({"type": "boot"}), plan_rec(a=2 * 10 ** 9, c=3 * 10 ** 9),
                      record({"type": "exp_start", "exp": "a"})])
    assert "about 6.0 s left" in err


def test_estimate_learns_the_wall_rate():
    plan = view.Plan()
    plan.record(records.Record({"type": "plan", "experiments": [
        {"exp": "a", "expected_ns": 10 ** 10}, {"exp": "b", "expected_ns": 10 ** 10}]}, 1), 0)
    plan.record(records.Record({"type": "exp_start", "exp": "a"}, 2), 100.0)
    plan.record(records.Record({"type": "exp_end", "exp": "a", "duration_ns": 10 ** 10}, 3),
                101.0)  # 10 s of machine time in 1 s of wall time (icount)
    plan.record(records.Record({"type": "exp_start", "exp": "b"}, 4), 101.0)
    left, upper = plan.seconds_left(101.5)  # half of b, and the verdict's 1 s, at 1/10
    assert not upper and abs(left - 0.6) < 1e-6 and plan.position() == (2, 2)


def test_damage_is_noted_and_counted():
    bad = bytearray(record({"type": "sample", "i": 1}))
    bad[-3] ^= 1
    v, out, err = feed([record({"type": "boot"}), bytes(bad)])
    assert "capture: line 2: bad-crc: " in err and v.damaged == 1 and out == ""


def test_terminal_status_line_is_rewritten_in_place():
    _, out, err = feed([record({"type": "boot"}), b"text", record({"type": "end"})], tty=True)
    assert out == "text\n"
    assert "\r\x1b[K" in err and err.endswith("\n")
    assert err.rstrip("\n").split("\r\x1b[K")[-1].startswith("end (status None) | ")


def test_quiet_shows_nothing():
    out, err = Stream(), Stream()
    v = view.View(out, err, quiet=True)
    parser = records.StreamParser(on_line=v.line)
    parser.feed(record({"type": "boot"}) + b"\nhello\n")
    v.done()
    assert out.getvalue() == "" and err.getvalue() == ""


def test_time_left_from_typical_durations_and_the_pace():
    """Issue 27: "time left" was the budgets (it grew from 2 to 5 minutes under ICOUNT). Now:
    each experiment's typical machine time in its profile, scaled by how the finished ones
    compared with theirs, at the wall pace they ran."""
    names = ["period-compare", "periodic-jitter", "itimer-error"]
    plan = view.Plan()
    plan.record(records.Record({"type": "plan", "profile": "quick", "experiments": [
        {"exp": n, "budget_ns": 15 * 10 ** 9} for n in names]}, 1), 0)
    left, upper = plan.seconds_left(0.0)
    typical = sum(view.TYPICAL_S["quick"][n] for n in names)
    assert not upper and abs(left - (typical + view.VERDICT_S)) < 1e-6  # not 45 s of budget
    plan.record(records.Record({"type": "exp_start", "exp": names[0]}, 2), 10.0)
    # it took twice its typical machine time, in half as much wall time (icount)
    machine = 2 * view.TYPICAL_S["quick"][names[0]]
    plan.record(records.Record({"type": "exp_end", "exp": names[0],
                                "duration_ns": int(machine * 1e9)}, 3), 10.0 + machine / 2)
    left, _ = plan.seconds_left(10.0 + machine / 2)
    rest = 2 * sum(view.TYPICAL_S["quick"][n] for n in names[1:]) + view.VERDICT_S
    assert abs(left - rest / 2) < 1e-3


def test_time_left_under_icount_from_typical_wall_times():
    """Under icount machine time says little of wall time (tick-overhead: 6 s of machine
    time in 10-20 s): the estimate there is the typical wall times, at the host's pace."""
    table = view.TYPICAL_ICOUNT_WALL_S["quick"]
    names = list(table)
    plan = view.Plan()
    plan.icount = True
    plan.record(records.Record({"type": "plan", "profile": "quick", "experiments": [
        {"exp": n, "budget_ns": 15 * 10 ** 9} for n in names]}, 1), 0)
    left, _ = plan.seconds_left(0.0)
    assert abs(left - (sum(table.values()) + 0.5)) < 1e-6
    plan.record(records.Record({"type": "exp_start", "exp": names[0]}, 2), 0.0)
    plan.record(records.Record({"type": "exp_end", "exp": names[0], "duration_ns": 5 * 10 ** 9},
                               3), 2 * table[names[0]])  # a host twice as slow
    left, _ = plan.seconds_left(2 * table[names[0]])
    assert abs(left - 2 * (sum(table.values()) - table[names[0]] + 0.5)) < 1e-6
