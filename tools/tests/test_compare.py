"""`ticklab compare`: settings and verdicts first, values judged against their noise, rows
keyed by every identifying field, counts as counts, aligned columns, N runs, overlaid CDFs."""
import copy
import pytest

from fullrun import full_run_bytes, full_run_records, small_run_records
from pages import inline_pngs, parse_html, read_csv
from streams import join, record
from tooling import run_tool
from ticklablib import comparemodel
from ticklablib.compare import load_all


def compare(*args):
    code, out, err = run_tool("compare", *args)
    return code, out + err


def write(path, recs):
    recs = [dict(r) for r in recs if r["type"] != "end"]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    path.write_bytes(join(record(r) for r in recs))
    return path


def changed(recs, edits):
    """A copy of a run with result rows edited: edits = {(exp, index): {key: value}}."""
    recs = copy.deepcopy(recs)
    for (exp, index), new in edits.items():
        rows = [r for r in recs if r.get("exp") == exp and r["type"] == "result"]
        rows[index].update(new)
    return recs


def section(out, title):
    """The lines of one section of the text output (up to the next blank line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_two_pcs_settings_verdicts_then_changes(tmp_path):
    a = write(tmp_path / "pc-a.log", full_run_records(brand="Fast CPU"))
    b = write(tmp_path / "pc-b.log", full_run_records(brand="Slow CPU", scale=2.0))
    code, out = compare(a, b, "--all")
    assert code == 0, out
    assert "[1] pc-a.log: lines 1-58, 58 records, whole, ended ok" in out
    settings = section(out, "settings")
    assert settings[0] == "settings (1 differ):"
    assert settings[2].split() == ["*", "CPU", "Fast", "CPU", "Slow", "CPU"]
    # the settings every run shares, collapsed into one line
    assert settings[3].startswith("  the same in every run: ") and "hz 1000" in settings[3]
    changes = section(out, "changes beyond noise")
    # the difference a number, the ratio in a column of its own
    assert any(c.split()[:5] == ["wakeup-latency", "device=lapic", "path=irq", "p99_ns",
                                 "2250"] and c.split()[5:8] == ["4500", "+2250", "2"]
               for c in changes), changes
    assert not any(" samples " in c for c in changes)  # equal in both: not listed


def test_one_tick_is_noise_and_the_real_change_ranks_first(tmp_path):
    base = small_run_records()
    a = write(tmp_path / "a.log", base)
    b = write(tmp_path / "b.log", changed(base, {
        ("wakeup-latency", 0): {"p99_ns": 191 + 10},        # one HPET tick: 10 ns
        ("wakeup-latency", 2): {"p99_ns": 402 + 600}}))    # a real change
    code, out = compare(a, b)
    changes = section(out, "changes beyond noise")
    assert changes[0].startswith("changes beyond noise, largest first: 1 of ")
    assert "device=lapic path=callback wait=hlt" in changes[2] and "+600" in changes[2]
    assert "within noise: 1 value(s)" in out
    code, out = compare(a, b, "--all")
    noise = section(out, "within noise")
    assert any("device=lapic path=irq wait=hlt" in n and "+10" in n and " 20 " in n
               for n in noise)  # noise: twice the 10 ns resolution of time_ns() on hpet


def test_columns_are_aligned(tmp_path):
    a = write(tmp_path / "a.log", full_run_records())
    b = write(tmp_path / "b.log", full_run_records(scale=3.0))
    _, short = compare(a, b)
    assert "... 21 more (--all lists them" in short  # 50 of 71 on the terminal by default
    _, out = compare(a, b, "--all")
    table = section(out, "changes beyond noise")[1:]
    header = table[0]
    starts = [header.index(c) for c in ("[1]", "[2]", "[2]-[1]", "noise", "score")]
    for line in table[1:]:
        for s in starts:
            assert line[s - 1] == " " and line[s] != " ", (s, line)


def test_rows_keyed_by_every_identifying_field(tmp_path):
    base = small_run_records()
    extra = [{"type": "result", "exp": "percpu-latency", "cpu": c, "device": "lapic",
              "load": "idle", "p50_ns": 400 + c} for c in (0, 1)]
    a = write(tmp_path / "a.log", base[:-1] + extra)
    other = changed(base, {("wakeup-latency", 1): {"p50_ns": 900}})
    extra2 = copy.deepcopy(extra)
    extra2[1]["p50_ns"] = 4000
    other = [r for r in other if r["type"] != "exp_end" or r["exp"] != "period-compare"]
    b = write(tmp_path / "b.log", other[:-1] + extra2)
    _, out = compare(a, b)
    assert "device=lapic path=irq wait=poll" in out and "#2" not in out
    assert "percpu-latency  cpu=1 device=lapic load=idle" in out
    assert "exp_end exp=period-compare: only in [1]" in out


def test_counts_are_counts_not_rates(tmp_path):
    base = small_run_records()
    tick = {"type": "tick_stats", "device": "lapic", "ticks": 10000, "jiffies_start":
            4294965296, "jiffies_end": 4294975296, "lost": 0}
    a = write(tmp_path / "a.log", base[:-1] + [tick])
    b = write(tmp_path / "b.log", base[:-1] + [dict(tick, jiffies_end=4294976046, lost=3,
                                                    ticks=10750)])
    _, out = compare(a, b)
    lines = [line for line in section(out, "changes beyond noise") if "tick_stats" in line]
    by_key = {line.split()[2]: line for line in lines}
    assert set(by_key) == {"lost", "ticks"}  # jiffies_end is internal: start + ticks
    for line in lines:
        assert "%" not in line and "ppm" not in line, line
    assert "+750 " in by_key["ticks"] and "+3 " in by_key["lost"]
    assert by_key["lost"].split()[-1] == "inf"  # trouble: any change is a change


def test_verdict_change_is_shown_with_its_claims(tmp_path):
    base = small_run_records()
    other = copy.deepcopy(base)
    next(r for r in other if r["type"] == "verdict").update(
        choice="hpet", claim="hpet: the lowest hrtimer callback latency")
    _, out = compare(write(tmp_path / "a.log", base), write(tmp_path / "b.log", other))
    verdicts = section(out, "verdicts")
    assert verdicts[0] == "verdicts (1 differ, * ):"
    assert verdicts[2].split() == ["*", "fastest", "clock", "event", "device", "lapic", "hpet"]
    assert "fastest clock event device [2]: hpet: the lowest hrtimer callback latency" in out


def test_integer_too_large_for_a_float_does_not_crash(tmp_path):
    base = small_run_records()
    huge = changed(base, {("wakeup-latency", 0): {"max_ns": 10 ** 400, "p99_ns": 2 ** 63}})
    code, out = compare(write(tmp_path / "a.log", base), write(tmp_path / "b.log", huge))
    assert code == 0, out
    assert "p99_ns" in out and "9223372036854775808" in out


def test_n_runs_and_run_to_run_spread(tmp_path):
    """Two repeats of one set-up give the noise for a third PC's values; between the two
    repeats themselves any difference beyond resolution is shown (icount must repeat)."""
    base = small_run_records()
    r1 = write(tmp_path / "r1.log", base)
    r2 = write(tmp_path / "r2.log", changed(base, {("wakeup-latency", 2): {"p99_ns": 452}}))
    other = [dict(r, brand="Other CPU") if r["type"] == "cpu" else r for r in base]
    r3 = write(tmp_path / "r3.log", changed(other, {("wakeup-latency", 2): {"p99_ns": 430}}))
    code, out = compare(r1, r2, r3)
    assert code == 0
    assert "[3] r3.log" in out and "[3]-[1]" in out
    runs, _ = load_all([str(r1), str(r2), str(r3)])
    values = comparemodel.collect([r.data for r in runs])
    comparemodel.judge(values, [comparemodel.setup_signature(r.data, r.capture) for r in runs])
    v = next(v for v in values if v.name == "device=lapic path=callback wait=hlt"
             and v.key == "p99_ns")
    assert v.scores[1] == 50 / 20   # repeats: against the 10 ns resolution
    assert v.scores[2] == 28 / 50   # other PC: against the repeats' spread
    assert v.status == "changed" and v.noise == 50


def test_html_overlays_every_runs_cdf_and_csv(tmp_path):
    a = write(tmp_path / "a.log", small_run_records(brand="A"))
    b = write(tmp_path / "b.log", changed(small_run_records(brand="B"), {
        ("wakeup-latency", 3): {"p99_ns": 900, "max_ns": 950}}))
    code, out = compare(a, b, "-o", tmp_path / "cmp")
    assert code == 0, out
    assert out.splitlines()[-1] == str((tmp_path / "cmp").resolve() / "compare.html")
    page = parse_html((tmp_path / "cmp" / "compare.html").read_text())
    alts = [i["alt"] for i in page.images]
    assert alts.count("Wakeup latency on lapic: every run's CDF") == 1
    # the overlay only: each run's own figures are in its own report, not drawn again
    assert len(inline_pngs(page)) == 1
    assert "Each run's own figures are in its report" in page.text
    assert "overlay-overlay_cdf_lapic" in page.ids
    header, rows = read_csv(tmp_path / "cmp" / "compare.csv")
    assert header == ["section", "row", "key", "kind", "a.log", "b.log", "delta_b.log",
                      "ratio_b.log", "noise", "score", "status"]
    row = next(r for r in rows if r[1] == "device=lapic path=callback wait=poll"
               and r[2] == "p99_ns")
    assert row[-1] == "changed" and float(row[6]) == 900 - float(row[4])
    assert float(row[7]) == pytest.approx(900 / float(row[4]), rel=1e-5)
    for r in rows:   # every delta and ratio a number (or empty where a value is absent)
        for cell in r[6:8]:
            assert cell == "" or float(cell) == float(cell), r
    assert compare(a, b, "-o", tmp_path / "cmp")[0] == 3  # not replaced without --force
    code, out = compare(a, b, "-o", tmp_path / "cmp", "--force", "--figures")
    assert code == 0, out
    page = parse_html((tmp_path / "cmp" / "compare.html").read_text())
    assert len(inline_pngs(page)) == 1 + 2 * 5  # the overlay, then 5 figures per run


def test_two_runs_in_one_log_and_a_missing_row(tmp_path):
    recs = full_run_records()
    fewer = [r for r in recs if r.get("device") != "rtc"]
    fewer[-1] = dict(fewer[-1], records=len(fewer) - 1)
    log = tmp_path / "both.log"
    log.write_bytes(full_run_bytes() + join(record(r) for r in fewer))
    code, out = compare(log)
    assert code == 0, out
    assert "[1] both.log#1" in out and "[2] both.log#2" in out
    assert "wakeup-latency device=rtc path=irq: only in [1]" in out


def test_damaged_input_is_compared_and_flagged(tmp_path):
    good, cut = tmp_path / "good.log", tmp_path / "cut.log"
    good.write_bytes(full_run_bytes())
    cut.write_bytes(full_run_bytes()[:-200])
    code, out = compare(good, cut)
    assert code == 1
    assert "[2] cut.log: lines 2-65, 55 records, NOT whole (2 problems), ended (no end)" in out


def test_fewer_than_two_runs(tmp_path):
    one = tmp_path / "one.log"
    one.write_bytes(full_run_bytes())
    code, out = compare(one)
    assert code == 3 and "need at least two runs with a boot record; found 1" in out
    assert compare(one, tmp_path / "nonexistent.log")[0] == 3


# --- the noise floor per mode, on real runs (fixtures/README.md) ------------------------

def test_two_plain_emulation_runs_are_mostly_within_their_own_spread(real_logs):
    """Issue 27: 1199 of 2677 values were "beyond noise" between two TCG runs of one
    image. The floor is now the runs' own spread, and the compare says so."""
    code, out, err = run_tool("compare", real_logs["plain"], real_logs["plain2"])
    assert code == 0, err
    assert "noise floor: plain emulation (TCG): timings move with the host, so the noise " \
           "floor is these runs' own spread" in out
    last = out.splitlines()[-1]
    compared = int(last.split(" value(s) compared")[0].split()[-1])
    changed = int(last.split("compared: ")[1].split()[0])
    assert compared > 2000 and changed < 0.05 * compared, last
    assert last.endswith("plain emulation (TCG)")


