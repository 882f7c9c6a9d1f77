"""Secrets never leave the process: every line printed and every file written by a ``-m`` sweep against a
password-bearing store URI (Hydra's run files, the job logs, checkpoints, MLflow's database and artifacts)
is grepped for the password; ``python -m hpoflow.report`` against it fails fast in one line."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.cli
PASSWORD = "s3cretPW"


def _leaks(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]


def _run(cwd: Path, *args: str, module: str = "hpoflow") -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=600, check=False)


def test_a_sweep_against_a_dead_password_uri_prints_and_writes_no_password(tmp_path):
    proc = _run(tmp_path, "-m", "algo=random,gp_ei", "task=branin", "budget.rounds=2",
                f"tracking.uri=http://user:{PASSWORD}@127.0.0.1:9/")
    hits = (proc.stdout + proc.stderr).count(PASSWORD)
    print(f"\ndead-server sweep: exit {proc.returncode}; password printed {hits} times; files {_leaks(tmp_path)}")
    assert proc.returncode != 0 and "user:***@127.0.0.1" in proc.stderr
    assert hits == 0 and not _leaks(tmp_path)
    assert list(tmp_path.glob("outputs/multirun/*/*/*/.hydra/overrides.yaml"))  # the files that held it exist


def test_the_report_against_an_unreachable_password_uri_fails_fast_in_one_line(tmp_path):
    start = time.perf_counter()
    proc = _run(tmp_path, f"tracking.uri=http://user:{PASSWORD}@127.0.0.1:9/", module="hpoflow.report")
    elapsed = time.perf_counter() - start
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    print(f"\nreport on a dead server: exit {proc.returncode} after {elapsed:.1f} s: {lines}")
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("Error: tracking.uri=")
    assert PASSWORD not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert elapsed < 60  # the store is probed with the CLI's short retries (was 255 s of MLflow's defaults)


@pytest.mark.slow  # starts an MLflow server
def test_a_sweep_against_a_live_password_uri_leaks_it_nowhere(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                               "--workers", "1", "--backend-store-uri", f"sqlite:///{server_dir / 'db.sqlite'}",
                               "--artifacts-destination", str(server_dir / "artifacts")],
                              cwd=server_dir, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "mlflow server did not start"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                    break
            except OSError:
                time.sleep(1)
        work = tmp_path / "work"
        uri = f"http://user:{PASSWORD}@127.0.0.1:{port}/"
        proc = _run(work, "-m", "algo=random,gp_ei", "task=branin", "budget.rounds=2", f"tracking.uri={uri}")
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = _run(work, f"tracking.uri={uri}", "tracking.experiment=branin", "report.out=rep",
                      module="hpoflow.report")
        assert report.returncode == 0, report.stderr[-3000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
    printed = sum(p.stdout.count(PASSWORD) + p.stderr.count(PASSWORD) for p in (proc, report))
    leaks = _leaks(tmp_path)  # run folders, Hydra files, logs, checkpoints, the report, the server's db + artifacts
    print(f"\nlive-server sweep + report: password printed {printed} times; files holding it: {leaks}")
    assert "View run" not in proc.stdout and f"user:***@127.0.0.1:{port}/#/experiments/" in proc.stdout
    assert printed == 0 and not leaks
