"""A real training task with a fidelity through the CLI: Hyperband's spend in epochs/rounds, learning curves without
repeated steps, and a SIGKILL in the middle of a bracket resumed with every unit counted once."""
from __future__ import annotations

import json
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.checkpoint import FILENAME
from hpoflow.tasks.trial_states import Kept, state_folder
from tests.cli_server import WarmProcess, fresh_interpreter_wanted, warm_server
from tests.conftest import cli_env, mlflow_runs

pytestmark = pytest.mark.cli

COST = 120
ARGS = ["algo=hyperband", "task=breast_cancer", "task.model=gb", "task.fidelity=true", "task.max_resource=27",
        f"budget.cost={COST}", "budget.rounds=500", "tracking.flush_every=4", "seed=3"]


def _histories(uri: str) -> tuple:
    (run,) = mlflow_runs(uri)
    client = MlflowClient(tracking_uri=uri)
    keys = [k for k in run.data.metrics if k.startswith("lc/")] + ["query_cost", "fidelity", "value"]
    return run, {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k)) for k in keys}


def _check_curves(history: dict) -> int:
    """Every configuration's curve has each step once, from 1 up; returns the units the curves hold."""
    units = 0
    for key, points in history.items():
        if key.startswith("lc/"):
            steps = [s for s, _ in points]
            assert steps == list(range(1, len(steps) + 1)), f"{key}: steps {steps}"
            assert all(0.5 < v <= 1.0 for _, v in points), key
            units += len(steps)
    return units


def test_hyperband_on_gradient_boosting_spends_boosting_rounds(run_cli, store):
    run_cli(*ARGS, f"tracking.uri={store}")
    run, history = _histories(store)
    spent = history["query_cost"][-1][1]
    assert run.info.status == "FINISHED" and COST - 27 < spent <= COST  # the budget holds
    # continuation: the units charged are the units in the curves, each trained once (no config restarts here)
    assert _check_curves(history) == spent
    assert {v for _, v in history["fidelity"]} <= {1.0, 3.0, 9.0, 27.0} and max(v for _, v in history["fidelity"]) == 27
    assert any(p.name.startswith("config_") for p in Path(store.removeprefix("sqlite:///")).parent.glob(
        "outputs/runs/*/*/checkpoint.trial_states/*"))


def _load(path: Path) -> Kept:
    with path.open("rb") as fh:
        return pickle.load(fh)  # noqa: S301 - the test's own run folder


