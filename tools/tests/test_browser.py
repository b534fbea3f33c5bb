"""The report page as a reader sees it: headless Chromium (Debian's chromium) loads the page
from disk and a probe script, added to a copy of the page, records what the reader would
see once it is laid out: every figure decoded at a visible size and captioned with its
clock, the summary above everything else, and no table cut off at the page's edge (a
table wider than the page scrolls inside its own box)."""
import json
import re
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(scripts/setup-deps.sh installs Debian's chromium)")

PROBE = """<script>
window.addEventListener("load", function () {
  function box(el) { var b = el.getBoundingClientRect();
                     return {top: Math.round(b.top + window.scrollY),
                             left: Math.round(b.left), right: Math.round(b.right),
                             width: Math.round(b.width), height: Math.round(b.height)}; }
  var images = Array.from(document.images).map(function (img) {
    var fig = img.closest("figure");
    return Object.assign(box(img), {alt: img.alt, complete: img.complete,
      natural: img.naturalWidth, caption: fig ? fig.querySelector("figcaption").textContent : "",
      visible: getComputedStyle(img).visibility === "visible" &&
               getComputedStyle(img).display !== "none"});
  });
  var tables = Array.from(document.querySelectorAll("table")).filter(function (t) {
    return t.offsetParent !== null;           // laid out (not inside a closed <details>)
  }).map(function (t) {
    var holder = t.parentElement;
    return {width: t.scrollWidth, holder: holder.className, holderWidth: holder.clientWidth,
            overflow: getComputedStyle(holder).overflowX, right: box(holder).right};
  });
  var ids = {};
  ["answer", "summary", "latency", "verdict", "experiments", "inventory"].forEach(function (id) {
    var el = document.getElementById(id); if (el) ids[id] = box(el); });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({images: images, tables: tables, ids: ids,
    page: document.documentElement.scrollWidth, view: window.innerWidth,
    inventoryOpen: document.getElementById("inventory").open});
  document.body.appendChild(out);
});
</script>"""


def probe(html, tmp_path, width=1280):
    """Load a copy of the page with the probe added; returns its facts."""
    page = tmp_path / "probe.html"  # a copy: the report itself has no script
    page.write_text(html.replace("</body>", PROBE + "</body>"))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--user-data-dir=%s" % (tmp_path / "profile"), "--virtual-time-budget=10000",
           "--window-size=%d,900" % width, "--dump-dom", page.as_uri()]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout.decode(), re.S)
    assert found, "the probe did not run: %s" % p.stdout.decode()[-500:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")
                      .replace("&lt;", "<").replace("&gt;", ">"))


@pytest.fixture(scope="module")
def page(full_report, tmp_path_factory):
    """The full run's page (conftest.full_report: it holds a record far wider than any
    screen) and a folder for the browser's files."""
    out, _, _ = full_report
    return (out / "report.html").read_text(), tmp_path_factory.mktemp("browser")


def test_every_figure_decoded_visible_and_naming_its_clock(page):
    html, tmp = page
    facts = probe(html, tmp)
    assert len(facts["images"]) == 16
    for img in facts["images"]:
        assert img["complete"] and img["natural"] == 1340, img   # the PNG decoded
        # shown at the body's width (1280 px window: the body is narrower than a figure)
        assert img["visible"] and img["width"] >= 1150 and img["height"] >= 200, img
        # its clock is under its own axes (the SVG text says so: test_report.py), once
        assert "Clock: " not in img["caption"] and "clock: " not in img["caption"], img
    # the probe can tell: the same page with one figure's bytes broken shows it undecoded
    broken = probe(html.replace("base64,iVBOR", "base64,AAAAA", 1), tmp)
    assert broken["images"][0]["natural"] == 0
    assert all(i["natural"] == 1340 for i in broken["images"][1:])


def test_the_answer_comes_first_then_the_summary_and_inventory_is_folded(page):
    html, tmp = page
    facts = probe(html, tmp)
    ids = facts["ids"]
    assert ids["answer"]["top"] < 200  # right under the title
    assert ids["answer"]["top"] < ids["summary"]["top"] < ids["latency"]["top"] \
        < ids["verdict"]["top"] < ids["experiments"]["top"] < ids["inventory"]["top"]
    assert facts["inventoryOpen"] is False
    # the first figure is every device's on shared axes, inside the answer; the others
    # come after the verdict
    first = min(facts["images"], key=lambda i: i["top"])
    assert first["alt"] == "Every device on shared axes", first
    assert ids["answer"]["top"] < first["top"] < ids["summary"]["top"]
    rest = [i for i in facts["images"] if i is not first]
    assert min(i["top"] for i in rest) > ids["verdict"]["top"]


@pytest.mark.parametrize("width", [1280, 800])
def test_no_table_is_cut_at_the_page_edge(page, width):
    html, tmp = page
    facts = probe(html, tmp, width)
    assert facts["page"] <= facts["view"], "the page itself scrolls sideways"
    wide = [t for t in facts["tables"] if t["width"] > t["holderWidth"]]
    assert wide, "the wide record should make at least one table wider than its box"
    for t in facts["tables"]:
        assert t["right"] <= facts["view"], t
        if t["width"] > t["holderWidth"]:
            assert t["holder"] == "scroll" and t["overflow"] in ("auto", "scroll"), t