def test_two_exact_runs_differ_in_nothing(real_logs, tmp_path):
    copy = tmp_path / "again.log"
    copy.write_bytes(real_logs["exact"].read_bytes())
    (tmp_path / "again.log.capture.json").write_text(
        open(str(real_logs["exact"]) + ".capture.json").read())
    code, out, err = run_tool("compare", real_logs["exact"], copy)
    assert code == 0, err
    assert "noise floor: exact mode (icount) in every run" in out
    assert " 0 changed beyond noise (0.0 %)" in out.splitlines()[-1]


def test_internal_values_are_not_ranked(real_logs):
    """clocksource mult and interrupts counted per vector moved between the TCG runs; they
    follow from other values and are compared, not ranked."""
    code, out, _ = run_tool("compare", real_logs["plain"], real_logs["plain2"], "--all")
    changes = out[out.index("changes beyond noise"):out.index("within noise:")]
    assert " mult " not in changes and "vectors." not in changes
    internal = out[out.index("internal: "):out.index("absent: ")]
    assert "clocksource" in internal and " mult " in internal


def test_a_verdict_too_close_to_call_contradicts_nothing(tmp_path):
    """A "too close to call" may stand against any decided verdict; two decided
    verdicts that differ still count."""
    base = small_run_records()
    close = copy.deepcopy(base)
    next(r for r in close if r["type"] == "verdict").update(
        choice="too_close", decided=False, claim="too close to call here: lapic against hpet",
        intervals=[{"what": "lapic callback p99", "value_ns": 402, "lo_ns": 390,
                    "hi_ns": 420}, {"what": "hpet callback p99", "value_ns": 405,
                                    "lo_ns": 395, "hi_ns": 430}])
    _, out = compare(write(tmp_path / "a.log", base), write(tmp_path / "b.log", close))
    verdicts = section(out, "verdicts")
    assert verdicts[0] == "verdicts (0 differ, * ):"
    assert verdicts[1].startswith("  (~: only a verdict too close to call differs")
    assert verdicts[3].split()[:2] == ["~", "fastest"]


