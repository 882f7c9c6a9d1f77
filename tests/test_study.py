"""Study (ask/tell from outside the loop): semantics, kill-and-resume, and the same MLflow records as the CLI."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from hpoflow import Study
from hpoflow.config.settings import ConfigError
from hpoflow.core.records import Evaluation, RunStatus
from hpoflow.study import StudyClosed
from tests.conftest import cli_env

SPACE = {"x": ("float", -1.0, 1.0), "act": ["relu", "tanh"]}


def test_ask_tell_runs_the_budget_then_closes():
    study = Study(SPACE, algo="random", rounds=4, seed=0)
    told = []
    while not study.done:
        trial = study.ask()
        assert set(trial.config) == {"x", "act"} and trial.observe
        study.tell(trial, trial.config["x"] ** 2)
        told.append(trial.number)
    assert told == [1, 2, 3, 4] and study.result().status is RunStatus.FINISHED
    assert study.best_value == min(r.value for r in study.records)
    with pytest.raises(StudyClosed):
        study.ask()


def test_tell_checks_its_trial_and_value_and_records_failures():
    study = Study(SPACE, algo="random", rounds=5, seed=0)
    trial = study.ask()
    with pytest.raises(ValueError, match="needs a value, or failed="):
        study.tell(trial)
    with pytest.raises(TypeError, match="expected a float or an Evaluation"):
        study.tell(trial, "0.3")
    record = study.tell(trial, failed="CUDA out of memory")  # on_error=skip: recorded, the study goes on
    assert record.failed and record.error == "CUDA out of memory"
    with pytest.raises(ValueError, match="takes a pending trial"):
        study.tell(trial, 1.0)
    nan = study.ask()
    assert study.tell(nan, float("nan")).failed
    study.tell(study.ask(), Evaluation(value=0.5, cost=3.0))
    assert study.result().summary["failed"] == 2  # a NaN still cost its evaluation (1), as in a CLI run
    assert study.result().summary["query_cost"] == 1.0 + 3.0


def test_on_error_fail_ends_the_study_failed(store):
    from mlflow import MlflowClient

    from hpoflow.runner.loop import ObjectiveError

    study = Study(SPACE, algo="random", rounds=5, tracking=store, on_error="fail")
    study.tell(study.ask(), 1.0)
    with pytest.raises(ObjectiveError, match="round 2: diverged"):
        study.tell(study.ask(), failed="diverged")
    assert study.done and MlflowClient(store).get_run(study.run_id).info.status == "FAILED"


def test_a_with_block_finishes_early_or_fails_the_run(store):
    from mlflow import MlflowClient

    with Study(SPACE, algo="random", rounds=10, tracking=store) as early:
        early.tell(early.ask(), 1.0)
    assert MlflowClient(store).get_run(early.run_id).info.status == "FINISHED" and len(early.records) == 1
    with pytest.raises(KeyError), Study(SPACE, algo="random", rounds=10, tracking=store) as broken:
        broken.tell(broken.ask(), 1.0)
        raise KeyError("user code")
    assert MlflowClient(store).get_run(broken.run_id).info.status == "FAILED"


def test_bad_settings_and_a_gradient_method_are_refused_before_any_round():
    with pytest.raises(ConfigError, match="Key 'bogus' not in 'GridConfig'"):
        Study(SPACE, algo="grid", bogus=1)
    with pytest.raises(ConfigError, match="direction='up' is unknown; allowed: minimize, maximize"):
        Study(SPACE, direction="up")
    with pytest.raises(ConfigError, match="algo 'sho' needs a differentiable bilevel task"):
        Study({"lam": ("float", -5.0, 5.0)}, algo="sho", rounds=2)


SCRIPT = """
import json, os, signal, sys
import torch
import hpoflow

