"""Issue 31 through the real CLI: a paused writer taken over writes nothing more; a store lost in the last flush
interval never exits 0 and the run stays resumable; a SIGKILL between the store's FINISHED and the checkpoint's
is reported accurately; a checkpoint swapped into another run's folder is refused."""
from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.checkpoint import FILENAME
from tests.cli.test_run_guarantees_cli import SLOW, _checkpoint, _cli, _errors, _popen, _round, _wait_for_round

pytestmark = pytest.mark.cli


def _history(uri: str, run_id: str) -> list[int]:
    return [m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, "query_cost")]


def _only_run(uri: str):
    client = MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    return run


@pytest.mark.slow  # waits out the 30 s grace period of the paused writer's lease
def test_a_paused_writer_taken_over_writes_nothing_more_and_exits_non_zero(tmp_path, new_store):
    uri = new_store("m.db")
    old = _popen(tmp_path, *SLOW, "task.delay=0.3", "budget.rounds=80", f"tracking.uri={uri}")
    _wait_for_round(old, tmp_path, 5)
    os.kill(old.pid, signal.SIGSTOP)
    try:
        time.sleep(36)  # the lease's grace period (30 s) passes: the paused writer is presumed dead
        folder = _checkpoint(tmp_path).parent
        new = _popen(tmp_path, f"resume={folder}")
        client, run_id = MlflowClient(tracking_uri=uri), _only_run(uri).info.run_id
        deadline = time.time() + 300
        while client.get_run(run_id).data.tags.get("hpoflow.lease.epoch") != "2" and time.time() < deadline:
            assert new.poll() is None, new.communicate()[1][-2000:]
            time.sleep(0.2)
        time.sleep(1.0)  # the new writer is logging
    finally:
        os.kill(old.pid, signal.SIGCONT)
    code, (_, stderr) = old.wait(timeout=300), old.communicate()
    print(f"\nold owner after kill -CONT: exit {code}: {_errors(stderr)}")
    assert code == 1 and "taken over" in stderr and "epoch 2, this process held 1" in stderr, stderr[-3000:]
    assert new.wait(timeout=600) == 0, new.communicate()[1][-3000:]
    steps = _history(uri, run_id)
    assert sorted(steps) == list(range(1, 81)), f"{len(steps)} rows for {len(set(steps))} steps"  # none twice
    state = json.loads(_checkpoint(tmp_path).read_text())
    assert state["round"] == 80 and state["meta"]["status"] == "FINISHED"


def test_a_store_lost_in_the_last_flush_interval_exits_1_and_resumes(tmp_path):
    store = tmp_path / "store"
    uri = f"sqlite:///{store}/m.db"
    quiet = [a for a in SLOW if not a.startswith(("tracking.heartbeat_s=", "tracking.flush_every="))]  # a beat
    # would notice it mid-run; each key once per command
    proc = _popen(tmp_path / "run", *quiet, "task.delay=0.3", "budget.rounds=12", "tracking.flush_every=100",
                  "tracking.heartbeat_s=60", f"tracking.uri={uri}")
    _wait_for_round(proc, tmp_path / "run", 10)  # every round so far is still in the tracker's buffer
    store.rename(tmp_path / "away")
    code, (stdout, stderr) = proc.wait(timeout=300), proc.communicate()
    print(f"\nstore moved away at round 10 of 12: exit {code}: {_errors(stderr)}")
    assert code == 1 and "vanished during the run" in stderr and "best value" not in stdout, stderr[-3000:]
    state = json.loads(_checkpoint(tmp_path / "run").read_text())
    assert state["round"] == 12 and state["meta"]["status"] == "RUNNING"  # every round, not FINISHED
    (tmp_path / "away").rename(store)  # the store is back: the run continues and finishes
    resumed = _cli(tmp_path / "run", f"resume={_checkpoint(tmp_path / 'run').parent}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    run = _only_run(uri)
    assert run.info.status == "FINISHED" and sorted(_history(uri, run.info.run_id)) == list(range(1, 13))


KILL_AFTER_STORE_FINISHED = """
import os, signal, sys
import hpoflow.runner.loop as loop
real = loop.save
def save(*args, **kwargs):  # SIGKILL between the store's FINISHED and the checkpoint's
    if kwargs.get("status") == "FINISHED":
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
loop.save = save
import runpy
sys.argv = ["hpoflow", *sys.argv[1:]]
runpy.run_module("hpoflow", run_name="__main__", alter_sys=True)
"""


def test_a_sigkill_after_the_store_says_finished_is_reported_as_finished(tmp_path, new_store):
    import subprocess
    import sys

    from tests.cli.test_failures_cli import faulty_env

    uri = new_store("m.db")
    proc = subprocess.run([sys.executable, "-c", KILL_AFTER_STORE_FINISHED, "task=branin", "algo=random",
                           "budget.rounds=3", f"tracking.uri={uri}"], cwd=tmp_path, env=faulty_env(),
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert _only_run(uri).info.status == "FINISHED"
    assert json.loads(_checkpoint(tmp_path).read_text())["meta"]["status"] == "RUNNING"
    again = _cli(tmp_path, f"resume={_checkpoint(tmp_path).parent}")
    print(f"\nresume after the SIGKILL: exit {again.returncode}: {again.stdout.strip().splitlines()[-1:]}")
    assert again.returncode == 0 and "already finished (3 rounds;" in again.stdout, again.stderr[-3000:]
    assert "older copy" not in again.stdout + again.stderr and "its store says FINISHED" in again.stdout


def test_a_checkpoint_swapped_into_another_runs_folder_is_refused(tmp_path, new_store):
    uri = new_store("m.db")
    a, b = tmp_path / "a", tmp_path / "b"
    for cwd, seed in ((a, 0), (b, 1)):
        once = [a for a in SLOW if not a.startswith("seed=")]  # each key once per command
        proc = _cli(cwd, *once, "task.delay=0", f"seed={seed}", "budget.rounds=3", f"tracking.uri={uri}")
        assert proc.returncode == 0, proc.stderr[-2000:]
    shutil.copy(_checkpoint(b), _checkpoint(a))  # run B's checkpoint into run A's folder
    proc = _cli(a, f"resume={_checkpoint(a).parent}")
    print(f"\nswapped checkpoint: exit {proc.returncode}: {_errors(proc.stderr)}")
    assert proc.returncode == 2 and len(_errors(proc.stderr)) == 1 and "copied or swapped in" in proc.stderr
    assert _round(a) == 3 and Path(_checkpoint(a)).name == FILENAME
