"""scripts/report_screenshot.py opens a report page in headless Chromium: a page whose figures decode gives a PNG,
one with a broken figure or without the heading is refused."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from check_ui import missing_tools

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools()))]

PNG = base64.b64encode(bytes.fromhex(  # a 1 x 1 PNG
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db0"
    "0000000049454e44ae426082")).decode()


def _shot(tmp_path, body: str) -> subprocess.CompletedProcess:
    page = tmp_path / "report.html"
    page.write_text(f"<html><head><title>hpoflow report</title></head><body>{body}</body></html>")
    return subprocess.run([sys.executable, str(REPO / "scripts" / "report_screenshot.py"), "--report", str(page),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300, check=False)


def test_a_rendered_page_gives_a_screenshot_of_its_pareto_figure(tmp_path):
    proc = _shot(tmp_path, f'<h2>Several objectives</h2><img alt="pareto_zdt1" src="data:image/png;base64,{PNG}">')
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "shown: pareto_zdt1" in proc.stdout
    assert (tmp_path / "out" / "report_pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_broken_figure_or_a_missing_heading_is_refused(tmp_path):
    proc = _shot(tmp_path, '<h2>Several objectives</h2><img alt="pareto_zdt1" src="data:image/png;base64,AAAA">')
    assert proc.returncode == 1 and "figures not decoded ['pareto_zdt1']" in proc.stderr
    proc = _shot(tmp_path, f'<h2>Runs</h2><img alt="pareto_zdt1" src="data:image/png;base64,{PNG}">')
    assert proc.returncode == 1 and "heading 'Several objectives' missing" in proc.stderr