uri, checkpoint, kill_after, reference = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def run(tracking, checkpoint, kill_after):
    study = hpoflow.Study({"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, algo="gp_ei", rounds=7, seed=3,
                          tracking=tracking, checkpoint=checkpoint, name="killed")
    while not study.done:
        trial = study.ask()
        noise = 0.01 * torch.randn(()).item()  # the user's own randomness: the global RNG is restored on resume
        study.tell(trial, (trial.config["x"] - 0.2) ** 2 + trial.config["y"] ** 2 + noise)
        if trial.number == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    return {"run_id": study.run_id, "configs": [r.config for r in study.records],
            "values": [r.value for r in study.records]}


if reference:  # first the uninterrupted trajectory (untracked, no checkpoint), in this same process
    with open(reference, "w") as fh:
        json.dump(run(None, None, 0), fh)
print(json.dumps(run(uri, checkpoint, kill_after)))
"""


def _study(tmp_path, uri: str, kill_after: int = 0, reference: str = "") -> subprocess.CompletedProcess:
    script = tmp_path / "study_script.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script), uri, str(tmp_path / "checkpoint.json"), str(kill_after),
                           reference], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.cli
def test_a_study_killed_mid_run_resumes_to_the_uninterrupted_trajectory(tmp_path, store):
    from mlflow import MlflowClient

    reference = tmp_path / "reference.json"
    victim = _study(tmp_path, store, kill_after=4, reference=str(reference))
    assert victim.returncode == -signal.SIGKILL, victim.stderr[-3000:]
    resumed = _study(tmp_path, store)  # the same script again: it continues from the checkpoint
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ref, out = json.loads(reference.read_text()), json.loads(resumed.stdout.splitlines()[-1])
    assert len(ref["values"]) == 7 and ref["run_id"] is None
    assert out["configs"] == ref["configs"] and out["values"] == ref["values"]
    client = MlflowClient(store)
    run = client.get_run(out["run_id"])  # the killed run itself was continued, not a new one
    # the checkpoint file may lag the kill by up to DEFER_S of cheap rounds (hpoflow.core.checkpoint.Checkpointer):
    # those rounds are asked and computed again, to the same values, and logged once
    assert run.info.status == "FINISHED" and 1 <= int(run.data.tags["resumed_at_round"]) <= 4
    history = client.get_metric_history(out["run_id"], "value")
    assert sorted(m.step for m in history) == list(range(1, 8))  # every round logged exactly once
    assert [m.value for m in sorted(history, key=lambda m: m.step)] == ref["values"]


def _history(client, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def test_a_study_logs_the_same_mlflow_records_as_the_cli_run_of_that_config(run_cli, store):
    from mlflow import MlflowClient

    from hpoflow.tasks.synthetic import make_branin

    run_cli("algo=gp_ei", "task=branin", "budget.rounds=5", "seed=0", f"tracking.uri={store}",
            "progress=false", "on_error=skip")  # a Study's default: a failed trial is recorded and the study goes on
    task = make_branin(seed=0)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the CLI's subprocess (OMP_NUM_THREADS=1): the hardware tag names the count
    try:
        with Study(task.space, algo="gp_ei", rounds=5, seed=0, tracking={"uri": store, "experiment": "study"},
                   name="branin", optimum=task.optimum) as study:
            while not study.done:
                trial = study.ask()
                study.tell(trial, task.evaluate(trial.config, round=trial.number))
    finally:
        torch.set_num_threads(threads)
    client = MlflowClient(store)
    (cli,) = client.search_runs([client.get_experiment_by_name("branin").experiment_id])
    ours = client.get_run(study.run_id)
    for key in ("value", "best_value", "regret", "cumulative_regret", "simple_regret", "query_cost"):
        assert _history(client, ours.info.run_id, key) == _history(client, cli.info.run_id, key), key
    for tag in ("algo", "surrogate", "task", "seed", "direction", "regret_reference", "hardware"):
        assert ours.data.tags[tag] == cli.data.tags[tag], tag
    shared = {k for k in cli.data.params if not k.startswith(("task.", "tracking.", "hydra"))}
    assert {k: ours.data.params.get(k) for k in shared} == {k: cli.data.params[k] for k in shared}


def test_a_study_defaults_to_auto_as_minimize_does_with_pending_trials_and_says_what_it_picked():
    """Issue 41: Study(...) used gp_ei while minimize(...) used auto. Now both default to auto, which serves a Study:
    its pick takes pending trials (gp_ei's fantasies here), and the summary names the pick as minimize's does."""
    import inspect

    import hpoflow

    assert inspect.signature(Study).parameters["algo"].default == "auto"
    assert inspect.signature(hpoflow.minimize).parameters["algo"].default == "auto"
    study = Study(SPACE, rounds=4, seed=0)
    first, second = study.ask(), study.ask()  # two pending at once
    assert first.config != second.config
    study.tell(second, 0.5)
    study.tell(first, 0.25)
    while not study.done:
        trial = study.ask()
        study.tell(trial, trial.config["x"] ** 2)
    summary = study.result().summary
    same = hpoflow.minimize(lambda c: c["x"] ** 2, SPACE, rounds=4, seed=0).summary
    assert (summary["auto.choice"], summary["auto.settings"]) == (same["auto.choice"], same["auto.settings"]) \
        == ("gp_ei", "discrete=snap")


def test_auto_in_a_study_with_a_fidelity_and_a_cost_runs_freeze_thaw_without_asha_pruning_on_top():
    """auto picks freeze_thaw there, which chooses each trial's fidelity itself: should_stop() must not cut its
    trials (the pruner follows the pick, as for algo="freeze_thaw")."""
    study = Study({"x": ("float", 0.0, 1.0)}, fidelity=("epochs", 1, 27), cost=200, seed=0)
    assert study.result().summary["auto.choice"] == "freeze_thaw" and study._stopper is None
    while not study.done:
        trial = study.ask()
        for epoch in range(1, int(trial.fidelity) + 1):
            trial.report(epoch, (trial.config["x"] - 0.3) ** 2 + 1.0 / epoch)
            assert not trial.should_stop()
        study.tell(trial)
    assert study.result().summary["auto.choice"] == "freeze_thaw"


def test_auto_in_a_study_where_it_runs_cobyqa_refuses_a_second_pending_ask_in_one_line():
    study = Study({"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, rounds=40, seed=0)
    study.ask()
    with pytest.raises(Exception, match="algo=auto picked cobyqa .* e.g. algo=turbo"):
        study.ask()
    study.finish()
