"""kill -9 of a run with 2 thread, process or Ray workers, resumed: the trials running at the checkpoint are asked
again once each (the same trial number, config id and level, so an ASHA or Hyperband promotion is not lost), a
trial told and logged is never asked again, every learning curve holds each step once, the cost counted is the
units trained, and the one MLflow run ends FINISHED (not left RUNNING).

The run dies as its N-th ``Loop.tell`` starts (``tests/cli/kill_points.KILL_AT_TELL``): trial N has ended in its
worker, another is still running, neither is told. Before the checkpoint saved the running trials, the resumed
run forgot them: their configurations were asked again under new config ids, or not at all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.cli.kill_points import run_killed
from tests.conftest import mlflow_runs

pytestmark = pytest.mark.cli

ARGS = ["task=branin_mf", "task.max_resource=9", "task.sleep_per_unit=0.02", "budget.cost=60", "budget.workers=2",
        "seed=2"]
KILL_AT = 9  # the run dies as its 9th tell starts: inside ASHA's first promotions and Hyperband's first bracket


def _rounds(uri: str) -> tuple:
    """The run, its rounds as {trial: (config id, fidelity)} (asserting each trial told once), its curves."""
    (run,) = mlflow_runs(uri)
    client = MlflowClient(tracking_uri=uri)
    hist = {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k))
            for k in ["trial", "config_id", "fidelity", "query_cost", "value"]}
    steps = [s for s, _ in hist["value"]]
    assert steps == list(range(1, len(steps) + 1)), f"rounds logged: {steps}"  # each round once
    trials = [int(v) for _, v in hist["trial"]]
    assert len(trials) == len(set(trials)) == len(steps), f"a trial told twice: {trials}"
    told = {int(t): (int(c), f) for (_, t), (_, c), (_, f) in zip(hist["trial"], hist["config_id"], hist["fidelity"])}
    jobs = list(told.values())
    assert len(jobs) == len(set(jobs)), "a configuration evaluated twice at one level"
    curves = {k: sorted(m.step for m in client.get_metric_history(run.info.run_id, k)) for k in run.data.metrics
              if k.startswith("lc/")}
    return run, told, curves, hist["query_cost"][-1][1]


def _killed_and_resumed(tmp_path: Path, args: list[str]) -> None:
    uri, pending_file = f"sqlite:///{tmp_path}/m.db", tmp_path / "pending.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HPOFLOW_TEST_KILL_PENDING", str(pending_file))
        proc = run_killed(tmp_path / "run", [*args, f"tracking.uri={uri}"], KILL_AT, point="tell")
    assert proc.returncode == -9, proc.stderr[-3000:]
    pending = json.loads(pending_file.read_text())
    assert len(pending) >= 2, pending  # the trial being told and at least one still running
    (crashed,) = mlflow_runs(uri)
    assert crashed.info.status == "RUNNING"  # killed: nobody ended it
    proc = run_killed(tmp_path / "run", [f"resume={crashed.info.run_id}", f"tracking.uri={uri}"], None, point="tell")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run, told, curves, counted = _rounds(uri)
    assert run.info.run_id == crashed.info.run_id and run.info.status == "FINISHED"
    for name, steps in curves.items():  # branin_mf logs a curve's point at each level it reached, each once
        assert len(steps) == len(set(steps)), f"{name}: steps {steps}"
    assert sum(max(s) for s in curves.values()) == counted  # a trial trains up to its last level once: counted once
    for p in pending:  # each trial asked and not told when the run died: asked again once, the same job
        assert told.get(p["trial"]) == (p["config_id"], p["fidelity"]), (p, told.get(p["trial"]))


@pytest.mark.parametrize("executor", ["process", "thread"])
@pytest.mark.parametrize("algo", ["asha", "hyperband"])
def test_a_run_with_2_workers_killed_and_resumed_asks_its_running_trials_again_once(tmp_path: Path, algo: str,
                                                                                     executor: str):
    _killed_and_resumed(tmp_path, [f"algo={algo}", f"budget.executor={executor}", *ARGS])


@pytest.mark.slow  # 46 s here (Ray starts twice), and the killed run leaves its Ray agents orphaned
def test_a_run_with_2_ray_workers_killed_and_resumed_asks_its_running_trials_again_once(tmp_path: Path):
    pytest.importorskip("ray")
    _killed_and_resumed(tmp_path, ["algo=asha", "budget.executor=ray", *ARGS])
