"""``python -m hpoflow.batch``: a study's jobs in one process, the same study and runs as ``python -m hpoflow -m``."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from hpoflow.cli.batch import Composer, build_jobs, is_group_choice
from hpoflow.config.settings import ConfigError
from hpoflow.store.sweeps import HASH_TAG, config_hash
from tests.conftest import mlflow_runs

STUDY = ["algo=random,hyperband", "task=lc_replay", "task.benchmark=breast_cancer-linear,digits-gb", "seed=0,1",
         "budget.cost=200", "budget.rounds=3000", "tracking.compact=true", "tracking.experiment=b"]


def test_group_choices_are_told_from_values():
    assert is_group_choice("algo") and is_group_choice("task") and is_group_choice("experiment")
    assert is_group_choice("hydra/launcher") and is_group_choice("+experiment")
    assert not is_group_choice("seed") and not is_group_choice("task.benchmark") and not is_group_choice("budget.cost")


def test_jobs_come_in_hydras_order_with_the_cli_config():
    from hpoflow.config.compose import compose

    jobs, _, _ = build_jobs(STUDY, Composer())
    assert len(jobs) == 8
    assert jobs[0].overrides[:3] == ["algo=random", "task=lc_replay", "task.benchmark=breast_cancer-linear"]
    assert [j.settings.seed for j in jobs[:2]] == [0, 1]  # the last key varies fastest
    assert jobs[-1].overrides[0] == "algo=hyperband"
    composed = compose(list(jobs[5].overrides))
    assert jobs[5].raw == composed  # what python -m hpoflow composes for that job, value for value
    assert config_hash(jobs[5].raw) == config_hash(composed)  # and type for type (budget.cost 200.0, not 200)


def test_a_bad_value_in_any_job_is_one_line_before_anything_runs():
    with pytest.raises(ConfigError, match=r"job 1 .*budget.cost"):
        build_jobs(["algo=random", "task=lc_replay", "budget.cost=5,abc"], Composer())


def test_a_batch_study_runs_every_job_once_and_the_multirun_finds_it_done(run_cli: Callable, store: str):
    proc = run_cli(*STUDY, f"tracking.uri={store}", module="hpoflow.batch")
    assert "study b: 0 finished (skipped), 0 resumed, 8 new" in proc.stdout, proc.stdout + proc.stderr
    runs = mlflow_runs(store, "b")
    assert len(runs) == 8 and {r.info.status for r in runs} == {"FINISHED"}
    assert len({r.data.tags[HASH_TAG] for r in runs}) == 8
    again = run_cli(*STUDY, f"tracking.uri={store}", module="hpoflow.batch")
    assert "8 finished (skipped), 0 resumed, 0 new" in again.stdout
    multirun = run_cli("-m", *STUDY, f"tracking.uri={store}")  # the same study through Hydra's multirun
    assert "8 finished (skipped), 0 resumed, 0 new" in multirun.stdout, multirun.stdout[-2000:]
    assert len(mlflow_runs(store, "b")) == 8


def test_bad_input_is_one_line_and_exit_2(run_cli: Callable, store: str):
    proc = run_cli("algo=random", "task=lc_replay", "seed=0,1", "budget.rounds=abc", f"tracking.uri={store}",
                   module="hpoflow.batch", check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "budget.rounds" in proc.stderr, proc.stderr
    assert mlflow_runs(store) == []
