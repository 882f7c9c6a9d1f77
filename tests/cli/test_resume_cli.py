"""Crash and resume through the real CLI: SIGKILL at a random round, resume, compare with an uninterrupted run."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.checkpoint import FILENAME
from hpoflow.store.resume import locate
from tests.cli_server import WarmProcess, fresh_interpreter_wanted, warm_server
from tests.conftest import cli_env, mlflow_runs

pytestmark = pytest.mark.cli  # kills and resumes python -m hpoflow in a subprocess (make test-fast skips it)

ROUNDS = 8
ARGS = ["algo=gp_ei", "algo.n_init=3", "algo.optimizer.raw_samples=64", "algo.optimizer.num_restarts=2",
        "surrogate.max_iter=30", "task=branin", "task.noise_std=0.5", f"budget.rounds={ROUNDS}",
        "tracking.flush_every=4", "seed=1"]
KEYS = ("value", "best_value", "regret", "cumulative_regret", "simple_regret", "query_cost")


def _start(cwd: Path, *args: str) -> subprocess.Popen | WarmProcess:
    """``python -m hpoflow *args`` started in ``cwd`` (forked from the warm server; see tests/cli_server.py)."""
    cwd.mkdir()
    if fresh_interpreter_wanted():
        return subprocess.Popen([sys.executable, "-m", "hpoflow", *args], cwd=cwd, env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return warm_server(cli_env()).popen("hpoflow", list(args), cwd)


def _checkpoint_round(cwd: Path) -> int:
    for path in cwd.glob(f"outputs/runs/*/*/{FILENAME}"):
        try:
            return int(json.loads(path.read_text())["round"])
        except Exception:  # noqa: BLE001 - a missing file between polls
            return 0
    return 0


def _history(uri: str) -> tuple:
    (run,) = mlflow_runs(uri)
    client = MlflowClient(tracking_uri=uri)
    return run, {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k)) for k in KEYS}


def test_sigkill_at_random_round_then_resume_equals_uninterrupted_run(tmp_path, new_store, run_cli):
    kill_after = random.Random().randint(2, ROUNDS - 3)  # a random round, shown in every failure message
    ref_uri, uri = new_store("ref.db"), new_store("killed.db")
    reference = _start(tmp_path / "ref", *ARGS, f"tracking.uri={ref_uri}")
    victim = _start(tmp_path / "victim", *ARGS, f"tracking.uri={uri}")
    deadline = time.time() + 300
    while victim.poll() is None and _checkpoint_round(tmp_path / "victim") < kill_after and time.time() < deadline:
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL, f"the run ended before the kill after round {kill_after}"
    killed_at = _checkpoint_round(tmp_path / "victim")
    crashed, partial = _history(uri)
    assert crashed.info.status == "RUNNING", "a SIGKILL leaves the run RUNNING: nothing could mark it"
    assert len(partial["query_cost"]) < ROUNDS

    # resume by MLflow run id (the run's 'checkpoint' tag names the file)
    run_id = crashed.info.run_id
    assert locate(run_id, uri) == next((tmp_path / "victim").glob(f"outputs/runs/*/*/{FILENAME}"))
    proc = run_cli(f"resume={run_id}", f"tracking.uri={uri}", cwd=tmp_path / "victim")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert reference.wait(timeout=600) == 0, reference.communicate()[1][-3000:]

    resumed, history = _history(uri)
    _, expected = _history(ref_uri)
    context = f"killed after round {killed_at} (target {kill_after}); logged before the kill: {partial['query_cost']}"
    assert resumed.info.run_id == run_id and resumed.info.status == "FINISHED", context
    assert resumed.data.tags["resumed_at_round"] == str(killed_at) and "error" not in resumed.data.tags
    for key in KEYS:
        assert [s for s, _ in history[key]] == list(range(1, ROUNDS + 1)), f"{key}: {context}"  # once each
        assert history[key] == expected[key], f"{key}: {context}"  # same trajectory as without the crash
    print(f"\nkill/resume: {context}; resumed run {run_id}: steps 1..{ROUNDS} exactly once, "
          f"{len(KEYS)} metric histories equal to the uninterrupted run")
