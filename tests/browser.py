"""Headless Chromium for the browser tests (report.html, the documentation site): open a page over
file:// with a probe script added, let the page's scripts run, and read back what the probe found.

The probe is a ``<script>`` that, once the page has done its work, appends ``<pre id="probe">``
holding a JSON object; Chromium's ``--dump-dom`` prints the document, and ``probe`` parses it.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="no Chromium on PATH (Debian: apt-get install chromium; .ci/browser-up)"
)


def probe(page: str, script: str, probed: Path, profile: Path, *, budget_ms: int = 10_000) -> dict:
    """Write ``page`` (HTML) with ``script`` before ``</body>`` to ``probed``, open it in headless
    Chromium (profile folder ``profile``, ``budget_ms`` of virtual time for the page's scripts) and
    return the probe's JSON object; fails the test when Chromium fails or the probe did not run."""
    probed.write_text(page.replace("</body>", script + "</body>"))
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            "--dump-dom",
            probed.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', done.stdout, flags=re.S)
    assert found, f"{probed.name}: the page's probe did not run: {done.stderr[-1500:]}"
    return json.loads(html.unescape(found.group(1)))
