"""The report page as a browser shows it: headless Chromium (Debian's chromium) loads the
page from disk and a probe script, added to a copy of the page, records what each figure
looks like once loaded. Every figure must be decoded and laid out at a visible size."""
import json
import os
import re
import shutil
import subprocess

import pytest

from fullrun import full_run_bytes
from ticklablib import plots

TICKLAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ticklab")
CHROMIUM = shutil.which("chromium")

PROBE = """<script>
window.addEventListener("load", function () {
  var shown = Array.from(document.images).map(function (img) {
    var box = img.getBoundingClientRect();
    return {alt: img.alt, complete: img.complete, natural: img.naturalWidth,
            width: Math.round(box.width), height: Math.round(box.height),
            visible: getComputedStyle(img).visibility === "visible" &&
                     getComputedStyle(img).display !== "none"};
  });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(shown);
  document.body.appendChild(out);
});
</script>"""


def render_dom(page, tmp_path):
    """The DOM of `page` after load, as headless Chromium sees it."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--user-data-dir=%s" % (tmp_path / "profile"), "--virtual-time-budget=10000",
           "--window-size=1280,900", "--dump-dom", page.as_uri()]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return p.stdout.decode()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                    "(scripts/setup-deps.sh installs Debian's chromium)")
def test_chromium_shows_every_plot(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(full_run_bytes())
    out = tmp_path / "rep"
    subprocess.run([TICKLAB, "report", str(log), "-o", str(out)], check=True,
                   capture_output=True, timeout=120)
    html = (out / "report.html").read_text()
    shown, text = probe(html, tmp_path)
    assert [s["alt"] for s in shown] == [
        "Calibration disagreement per method", "hrtimer against jiffies timer",
        "Periodic jitter distributions", "Interval timer error",
        "Sleep error against requested time per tick size", "Tick overhead against tick size",
        "Wakeup latency histograms per device"]
    assert len(shown) == len(plots.FIGURES)
    for s in shown:
        assert s["complete"] and s["natural"] == 750, s   # the PNG decoded
        assert s["visible"] and s["width"] >= 400 and s["height"] >= 200, s  # laid out
    assert "Capture integrity" in text and "Sleep accuracy" in text

    # The probe can tell: the same page with one figure's bytes broken shows it undecoded.
    broken = html.replace("base64,iVBOR", "base64,AAAAA", 1)
    shown, _ = probe(broken, tmp_path)
    assert shown[0]["natural"] == 0 and all(s["natural"] == 750 for s in shown[1:])


def probe(html, tmp_path):
    """Load a copy of the page with the probe added; returns (per-image facts, text)."""
    page = tmp_path / "probe.html"  # a copy: the report itself has no script
    page.write_text(html.replace("</body>", PROBE + "</body>"))
    dom = render_dom(page, tmp_path)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run: %s" % dom[-500:]
    shown = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return shown, re.sub(r"<[^>]+>", " ", dom)
