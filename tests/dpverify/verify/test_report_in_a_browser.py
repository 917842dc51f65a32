"""report.html in a real headless browser: it loads without errors, shows the verdict, every figure renders.

The browser is Chromium from the system's packages (``.ci/install-browser`` installs it where it can);
where none is installed the test is skipped with that reason. A probe script is added to a copy of the
page (the report itself has no script): on load it writes, into the DOM, the verdict shown, how many
images decoded (``naturalWidth > 0``) and every error event, and ``--dump-dom`` returns that DOM.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from verify_fixtures import report

from dpverify.verify.report import write_report
from dpverify.verify.result import REFUTED

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push(String(e.message || (e.target && (e.target.alt || e.target.src || e.target.tagName))));
}, true);
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var ok = images.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
  var h1 = document.querySelector("#verdict h1");
  var out = {images: images.length, rendered: ok.length, widths: ok.map(function (i) { return i.naturalWidth; }),
             verdict: h1 ? h1.textContent : null, visible: h1 ? h1.getBoundingClientRect().top : null,
             errors: window.__errors};
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.slow
def test_report_renders_in_a_headless_browser(tmp_path: Path) -> None:
    executable = browser()
    if executable is None:
        pytest.skip("no Chromium or Chrome on PATH (run .ci/install-browser to install Debian's chromium)")
    paths = write_report(report("refuted"), tmp_path / "report")
    page = paths["report.html"].read_text(encoding="utf-8")
    probe = tmp_path / "report" / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    command = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
               "--no-first-run", "--virtual-time-budget=10000", f"--user-data-dir={tmp_path / 'profile'}",
               "--dump-dom", probe.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    match = re.search(r'<pre id="render-check">(.*?)</pre>', done.stdout, re.S)
    assert match, f"the page did not finish loading (exit {done.returncode}): {done.stderr[-2000:]}"
    found = json.loads(html.unescape(match.group(1)))
    figures = sum(name.endswith(".png") for name in paths)
    assert found["errors"] == []
    assert found["verdict"] == REFUTED and 0 <= found["visible"] < 300  # the verdict is at the top
    assert found["images"] == figures == 4
    assert found["rendered"] == figures and all(width > 100 for width in found["widths"])


def test_install_browser_never_fails_ci(tmp_path: Path) -> None:
    """Without a browser and without apt-get, .ci/install-browser says so and exits 0."""
    script = Path(__file__).resolve().parents[3] / ".ci" / "install-browser"
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    done = subprocess.run([bash, str(script)], capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": str(tmp_path)})
    assert done.returncode == 0
    assert "browser test will be skipped" in done.stderr