# --- what compare says, and only when it is so ---------------------------------------------

def test_files_are_mentioned_only_when_written(tmp_path):
    """compare without -o said "compare.csv has them all" of a file it never wrote."""
    recs = full_run_records()
    fewer = [r for r in recs if r.get("type") != "clockevent"]
    many = [dict(r, type="extra_%02d" % i) for i, r in enumerate(recs[1:45])]
    a = write(tmp_path / "a.log", recs[:-1] + many + [dict(recs[-1], records=len(recs) + 43)])
    b = write(tmp_path / "b.log", fewer)
    _, out = compare(a, b)
    assert "only in [1]" in out and "more" in out
    assert "compare.csv" not in out
    _, out = compare(a, b, "-o", tmp_path / "cmp")
    assert "compare.csv has them all" in out


def test_a_row_both_runs_have_is_not_said_absent_for_one_key(tmp_path):
    """A row compared in both runs was then listed "only in [1]" because one of its keys
    (a newer kernel's) was in one run only."""
    base = small_run_records()
    at = next(i for i, r in enumerate(base) if r.get("exp") == "wakeup-latency"
              and "p99_ns" in r)
    newer = copy.deepcopy(base)
    newer[at]["new_key_ns"] = 5
    newer[at]["p99_ns"] = newer[at]["p99_ns"] + 500
    a, b = write(tmp_path / "a.log", base), write(tmp_path / "b.log", newer)
    _, out = compare(a, b)
    name = "device=%s path=%s wait=%s" % (base[at]["device"], base[at]["path"],
                                          base[at]["wait"])
    assert name in section(out, "changes beyond noise")[2]   # compared
    assert "%s: only in" % name not in out                    # and so not absent
    assert "absent: 0 row(s)" in out
    assert "keys in some runs only: 1 value(s)" in out


