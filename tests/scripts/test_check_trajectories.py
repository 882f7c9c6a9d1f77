"""scripts/check_trajectories.py: the same run at two revisions is reported identical, a changed one is not."""
from __future__ import annotations

import subprocess
import sys

import pytest

from scripts.check_trajectories import _first_difference
from tests.conftest import REPO, cli_env


def test_first_difference_names_the_first_round_that_changed():
    a = [[1, {"x": 0.1}, 1.0, True], [2, {"x": 0.2}, 0.5, True]]
    assert _first_difference(a, [list(r) for r in a]) == "identical"
    assert _first_difference(a, [a[0], [2, {"x": 0.2}, 0.4, True]]) == "differs from round 2"
    assert _first_difference(a, a[:1]) == "differs in length (2 vs 1 rounds)"


@pytest.mark.cli
def test_against_head_reports_the_jobs_identical():
    if not (REPO / ".git").exists():
        pytest.skip("needs a git checkout (git archive)")
    proc = subprocess.run([sys.executable, "scripts/check_trajectories.py", "--only", "grid", "random",
                           "--against", "HEAD"], cwd=REPO, env=cli_env(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "grid " in proc.stdout and "# 2 of 2 jobs identical" in proc.stdout