def _start(cwd: Path, *args: str) -> subprocess.Popen | WarmProcess:
    cwd.mkdir()
    if fresh_interpreter_wanted():
        return subprocess.Popen([sys.executable, "-m", "hpoflow", *args], cwd=cwd, env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return warm_server(cli_env()).popen("hpoflow", list(args), cwd)


def _checkpoint(cwd: Path) -> tuple[int, Path | None]:
    for path in cwd.glob(f"outputs/runs/*/*/{FILENAME}"):
        try:
            return int(json.loads(path.read_text())["round"]), path
        except Exception:  # noqa: BLE001 - a missing file between polls
            return 0, None
    return 0, None


def _a_state_is_newer(cwd: Path, after: int) -> bool:
    """The checkpoint is past round ``after`` and a trial state was written after it: a round is in flight whose
    trained model the crash will leave on disk while the checkpoint does not know it."""
    k, path = _checkpoint(cwd)
    if path is None or k < after:
        return False
    try:
        written = path.stat().st_mtime_ns
        return any(p.stat().st_mtime_ns > written for p in state_folder(path).glob("config_*.pkl"))
    except OSError:
        return False


def _check_levels(history: dict) -> float:
    """A closed-form task logs one point per evaluation at its level: each configuration's levels rise (never one
    twice) and, continued, it costs its highest level; returns the sum of those."""
    units = 0.0
    for key, points in history.items():
        if key.startswith("lc/"):
            steps = [s for s, _ in points]
            assert steps == sorted(set(steps)), f"{key}: levels {steps}"
            units += steps[-1]
    return units


# the same kill on a training task and on a closed-form one (noisy values: a replayed round must keep the task's
# noise in step); a small sleep per unit makes branin_mf's rounds last long enough to be killed inside one
KILLED = {"gb": ([*ARGS, "task.noise_std=0.01"], _check_curves),
          "branin_mf": (["algo=hyperband", "task=branin_mf", "task.max_resource=27", "task.noise_std=0.1",
                         "task.sleep_per_unit=0.003", f"budget.cost={COST * 3}", "budget.rounds=500",
                         "tracking.flush_every=4", "seed=3"], _check_levels)}


@pytest.mark.parametrize("task", sorted(KILLED))
def test_sigkill_in_a_bracket_resumes_with_every_unit_counted_once(tmp_path, new_store, run_cli, task):
    ref_uri, uri = new_store("ref.db"), new_store("killed.db")
    args, check_units = KILLED[task]
    reference = _start(tmp_path / "ref", *args, f"tracking.uri={ref_uri}")
    victim = _start(tmp_path / "victim", *args, f"tracking.uri={uri}")
    deadline = time.time() + 300
    while victim.poll() is None and not _a_state_is_newer(tmp_path / "victim", 28) and time.time() < deadline:
        time.sleep(0.002)  # past the first bracket's rung 0 (27 trials at 1 round), in its promotions
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL, "the run ended before the kill"
    killed_at, path = _checkpoint(tmp_path / "victim")
    lost = sorted(k.round for k in map(_load, state_folder(path).glob("config_*.pkl")) if k.round > killed_at)
    assert lost, f"killed after round {killed_at}: no state of a lost round to replay"
    (crashed,) = mlflow_runs(uri)
    proc = run_cli(f"resume={crashed.info.run_id}", f"tracking.uri={uri}", cwd=tmp_path / "victim")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert reference.wait(timeout=600) == 0, reference.communicate()[1][-3000:]
    resumed, history = _histories(uri)
    _, expected = _histories(ref_uri)
    context = f"killed after round {killed_at}, states of lost rounds {lost}"
    assert resumed.info.status == "FINISHED" and resumed.data.tags["resumed_at_round"] == str(killed_at), context
    assert history == expected, context  # same spend, same curves: nothing trained twice was charged twice
    assert check_units(history) == history["query_cost"][-1][1], context
    print(f"\nmf kill/resume ({task}): {context}; {len(history) - 3} curves, {history['query_cost'][-1][1]:.0f} rounds "
          "charged, equal to the uninterrupted run")


@pytest.mark.parametrize("task", [
    ("task=digits_cnn", "task.fidelity=true", "task.epochs=9", "task.width=4", "task.batch_size=64"),
    ("task=ridge", "task.dataset=digits_regression", "task.fidelity=true", "task.inner_steps=90",
     "task.min_inner_steps=10")])
def test_sha_on_the_epoch_and_inner_step_tasks(run_cli, store, task):
    run_cli("algo=sha", *task, "budget.rounds=13", f"tracking.uri={store}")
    (run,) = mlflow_runs(store)
    client = MlflowClient(tracking_uri=store)
    curves = {k: [m.step for m in client.get_metric_history(run.info.run_id, k)] for k in run.data.metrics
              if k.startswith("lc/")}
    fidelity = [m.value for m in client.get_metric_history(run.info.run_id, "fidelity")]
    cost = max(m.value for m in client.get_metric_history(run.info.run_id, "query_cost"))
    assert run.info.status == "FINISHED" and len(fidelity) == 13 and len(curves) == 9
    assert all(len(set(steps)) == len(steps) for steps in curves.values())  # no step twice
    assert cost == sum(fidelity) - _continued(fidelity) < sum(fidelity)  # promotions continue, paying the rest


def _continued(levels: list[float]) -> float:
    """The units a successive-halving bracket does not pay again: each promotion from a rung starts at its level
    (9 at r0, 3 promoted from r0 to r1, 1 from r1 to r2)."""
    r = sorted(set(levels))
    return sum(levels.count(b) * a for a, b in zip(r, r[1:]))
