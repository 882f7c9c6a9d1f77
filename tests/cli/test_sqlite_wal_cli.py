"""A CLI study leaves its SQLite store checkpointed (issue 42): session 15 briefly froze the CLI's heap with
``gc.freeze`` to save ~0.03 CPU s per run; a frozen SQLite connection then kept its read transaction open, the
store's WAL file was never reset (a 2-job study of 2 rounds left 4 MB of it) and on a nearly full disk the run's
FAILED status could no longer be written. The freeze is gone; this holds it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import cli_env


@pytest.mark.cli
def test_a_cli_study_leaves_the_sqlite_store_checkpointed(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    proc = subprocess.run([sys.executable, "-m", "hpoflow", "-m", "task=branin", "algo=random", "budget.rounds=2",
                           "seed=0,1", f"tracking.uri={uri}"], cwd=tmp_path, env=cli_env(), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wal = tmp_path / "m.db-wal"
    assert not wal.exists() or wal.stat().st_size < 1_000_000
