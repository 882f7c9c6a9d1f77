"""A replayed multi-fidelity run (``task=lc_replay``) killed with SIGKILL twice inside its brackets and resumed:
every learning curve has each step once, the cost counted equals the units trained, and the run equals an
uninterrupted one (the trial states live beside the checkpoint, one per trial and round; with simulated workers the
simulation is replayed to the checkpoint's moment: its clock and the trials running then)."""
from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.cli.kill_points import run_killed
from tests.conftest import mlflow_runs

pytestmark = pytest.mark.cli

RUNS = {
    "hyperband": ["algo=hyperband", "task=lc_replay", "task.max_fidelity=27", "budget.cost=280", "seed=2"],
    "asha_simulated": ["algo=asha", "task=lc_replay", "task.max_fidelity=27", "budget.cost=250", "budget.workers=4",
                       "budget.executor=simulated", "seed=2"],
    "freeze_thaw": ["algo=freeze_thaw", "task=lc_replay", "task.max_fidelity=27", "budget.cost=250", "seed=2"],
    "warm_hyperband": ["algo=hyperband", "algo.scheduler=warm_hyperband", "task=lc_replay",
                       "task.benchmark=digits_gb", "task.max_fidelity=54", "budget.cost=400", "seed=2"],
}
KILLS = (35, 40)  # the first run dies after its 35th evaluation (in bracket 1's promotions), the resumed after its 40th


def _history(uri: str) -> tuple:
    (run,) = mlflow_runs(uri)
    client = MlflowClient(tracking_uri=uri)
    keys = [k for k in run.data.metrics if k.startswith("lc/")] + ["query_cost", "fidelity", "value", "sim_time"]
    return run, {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k)) for k in keys}


def _units(history: dict) -> int:
    """The units the curves hold; each curve's steps are 1, 2, ... once each."""
    units = 0
    for key, points in history.items():
        if key.startswith("lc/"):
            steps = [s for s, _ in points]
            assert steps == list(range(1, len(steps) + 1)), f"{key}: steps {steps}"
            units += len(steps)
    return units


@pytest.mark.parametrize("name", ["hyperband", pytest.param("asha_simulated", marks=pytest.mark.slow),  # ~70-100 s each
                                  pytest.param("freeze_thaw", marks=pytest.mark.slow),
                                  pytest.param("warm_hyperband", marks=pytest.mark.slow)])
def test_a_replayed_run_killed_twice_in_its_brackets_equals_the_uninterrupted_run(tmp_path: Path, name: str):
    args = RUNS[name]
    ref, uri = f"sqlite:///{tmp_path}/ref.db", f"sqlite:///{tmp_path}/killed.db"
    proc = run_killed(tmp_path / "ref", [*args, f"tracking.uri={ref}"], None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_killed(tmp_path / "run", [*args, f"tracking.uri={uri}"], KILLS[0])
    assert proc.returncode == -9, proc.stderr[-3000:]
    (crashed,) = mlflow_runs(uri)
    resume = [f"resume={crashed.info.run_id}", f"tracking.uri={uri}"]
    proc = run_killed(tmp_path / "run", resume, KILLS[1])
    assert proc.returncode == -9, proc.stderr[-3000:]
    proc = run_killed(tmp_path / "run", resume, None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    resumed, history = _history(uri)
    _, expected = _history(ref)
    assert resumed.info.status == "FINISHED"
    assert _units(history) == history["query_cost"][-1][1]  # every unit trained once, and counted once
    assert history == expected  # same curves, levels, values and spend as the run never killed
    print(f"\n{name} on lc_replay killed after evaluations {KILLS} and resumed: {len(history) - 4} curves, "
          f"{history['query_cost'][-1][1]:.0f} units, {len(history['value'])} rounds, equal to the uninterrupted run")


def test_asha_with_4_thread_workers_stopped_by_sigterm_resumes_with_every_unit_counted_once(tmp_path: Path):
    """SIGTERM while 4 thread workers train: the checkpoint and MLflow hold the same rounds (a round is logged and
    checkpointed before the signal ends the run), and the resumed run's curves hold each step once, their units
    equal to the cost counted (a promotion that finished before the signal is replayed, not trained again).
    Before: the checkpoint said round 26 where MLflow had 27; resumed, 4 curves repeated a step and 303 units were
    counted where the curves held 287."""
    import json

    args = ["algo=asha", "task=lc_replay", "task.max_fidelity=27", "budget.cost=300", "budget.workers=4",
            "budget.executor=thread", "seed=2"]
    uri = f"sqlite:///{tmp_path}/m.db"
    proc = run_killed(tmp_path / "run", [*args, f"tracking.uri={uri}"], 30, signal_name="SIGTERM")
    assert proc.returncode == 143, proc.stderr[-3000:]
    (stopped,) = mlflow_runs(uri)
    (path,) = (tmp_path / "run").glob("outputs/runs/*/*/checkpoint.json")
    logged = len(MlflowClient(tracking_uri=uri).get_metric_history(stopped.info.run_id, "value"))
    assert stopped.info.status == "KILLED" and json.loads(path.read_text())["round"] == logged
    proc = run_killed(tmp_path / "run", [f"resume={stopped.info.run_id}", f"tracking.uri={uri}"], None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    resumed, history = _history(uri)
    assert resumed.info.status == "FINISHED" and _units(history) == history["query_cost"][-1][1]
    assert [s for s, _ in history["value"]] == list(range(1, len(history["value"]) + 1))  # each round once
