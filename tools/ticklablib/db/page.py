"""`db report`: one page across machines.

One row per machine (identity, runs, last run, its clock event device's p99 with the
interval the verdict gave, how far the TSC's calibration references disagreed, the HPET
and TSC-deadline verdicts, errata, problems), then for each kind of figures (exact mode,
emulation, KVM, hardware: never mixed in one figure) the p99 of every clock event device by
machine (each machine's latest run of that kind, with its interval), and each machine's
history: its chosen device's p99 run after run. Written like `report`'s folder: built
fresh, moved into place when whole, replaced only with --force.
"""

import os

from .. import htmlpage
from ..outdir import Fresh, OutdirError  # noqa: F401  (OutdirError: the caller's)
from . import identity, query

MODE_WORDS = {
    "exact": "exact mode (QEMU -icount): instruction counts, repeatable",
    "emulation": "plain emulation (QEMU TCG): the host's noise",
    "kvm": "KVM guests: real time with VM exits",
    "hardware": "real hardware",
    "other-vm": "other virtual machines",
    "unknown": "unknown kind (no capture record, and the kernel named no hypervisor)",
}
MODE_ORDER = tuple(MODE_WORDS)
HISTORY_MACHINES = 12   # lines in one history figure; the table lists every machine


def _machine_table(found):
    return htmlpage.plain_table(query.MACHINE_HEADER, [query.machine_line(m) for m in found],
                                numeric=(0, 4))


def _identity_table(found):
    rows = []
    for m in found:
        ident = m.identity
        cpu = ident.get("cpu") or {}
        rows.append([str(m.id), m.name, _words(ident.get("system")),
                     _words(ident.get("baseboard")), identity.firmware(ident),
                     "%s family %s model %s stepping %s" % (cpu.get("brand") or cpu.get(
                         "vendor") or "?", cpu.get("family"), cpu.get("model"),
                         cpu.get("stepping")),
                     m.hardware_key[:8] if m.hardware_key else "-", ident.get("basis") or "-"])
    return htmlpage.plain_table(["#", "machine", "system", "baseboard", "firmware", "cpu",
                                 "hardware key", "identified by"], rows, numeric=(0,))


def _words(obj):
    return " ".join(str(v) for v in (obj or {}).values() if v) or "-"


def _modes(found):
    seen = {r["mode"] for m in found for r in m.runs}
    return [mode for mode in MODE_ORDER if mode in seen] + sorted(seen - set(MODE_ORDER))


def _figures(db, found, outdir):
    """[(mode, [plots.Plot-like])] or the reason none were drawn."""
    try:
        from . import figures
    except ImportError as e:
        return [], "figures not drawn: python3-matplotlib is not installed (%s)" % e
    out = []
    for mode in _modes(found):
        latest = [(m, m.latest(mode)) for m in found if m.latest(mode)]
        ivs = query.intervals(db, [r["id"] for _, r in latest])
        drawn = [figures.p99_by_machine(mode, latest, ivs, outdir),
                 figures.history(mode, found, outdir, HISTORY_MACHINES)]
        out.append((mode, [d for d in drawn if d]))
    return out, None


def _same_hardware(found):
    groups = {}
    for m in found:
        groups.setdefault(m.hardware_key, []).append(m)
    rows = [[", ".join("%d %s" % (m.id, m.name) for m in ms),
             "; ".join(identity.firmware(m.identity) for m in ms)]
            for ms in groups.values() if len(ms) > 1]
    if not rows:
        return ""
    return ("<h2>One PC, several firmware versions</h2><p class=\"note\">Machines whose "
            "hardware is the same and whose BIOS or microcode differ (each is its own machine "
            "above).</p>" + htmlpage.plain_table(["machines", "firmware"], rows))


def body(db, found, outdir):
    counts = query.counts(db)
    parts = ["<h1>ticklab: %d machine(s), %d run(s)</h1>" % (len(found), counts["runs"]),
             "<p class=\"note\">database %s; %d capture file(s), %d record(s). Each row: the "
             "machine's last run. Timing modes are never mixed in one figure.</p>" % (
                 htmlpage.esc(db.shown), counts["logs"], counts["records"]),
             "<h2>Machines</h2>", _machine_table(found),
             htmlpage.details("Identities", [_identity_table(found)])]
    parts.append(_same_hardware(found))
    figs, why = _figures(db, found, outdir)
    if why:
        parts.append("<p class=\"note\">%s</p>" % htmlpage.esc(why))
    for mode, plots in figs:
        parts.append("<h2>%s</h2>" % htmlpage.esc(MODE_WORDS.get(mode, mode)))
        parts.append(htmlpage.figures(plots, "plots/", "fig-%s-" % mode) if plots else
                     "<p class=\"note\">no run of this kind measured a clock event device's "
                     "p99</p>")
    return parts


def write(db, out, force):
    """Writes the page into `out` (fresh); returns the page's absolute path."""
    found = query.machines(db)
    with Fresh(out, force) as tmp:
        os.makedirs(os.path.join(tmp, "plots"))
        parts = body(db, found, os.path.join(tmp, "plots"))
        with open(os.path.join(tmp, "db-report.html"), "w", encoding="utf-8") as f:
            f.write(htmlpage.page("ticklab: machines", parts))
    return os.path.join(os.path.abspath(out), "db-report.html")
