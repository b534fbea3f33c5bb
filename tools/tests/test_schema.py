"""The keys the kernel and the host share: every result-row key a host experiment module
reads or shows (its row keys, columns, figure and check keys, published figures' keys) is
one the kernel's file for that experiment emits, and the two registries list the same
experiments in the same order. No QEMU: the kernel's C is read as text.

A key the kernel emits is a string literal as the second argument of a json_<kind>() call
(json_str(&r.j, "mode", ...), json_u64(j, "cpu", ...)), or one key per field of a
json_stats(j, "late_%s_ns", "min p50 p99 max", &st) call.
"""
import os
import re

import pytest

from ticklablib import experiments

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL_EXP = os.path.join(REPO, "kernel", "exp")

# Files whose keys any experiment's result row may carry (the harness begins every row).
SHARED_FILES = ("kernel/exp/harness.c",)
# Helpers outside kernel/exp that write some of one experiment's keys, by its file's name.
HELPER_FILES = {"tsc_sync": ("kernel/checks/tsc_warp.c",)}
REGISTRY_FILE = "kernel/exp/registry.c"

STATS_FIELDS = ("min", "median", "p50", "p90", "p99", "p999", "max", "mean", "stddev")
# json_<kind>(EXPR, "key" ...: EXPR is one argument (&r.j, j, &r->j), no comma in it
JSON_CALL = re.compile(r'\bjson_(\w+)\s*\(\s*[^,;]*?,\s*"((?:[^"\\]|\\.)*)"'
                       r'(?:\s*,\s*"((?:[^"\\]|\\.)*)")?', re.S)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def emitted_keys(c_text):
    """The keys a kernel C file emits (comments ignored)."""
    keys = set()
    for kind, key, second in JSON_CALL.findall(COMMENT.sub(" ", c_text)):
        if kind == "stats":
            fields = (second or "").split()
            bad = [f for f in fields if f not in STATS_FIELDS]
            assert key.count("%s") == 1 and not bad, \
                "json_stats(%r, %r): one %%s, fields from %s" % (key, second, STATS_FIELDS)
            keys.update(key.replace("%s", f) for f in fields)
        elif not kind.startswith("elem"):  # array elements carry no key
            keys.add(key)
    return keys


def read(relpath):
    with open(os.path.join(REPO, relpath), encoding="utf-8") as f:
        return f.read()


def kernel_file(exp):
    return "kernel/exp/%s.c" % exp.name.replace("-", "_")


def kernel_keys(exp):
    """Every key a result row of `exp` may carry: its own file's, its helpers', and the
    shared files'."""
    stem = exp.name.replace("-", "_")
    files = (kernel_file(exp),) + HELPER_FILES.get(stem, ()) + SHARED_FILES
    return set().union(*(emitted_keys(read(f)) for f in files))


def missing_keys(exp, emitted):
    """The keys the host module reads that are not in `emitted`."""
    return [k for k in exp.keys_read() if k not in emitted]


@pytest.mark.parametrize("exp", experiments.EXPERIMENTS, ids=lambda e: e.name)
def test_every_key_the_host_reads_is_one_the_kernel_emits(exp):
    missing = missing_keys(exp, kernel_keys(exp))
    assert not missing, "%s reads keys %s emits nowhere (nor %s)" % (
        exp.name, kernel_file(exp), ", ".join(SHARED_FILES)) + ": %s" % missing


def kernel_registry_names():
    """The kernel's experiment names in its registry's order: the exp_<x> objects of
    registry.c's table, each named by `.name = "..."` in the kernel/exp file defining it."""
    table = re.search(r"registry\[\]\s*=\s*\{(.*?)\}", read(REGISTRY_FILE), re.S).group(1)
    names = {}
    for f in sorted(os.listdir(KERNEL_EXP)):
        if f.endswith(".c"):
            text = read("kernel/exp/" + f)
            for obj, name in re.findall(r"\bstruct\s+experiment\s+(exp_\w+)\s*=\s*\{[^;]*?"
                                        r"\.name\s*=\s*\"([^\"]+)\"", text, re.S):
                names[obj] = name
    return [names.get(obj, "(no .name for %s)" % obj)
            for obj in re.findall(r"&(exp_\w+)", table)]


def test_the_host_and_the_kernel_list_the_same_experiments_in_one_order():
    assert [e.name for e in experiments.EXPERIMENTS] == kernel_registry_names()


def kernel_row_keys(exp):
    """The `.rows = "..."` of the experiment's object in its kernel file, as a tuple."""
    m = re.search(r"\bstruct\s+experiment\s+exp_\w+\s*=\s*\{[^;]*?\.rows\s*=\s*"
                  r"\"([^\"]*)\"", read(kernel_file(exp)), re.S)
    return tuple(m.group(1).split()) if m else None


@pytest.mark.parametrize("exp", experiments.EXPERIMENTS, ids=lambda e: e.name)
def test_the_keys_that_name_a_row_are_the_same_on_both_sides(exp):
    assert kernel_row_keys(exp) == tuple(exp.row_keys), \
        "%s: the kernel's .rows against the host module's row_keys" % exp.name


# --- the checker itself ------------------------------------------------------------------

SYNTHETIC = r'''
static void emit(struct rec *r, const struct stats *st)
{
    json_str(&r->j, "mode", "spin");   /* json_u64(j, "commented_out", 1) */
    json_u64(j,
             "cpu", 3);
    json_stats(&r->j, "late_%s_ns", "min p50 p99 max", st);
    json_elem_u64(&r->j, 7);
}
'''


def test_the_parser_reads_plain_calls_multiline_calls_and_json_stats():
    assert emitted_keys(SYNTHETIC) == {"mode", "cpu", "late_min_ns", "late_p50_ns",
                                       "late_p99_ns", "late_max_ns"}


def test_a_key_the_kernel_no_longer_emits_is_caught():
    """A kernel file without one of the keys the host reads: the checker names it."""
    exp = experiments.get("percpu-latency")
    renamed = read(kernel_file(exp)).replace('"p99_ns"', '"p99_renamed_ns"')
    renamed = renamed.replace('"min p50 p99 max"', '"min p50 p90 max"')
    assert renamed != read(kernel_file(exp))
    emitted = emitted_keys(renamed) | emitted_keys(read(SHARED_FILES[0]))
    assert missing_keys(exp, emitted) == ["p99_ns"]


def test_a_key_the_host_renames_is_caught():
    exp = experiments.get("hwlat")
    renamed = experiments.spec.Experiment(exp.name, exp.title, exp.row_keys, exp.about,
                                          columns=exp.columns + ("max_gap_us",))
    assert missing_keys(renamed, kernel_keys(exp)) == ["max_gap_us"]


def test_a_stats_key_list_is_expanded_and_checked():
    with pytest.raises(AssertionError):
        emitted_keys('json_stats(j, "late_ns", "min max", &st);')
    with pytest.raises(AssertionError):
        emitted_keys('json_stats(j, "late_%s_ns", "min p98", &st);')
