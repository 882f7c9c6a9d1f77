"""The MLflow UI, clicked through in a real (headless) browser the way the README says, shows a small sweep."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

sys.path.insert(0, str(REPO / "scripts"))
from check_ui import missing_tools

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools()))]


def test_mlflow_ui_shows_the_study_with_its_nested_runs_and_metrics_in_headless_chromium(tmp_path):
    out = tmp_path / "ui"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_ui.py"), "--out", str(out)],
                          cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    overview = (out / "overview.txt").read_text()  # what MLflow 3.x opens an experiment on (README step 2)
    assert "Overview" in overview and "Traces" in overview and "Model training" in overview
    table = (out / "runs.txt").read_text()  # README step 3: the runs table, the study expanded (its 4 runs)
    assert "study ui_check" in table and "5 matching runs" in table
    assert all(f"{a}-branin-s{s}" in table for a in ("random", "gp_ei") for s in (0, 1))
    assert "cumulative_regret" in (out / "charts.txt").read_text()
    run = (out / "run.txt").read_text()
    assert "Parent run" in run and "study ui_check" in run
    artifacts = (out / "artifacts.txt").read_text()
    assert all(name in artifacts for name in ("config.yaml", "summary.json", "trajectory.csv"))
    study = (out / "study.txt").read_text()
    assert "hpoflow.runs.finished" in study and "Child runs" in study and "random-branin-s0" in study
    for png in ("overview.png", "runs.png", "charts.png", "run.png", "artifacts.png", "study.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
