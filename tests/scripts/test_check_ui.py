"""The MLflow UI in a real (headless) browser lists the runs of a small sweep and shows their metrics."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

sys.path.insert(0, str(REPO / "scripts"))
from check_ui import find_chromium

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(find_chromium() is None, reason="no Chromium (apt-get install -y chromium)")]


def test_mlflow_ui_shows_the_study_with_its_nested_runs_and_metrics_in_headless_chromium(tmp_path):
    out = tmp_path / "ui"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_ui.py"), "--out", str(out)],
                          cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (out / "runs.txt").read_text()
    assert "study ui_check" in table and "5 matching runs" in table  # the parent; its 4 runs nested under it
    study = (out / "study.txt").read_text()
    assert "hpoflow.runs.finished" in study and "Child runs" in study and "random-branin-s0" in study
    assert "Parent run" in (out / "run.txt").read_text() and "study ui_check" in (out / "run.txt").read_text()
    assert "cumulative_regret" in (out / "charts.txt").read_text()
    for png in ("runs.png", "charts.png", "run.png", "study.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
