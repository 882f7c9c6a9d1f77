"""SIGTERM to a sweep whose jobs run in worker processes (hydra/launcher=joblib, submitit_local): the workers stop,
their runs and the study's parent are KILLED, one line, exit 143, nothing left running, and the same command resumes
them. (The basic launcher: tests/cli/test_run_guarantees_cli.py; Ray: tests/cluster/test_ray_launcher.py.)"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from hpoflow.core.checkpoint import FILENAME
from hpoflow.store.sweep_signals import stop_descendants
from tests.cli.test_failures_cli import FAULTY, faulty_env
from tests.conftest import mlflow_runs

SWEEP = ["task=faulty", "task.delay=0.15", "algo=random", "budget.rounds=12", "seed=0,1,2", "tracking.flush_every=1"]
LAUNCHERS = {"joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
             "submitit_local": ["hydra/launcher=submitit_local"]}  # submitit: every job at once


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


@pytest.mark.cli
@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_sigterm_stops_a_process_launchers_sweep_and_its_workers_and_a_rerun_resumes(tmp_path: Path, new_store,
                                                                                     launcher: str) -> None:
    if launcher == "submitit_local":
        pytest.importorskip("submitit", reason="the cluster extra")
    uri = new_store("m.db")
    args = [sys.executable, "-m", "hpoflow", "--config-dir", str(FAULTY / "conf"), "-m", *LAUNCHERS[launcher],
            *SWEEP, f"tracking.uri={uri}"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=faulty_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.time() + 300
    while len(list(tmp_path.glob(f"outputs/multirun/*/*/*/{FILENAME}"))) < 2 and time.time() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.1)  # both workers are inside a job, each with a round logged
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers
    start = time.time()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    took = time.time() - start
    print(f"\n{launcher}: exit {proc.returncode} after {took:.1f} s; {_errors(stderr)}; {stdout.splitlines()[-1:]}")
    assert proc.returncode == 143 and "Traceback" not in stderr and took < 30, stderr[-3000:]
    assert len(_errors(stderr)) == 1 and _errors(stderr)[0].startswith("Error: interrupted by SIGTERM (signal 15)")
    time.sleep(1)
    assert not [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    runs = mlflow_runs(uri, parents=True)
    assert len(runs) >= 3 and {r.info.status for r in runs} == {"KILLED"}, [(r.info.status, r.data.tags) for r in runs]
    killed = len(runs) - 1  # the study's parent is one of them
    assert f"{killed} killed (a re-run of the same command resumes them)" in stdout

    again = subprocess.run(args, cwd=tmp_path, env=faulty_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{killed} resumed, {3 - killed} new" in again.stdout and "killed" not in again.stdout, again.stdout[-2000:]
    runs = mlflow_runs(uri, parents=True)
    assert len(runs) == 4 and {r.info.status for r in runs} == {"FINISHED"}


def test_stop_descendants_ends_children_and_kills_one_that_ignores_sigterm() -> None:
    ignoring = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); "
                "time.sleep(60)")
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stubborn = subprocess.Popen([sys.executable, "-c", ignoring], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout is not None and stubborn.stdout.readline().strip() == "1"  # its handler is set
    start = time.time()
    assert stop_descendants(grace_s=1.0) == [stubborn.pid]
    for child in (polite, stubborn):  # reaped by psutil: Popen sees them gone
        assert child.wait(timeout=5) is not None and not psutil.pid_exists(child.pid)
    assert time.time() - start < 10
