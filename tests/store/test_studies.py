"""Studies: parent runs, config hashes, and re-running a sweep safely (hpoflow.store.sweeps + the Hydra callback)."""
from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hpoflow.store import sweeps
from tests.conftest import mlflow_runs

RAW = {"algo": {"name": "random"}, "task": {"name": "branin", "dim": 2}, "seed": 3, "budget": {"rounds": 5},
       "tracking": {"uri": "sqlite:///a.db"}, "progress": True, "sweep": {"invocation": "x"}}


def test_the_config_hash_covers_what_decides_a_result_and_nothing_else():
    base = sweeps.config_hash(RAW)
    assert base == sweeps.config_hash(dict(reversed(list(RAW.items()))))  # key order is irrelevant
    assert base == sweeps.config_hash({**RAW, "tracking": {"uri": "sqlite:///b.db"}, "progress": False,
                                       "sweep": {"invocation": "y"}, "checkpoint_every": 5})
    assert base != sweeps.config_hash({**RAW, "seed": 4})
    assert base != sweeps.config_hash({**RAW, "algo": {"name": "grid"}})
    assert len(base) == 16 and int(base, 16) >= 0


def test_the_study_key_ignores_tracking_and_rerun_switches_but_not_the_sweep():
    key = sweeps.study_key("smoke", {"seed": "0,1"}, ["experiment=smoke"])
    assert key == sweeps.study_key("smoke", {"seed": "0,1"}, ["experiment=smoke", "tracking.uri=sqlite:///x.db",
                                                             "sweep.rerun_failed=true", "progress=false"])
    assert key != sweeps.study_key("smoke", {"seed": "0,1,2"}, ["experiment=smoke"])
    assert key != sweeps.study_key("smoke", {"seed": "0,1"}, ["experiment=smoke", "budget.rounds=4"])


class _Run:
    def __init__(self, status: str, params: dict, tags: dict | None = None, run_id: str = "r1"):
        self.info = type("Info", (), {"status": status, "run_id": run_id})()
        self.data = type("Data", (), {"params": params, "tags": {sweeps.HASH_TAG: "h", **(tags or {})}})()


class _Client:
    def __init__(self, runs: list[_Run]):
        self.runs = runs

    def search_runs(self, *args, **kwargs):
        return self.runs


def _params(raw: dict) -> dict:
    from hpoflow.store.params import to_mlflow_params

    return to_mlflow_params(raw)


@pytest.mark.parametrize("status,checkpoint,rerun,action", [
    ("FINISHED", False, False, sweeps.Action.SKIP_FINISHED),
    ("FINISHED", False, True, sweeps.Action.SKIP_FINISHED),    # rerun_failed never reruns a finished run
    ("FAILED", False, False, sweeps.Action.SKIP_FAILED),
    ("FAILED", False, True, sweeps.Action.NEW),
    ("RUNNING", True, False, sweeps.Action.RESUME),             # writer gone, checkpoint there
    ("KILLED", True, False, sweeps.Action.RESUME),
    ("RUNNING", False, False, sweeps.Action.NEW),               # writer gone, nothing to resume from
])
def test_the_plan_of_a_job_follows_the_status_of_its_earlier_run(tmp_path, status, checkpoint, rerun, action):
    ckpt = tmp_path / "checkpoint.json"
    if checkpoint:
        ckpt.write_text("{}")
    run = _Run(status, _params(RAW), {"checkpoint": str(ckpt)})
    decided = sweeps.plan(_Client([run]), "0", "p", RAW, rerun)
    assert decided.action is action
    assert (decided.superseded == "r1") == (action is sweeps.Action.NEW)
    assert sweeps.plan(_Client([]), "0", "p", RAW, rerun).action is sweeps.Action.NEW


def test_a_hash_match_with_a_different_recorded_config_is_refused_naming_the_key():
    other = _params({**RAW, "seed": 99})
    with pytest.raises(sweeps.ConfigHashCollision, match="differs at seed"):
        sweeps.plan(_Client([_Run("FINISHED", other)]), "0", "p", RAW, False)


def test_a_run_whose_writer_died_before_its_params_is_replaced_not_a_collision(tmp_path):
    """Lost between create_run (the hash tag) and the params: no collision; without a checkpoint, a new run."""
    run = _Run("RUNNING", {}, {"checkpoint": str(tmp_path / "none.json")})
    decided = sweeps.plan(_Client([run]), "0", "p", RAW, False)
    assert decided.action is sweeps.Action.NEW and decided.superseded == "r1"
    some = dict(list(_params(RAW).items())[:3])  # some of the params logged (a batch of a longer config)
    assert sweeps.plan(_Client([_Run("RUNNING", some, {})]), "0", "p", RAW, False).action is sweeps.Action.NEW
    with pytest.raises(sweeps.ConfigHashCollision, match="differs at seed"):  # a param it has still counts
        sweeps.plan(_Client([_Run("RUNNING", {**some, "seed": "99"}, {})]), "0", "p", RAW, False)