# --- the real quick runs' pages as a reader sees them at 1400 x 900 -----------

SCREEN_W, SCREEN_H = 1400, 900
REAL_PROBE = """<script>
window.addEventListener("load", function () {
  function box(el) { var b = el.getBoundingClientRect();
                     return {top: Math.round(b.top + window.scrollY), left: Math.round(b.left),
                             right: Math.round(b.right)}; }
  var pubs = Array.from(document.querySelectorAll("th.pub, td.pub")).map(function (c) {
    var holder = c.closest(".scroll");
    return Object.assign(box(c), {text: c.textContent,
      holderScrolls: holder ? holder.scrollWidth > holder.clientWidth : false});
  });
  var cal = document.getElementById("calibration");
  function full(el) { if (!el) return null; var b = el.getBoundingClientRect();
    return {top: Math.round(b.top + window.scrollY), bottom: Math.round(b.bottom + window.scrollY),
            left: Math.round(b.left), right: Math.round(b.right), text: el.innerText}; }
  var leads = Array.from(document.querySelectorAll("table.answer tr.lead")).map(full);
  var overview = document.querySelector("#fig-overview_latency img");
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({pubs: pubs, page: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight, view: window.innerWidth,
    experimentsEnd: cal ? box(cal).top : null, text: document.body.innerText,
    leads: leads, overview: full(overview), env: full(document.querySelector(".envline")),
    verdict: full(document.getElementById("verdict")),
    overviewWidth: overview ? overview.naturalWidth : 0});
  document.body.appendChild(out);
});
</script>"""


def probe_real(html, tmp_path):
    page = tmp_path / "probe.html"
    page.write_text(html.replace("</body>", REAL_PROBE + "</body>"))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--hide-scrollbars", "--user-data-dir=%s" % (tmp_path / "profile"),
           "--virtual-time-budget=10000", "--window-size=%d,%d" % (SCREEN_W, SCREEN_H),
           "--dump-dom", page.as_uri()]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout.decode(), re.S)
    assert found, p.stdout.decode()[-500:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")
                      .replace("&lt;", "<").replace("&gt;", ">"))


def screenshot(page, path, height):
    """A full-page screenshot 1400 px wide (TICKLAB_SCREENSHOTS=DIR keeps a copy there)."""
    import os
    import tempfile
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--hide-scrollbars",
           "--user-data-dir=%s" % tempfile.mkdtemp(prefix="ticklab-shot-"),
           "--screenshot=%s" % path, "--window-size=%d,%d" % (SCREEN_W, height), page.as_uri()]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0 and path.exists(), p.stderr.decode()[-2000:]
    keep = os.environ.get("TICKLAB_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(str(path), os.path.join(keep, path.name))
    return path


@pytest.mark.parametrize("mode", ["exact", "plain"])
def test_real_quick_run_page_at_1400(mode, real_reports, tmp_path):
    """The report of a quick exact-mode run and of a quick plain-emulation run, at 1400 x
    900: no raw TeX anywhere (the page's text here; every figure's SVG text in
    test_rendering.py), every published cell visible without scrolling sideways, and the
    page down to the end of the experiments shorter than 13 screens (the answer's
    screen with its overview figure comes first, the p99.9 column and the quoted sources
    below)."""
    from pages import png_size
    out, _ = real_reports[mode]
    html = (out / "report.html").read_text()
    facts = probe_real(html, tmp_path)
    assert "mathdefault" not in facts["text"] and "$\\" not in facts["text"]
    assert facts["page"] <= SCREEN_W, "the page scrolls sideways"
    assert len(facts["pubs"]) > 10, "no published column found"
    for cell in facts["pubs"]:
        assert cell["right"] <= SCREEN_W and not cell["holderScrolls"], cell
    assert facts["experimentsEnd"] is not None
    assert facts["experimentsEnd"] < 13 * SCREEN_H, facts["experimentsEnd"]
    # the answer on the first screen: the environment in one line, the chosen clock event
    # device and clocksource with their figures, and every device on shared axes
    env, leads, fig = facts["env"], facts["leads"], facts["overview"]
    assert env and env["bottom"] - env["top"] < 30 and env["bottom"] < 150, env
    assert [l["text"].split("\t")[0] for l in leads] == [
        "Which timer (clock event device)", "Which clock (clocksource)"], leads
    assert all(l["bottom"] <= SCREEN_H for l in leads), leads
    assert "p50" in leads[0]["text"] and "p99" in leads[0]["text"] \
        and "max" in leads[0]["text"], leads[0]
    assert fig is not None and fig["bottom"] <= SCREEN_H, fig
    assert fig["right"] - fig["left"] >= 1300 and facts["overviewWidth"] == 1340, fig
    assert facts["verdict"]["top"] > SCREEN_H  # everything else below
    shot = screenshot(out / "report.html", tmp_path / ("report-quick-%s-1400.png" % mode),
                      facts["height"])
    assert png_size(shot.read_bytes())[0] == SCREEN_W
