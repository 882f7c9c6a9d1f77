"""Launcher presets besides Ray: ``hydra/launcher=submitit_local`` runs a study, ``hydra/launcher=slurm`` refuses
missing or bad required settings in one line before anything is submitted; hpoflow's Ray launcher likewise."""
from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.config.launchers import check_launcher
from tests.conftest import mlflow_runs

HAVE_SUBMITIT = importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None
needs_submitit = pytest.mark.skipif(not HAVE_SUBMITIT, reason="hydra-submitit-launcher is not installed "
                                    "(pip install 'hpoflow[cluster]')")
SLURM = {"_target_": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher", "partition": "cpu",
         "timeout_min": 60, "mem_gb": 8, "array_parallelism": 64}


def test_good_slurm_settings_and_other_launchers_pass():
    assert check_launcher(SLURM) is None
    assert check_launcher({"_target_": "hydra._internal.core_plugins.basic_launcher.BasicLauncher"}) is None


@pytest.mark.parametrize("key, value", [("partition", None), ("partition", " "), ("timeout_min", 0),
                                        ("timeout_min", 1.5), ("mem_gb", 0), ("mem_gb", "8G"),
                                        ("array_parallelism", 0), ("array_parallelism", True)])
def test_bad_slurm_settings_are_refused_in_one_line(key, value):
    message = check_launcher({**SLURM, key: value})
    assert message is not None and f"hydra.launcher.{key}=" in message and "allowed:" in message
    assert "\n" not in message


def test_bad_ray_settings_are_refused_in_one_line():
    ray = {"_target_": "hydra_plugins.hpoflow_ray_launcher.ray_launcher.RayLauncher", "address": None,
           "num_cpus": None, "cpus_per_job": 1, "gpus_per_job": 0, "max_retries": -1}
    assert "hydra.launcher.max_retries=-1" in check_launcher(ray)
    assert check_launcher({**ray, "max_retries": 2}) is None


@pytest.mark.cli
@needs_submitit
def test_slurm_without_a_partition_exits_2_before_submitting(run_cli, store):
    proc = run_cli("-m", "hydra/launcher=slurm", "algo=random", "task=branin", "seed=0,1", f"tracking.uri={store}",
                   check=False)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "hydra.launcher.partition=null" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and not mlflow_runs(store, parents=True)


@pytest.mark.cli
def test_a_bad_ray_setting_exits_2_without_starting_ray(run_cli, store):
    proc = run_cli("-m", "hydra/launcher=ray", "hydra.launcher.max_retries=-1", "algo=random", "task=branin",
                   "seed=0", f"tracking.uri={store}", check=False)
    assert proc.returncode == 2 and "Error: hydra.launcher.max_retries=-1 is not allowed" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.cli
@needs_submitit
def test_submitit_local_runs_a_study(run_cli, store, tmp_path):
    proc = run_cli("-m", "hydra/launcher=submitit_local", "algo=random,grid", "task=branin", "seed=0",
                   "budget.rounds=4", f"tracking.uri={store}", timeout=900)
    assert "study branin: 0 finished (skipped), 0 resumed, 2 new, 0 retried, 0 failed" in proc.stdout, proc.stdout
    runs = mlflow_runs(store)
    assert len(runs) == 2 and Counter(r.info.status for r in runs) == {"FINISHED": 2}
    client = MlflowClient(tracking_uri=store)
    for run in runs:
        assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "value")) == [1, 2, 3, 4]
        assert run.data.tags["checkpoint"].startswith(str(tmp_path / "outputs" / "multirun"))