def test_runs_of_two_timing_modes_are_never_mixed_silently(real_logs, tmp_path):
    _, out = compare(real_logs["exact"], real_logs["plain"])
    warning = next(line for line in out.splitlines() if line.startswith("WARNING"))
    assert "different timing modes ([1] exact mode" in warning
    assert "[2] plain emulation (TCG" in warning
    code, out = compare(real_logs["exact"], real_logs["plain"], "-o", tmp_path / "cmp")
    assert "Warning: these runs were made in different timing modes" in parse_html(
        (tmp_path / "cmp" / "compare.html").read_text()).text
    _, same = compare(real_logs["plain"], real_logs["plain2"])
    assert "WARNING" not in same


def test_without_a_capture_record_the_kernels_own_record_decides_the_floor(real_logs,
                                                                         tmp_path):
    """Two plain-emulation runs without their capture records were judged as exact mode
    (36 % of values "beyond noise"), though each kernel's environment record said it ran
    in real time (virtual_time_likely false)."""
    import shutil
    logs = []
    for mode in ("plain", "plain2"):
        log = tmp_path / ("bare-%s.log" % mode)
        shutil.copy(str(real_logs[mode]), str(log))     # no .capture.json beside it
        logs.append(log)
    _, out = compare(*logs)
    floor = next(line for line in out.splitlines() if line.startswith("noise floor:"))
    assert floor.startswith("noise floor: plain emulation (TCG): timings move"), floor
    counts = out.splitlines()[-1]
    changed = float(counts.split("changed beyond noise (")[1].split(" %")[0])
    assert changed < 5, counts
