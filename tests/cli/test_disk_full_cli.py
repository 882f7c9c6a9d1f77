"""A full disk under the SQLite store: one line, exit 1, the run FAILED with what it logged, and an exact resume
once space is freed (a small tmpfs; skipped where this process cannot mount one)."""
from __future__ import annotations

import errno
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.store.health import disk_full
from tests.conftest import cli_env, mlflow_runs


def test_disk_full_is_told_from_its_causes():
    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError as exc:
            raise RuntimeError("(sqlite3.OperationalError) ...") from exc
    except RuntimeError as exc:
        assert disk_full(exc)
    assert disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert not disk_full(OSError(errno.EACCES, "Permission denied")) and not disk_full(ValueError("full"))


@pytest.fixture
def small_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20M", "tmpfs", str(mount)],
                                                       capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hpoflow", *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=600)


@pytest.mark.cli
def test_a_full_disk_under_the_store_is_one_line_and_the_run_resumes_exactly(tmp_path: Path, small_disk: Path):
    uri = f"sqlite:///{small_disk / 'm.db'}"
    assert _cli(tmp_path, "task=branin", "algo=random", "budget.rounds=2", f"tracking.uri={uri}").returncode == 0
    free = shutil.disk_usage(small_disk).free
    (small_disk / "filler").write_bytes(b"\0" * (free - 150_000))  # ~150 kB left: a few hundred rounds
    args = ["task=branin", "algo=random", "budget.rounds=1500", "seed=1", "tracking.flush_every=1",
            f"tracking.uri={uri}"]
    full = _cli(tmp_path, *args)
    lines = [ln for ln in full.stderr.splitlines() if ln.strip() and " INFO " not in ln]
    print(f"\nfull disk: exit {full.returncode}, {len(lines)} line(s): {lines[:1]}")
    assert full.returncode == 1 and len(lines) == 1 and "Traceback" not in full.stderr, full.stderr[-3000:]
    assert lines[0].startswith("Error: run failed: the disk is full") and "resume=" in lines[0]
    (run,) = [r for r in mlflow_runs(uri) if r.data.params.get("seed") == "1"]
    assert run.info.status == "FAILED"

    (small_disk / "filler").unlink()
    resumed = _cli(tmp_path, f"resume={lines[0].split('resume=')[1].split()[0]}", f"tracking.uri={uri}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    steps = [m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run.info.run_id, "value")]
    assert sorted(steps) == list(range(1, 1501))