def _sweep(cwd: Path, uri: str, *extra: str) -> subprocess.Popen:
    """4 jobs of the faulty test task, each >= 1.2 s (0.2 s per evaluation), printing unbuffered."""
    from tests.cli.test_failures_cli import faulty, faulty_env

    env = {**faulty_env(), "PYTHONUNBUFFERED": "1"}
    args = faulty("task.delay=0.2", "seed=0,1", "budget.rounds=6", f"tracking.uri={uri}", "tracking.experiment=study",
                  "progress=false", *extra)
    args[args.index("algo=random")] = "algo=random,grid"
    return subprocess.Popen([sys.executable, "-m", "hpoflow", "-m", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.cli
def test_a_sweep_killed_half_way_and_run_again_skips_resumes_and_completes_logging_every_step_once(tmp_path, store):
    first = _sweep(tmp_path, store, "checkpoint_every=1")
    lines: list[str] = []
    assert first.stdout is not None
    for line in first.stdout:  # SIGKILL the launcher as soon as two of the four jobs have finished
        lines.append(line)
        if sum("best value" in ln for ln in lines) == 2:
            first.send_signal(signal.SIGKILL)
            break
    first.wait(timeout=120)
    again = _sweep(tmp_path, store)
    out, _ = again.communicate(timeout=600)
    assert again.returncode == 0, out[-3000:]
    account = [ln for ln in out.splitlines() if ln.startswith("study study:")]
    assert account and "2 finished (skipped)" in account[0] and "4 runs in the store" in account[0], out[-2000:]
    runs = mlflow_runs(store, "study", parents=True)
    parents = [r for r in runs if r.data.tags.get(sweeps.KIND_TAG) == "study"]
    children = [r for r in runs if r.data.tags.get(sweeps.KIND_TAG) != "study"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert parents[0].data.tags["hpoflow.runs.finished"] == "4"
    assert len(children) == 4 and Counter(r.info.status for r in children) == {"FINISHED": 4}
    assert {r.data.tags[sweeps.PARENT_TAG] for r in children} == {parents[0].info.run_id}
    assert len({r.data.tags[sweeps.HASH_TAG] for r in children}) == 4
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store)
    for run in children:
        steps = [m.step for m in client.get_metric_history(run.info.run_id, "value")]
        assert sorted(steps) == list(range(1, 7)), (run.info.run_name, steps)


def test_an_experiment_needs_multirun_and_refuses_contradicting_overrides(run_cli, store):
    single = run_cli("experiment=smoke", f"tracking.uri={store}", check=False)
    assert single.returncode == 2 and "run it with -m" in single.stderr
    contra = run_cli("-m", "experiment=smoke", "algo=grid", f"tracking.uri={store}", check=False)
    assert contra.returncode == 2
    assert "algo=grid contradicts experiment=smoke" in contra.stderr and "random, gp_ei, turbo" in contra.stderr
    unknown = run_cli("-m", "experiment=nope", f"tracking.uri={store}", check=False)
    assert unknown.returncode == 2 and "experiment/nope" in unknown.stderr and "smoke" in unknown.stderr
    assert not [r for r in mlflow_runs(store, parents=True) if r.info.status == "RUNNING"]


def test_a_failed_run_is_kept_and_counted_then_rerun_on_request(run_cli, store):
    from tests.cli.test_failures_cli import faulty, faulty_env

    args = ["-m", *faulty("budget.rounds=4", "task.fail_at=2", f"tracking.uri={store}", "tracking.experiment=faulty",
                          "progress=false")]
    first = run_cli(*args, check=False, env=faulty_env())
    assert first.returncode == 1
    again = run_cli(*args, check=False, env=faulty_env())
    assert again.returncode == 1 and "1 failed (sweep.rerun_failed=true reruns them)" in again.stdout
    rerun = run_cli(*args, "sweep.rerun_failed=true", check=False, env=faulty_env())
    assert "0 finished (skipped), 0 resumed, 1 new" in rerun.stdout
    runs = mlflow_runs(store, "faulty", parents=True)
    children = [r for r in runs if r.data.tags.get(sweeps.KIND_TAG) != "study"]
    assert len(children) == 2 and sum(r.data.tags.get(sweeps.SUPERSEDED_TAG) == "true" for r in children) == 1
