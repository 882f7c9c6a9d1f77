"""hpoflow's Ray launcher (``hydra/launcher=ray``): init arguments, settings, and sweeps on a local Ray.

The CLI tests start a local Ray (2 CPUs, bound to 127.0.0.1) and are skipped when ray is not installed
(``pip install 'hpoflow[cluster]'``).
"""
from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hydra_plugins.hpoflow_ray_launcher.ray_launcher import LauncherSettingError, check_settings, init_args
from tests.cli.test_failures_cli import FAULTY, faulty_env
from tests.conftest import cli_env, mlflow_runs

HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install 'hpoflow[cluster]')")
SETTINGS = {"address": None, "num_cpus": None, "cpus_per_job": 1.0, "gpus_per_job": 0.0, "max_retries": 2}
KEYS = ("value", "best_value", "regret", "cumulative_regret", "simple_regret", "query_cost")


def test_local_ray_is_bound_to_loopback_with_no_cluster():
    args = init_args(None, {}, 2, include_dashboard=False)
    assert args == {"address": "local", "_node_ip_address": "127.0.0.1", "include_dashboard": False, "num_cpus": 2}


@pytest.mark.parametrize("address, env", [("auto", {}), (None, {"RAY_ADDRESS": "127.0.0.1:6379"}),
                                          ("ray://head:10001", {"RAY_ADDRESS": "ignored:1"})])
def test_an_existing_cluster_gets_no_conflicting_init_arguments(address, env):
    args = init_args(address, env, 8, include_dashboard=True)  # num_cpus is for a local Ray only
    assert args == {"address": address or env["RAY_ADDRESS"]}


@pytest.mark.parametrize("key, value, allowed", [("max_retries", -1, "integer >= 0"), ("max_retries", 1.5, ">= 0"),
                                                 ("cpus_per_job", 0, "> 0"), ("gpus_per_job", -1, ">= 0"),
                                                 ("num_cpus", 0, "integer >= 1")])
def test_bad_settings_are_refused_in_one_line(key, value, allowed):
    with pytest.raises(ValueError) as err:  # Hydra's plugin scan may load the module again: match by name
        check_settings({**SETTINGS, key: value})
    message = str(err.value)
    assert type(err.value).__name__ == LauncherSettingError.__name__
    assert f"hydra.launcher.{key}={value!r}" in message and allowed in message and "\n" not in message


def _checkpoint_round(path: str) -> int:
    try:
        return int(json.loads(Path(path).read_text().split(',"rounds":')[0] + "}")["round"])
    except Exception:  # noqa: BLE001 - not written yet, or being replaced
        return 0


def _history(client, run_id: str) -> dict:
    return {k: sorted((m.step, m.value) for m in client.get_metric_history(run_id, k)) for k in KEYS}


@needs_ray
@pytest.mark.cli
@pytest.mark.slow
def test_lost_worker_is_retried_and_resumed_while_objective_errors_are_not(tmp_path):
    """4 jobs on a local 2-CPU Ray: one job's worker is SIGKILLed mid-run and one objective raises.

    The killed job is retried once and resumes its run from the checkpoint (history equal to an uninterrupted
    run of the same config); the raising jobs follow on_error=fail (FAILED, not retried); the sweep exits 1.
    """
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    common = ["task=faulty", "algo=random", "task.noise_std=0.1",
              "budget.rounds=10", "tracking.flush_every=2", f"tracking.uri={uri}"]
    plugin = ["--config-dir", str(FAULTY / "conf")]
    proc = subprocess.Popen([sys.executable, "-m", "hpoflow", *plugin, "-m", "hydra/launcher=ray",
                             "hydra.launcher.num_cpus=2", *common, "task.delay=0.4", "task.fail_at=0,7",
                             "seed=0,1"], cwd=tmp_path, env=faulty_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    client = MlflowClient(tracking_uri=uri)
    victim = None
    deadline = time.monotonic() + 300
    while victim is None and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
        try:
            runs = mlflow_runs(uri)
        except Exception:  # noqa: BLE001 - the store is being created
            continue
        for run in runs:
            tags = run.data.tags
            if (run.info.status == "RUNNING" and run.data.params.get("task.fail_at") == "0"
                    and "hpoflow.lease.pid" in tags and _checkpoint_round(tags.get("checkpoint", "")) >= 3):
                victim = run
                import os

                os.kill(int(tags["hpoflow.lease.pid"]), signal.SIGKILL)  # the Ray worker running this job
                break
    out, _ = proc.communicate(timeout=600)
    print(out[-4000:])
    assert victim is not None, "no job reached round 3 to be killed\n" + out[-3000:]
    assert proc.returncode == 1, out[-3000:]  # the jobs with fail_at=7 failed finally
    assert "retrying (1 of 2), it resumes from its checkpoint" in out
    assert "study faulty: 0 finished (skipped), 0 resumed, 4 new, 1 retried, 2 failed" in out

    runs = {r.info.run_id: r for r in mlflow_runs(uri)}
    assert len(runs) == 4
    by_status = sorted((r.data.params["task.fail_at"], r.info.status) for r in runs.values())
    assert by_status == [("0", "FINISHED"), ("0", "FINISHED"), ("7", "FAILED"), ("7", "FAILED")]
    resumed = runs[victim.info.run_id]
    assert int(resumed.data.tags["resumed_at_round"]) >= 3 and resumed.data.tags["hpoflow.resumed_from"] == "file"
    sweep_dir = next(r for r in mlflow_runs(uri, parents=True) if r.data.tags.get("hpoflow.kind") == "study"
                     ).data.tags["hpoflow.sweep_dir"]
    for run in runs.values():  # run folders under the sweep folder, whatever the worker's working directory
        assert run.data.tags["checkpoint"].startswith(sweep_dir + "/")
        steps = [s for s, _ in _history(client, run.info.run_id)["query_cost"]]
        assert steps == list(range(1, 11 if run.data.params["task.fail_at"] == "0" else 8))  # the failed round 7 too

    # the resumed run's history equals an uninterrupted run of the same config
    seed = resumed.data.params["seed"]
    ref_uri = f"sqlite:///{tmp_path / 'ref.db'}"
    subprocess.run([sys.executable, "-m", "hpoflow", *plugin, *common[:-1], f"tracking.uri={ref_uri}", "task.fail_at=0",
                    f"seed={seed}"], cwd=tmp_path, env=faulty_env(), check=True, capture_output=True, timeout=300)
    (ref,) = mlflow_runs(ref_uri)
    assert _history(client, victim.info.run_id) == _history(MlflowClient(tracking_uri=ref_uri), ref.info.run_id)


@needs_ray
@pytest.mark.cli
@pytest.mark.slow
def test_sigterm_to_the_driver_marks_the_running_jobs_killed(tmp_path):
    """SIGTERM to the sweep's driver under Ray: the running jobs flush their steps and end KILLED (not left
    RUNNING, as when Ray kills the workers of a dead driver), the study ends KILLED, exit 143."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "hpoflow", "--config-dir", str(FAULTY / "conf"), "-m",
                             "hydra/launcher=ray", "hydra.launcher.num_cpus=2", "task=faulty", "algo=random",
                             "task.delay=0.5", "budget.rounds=200", "tracking.flush_every=1", "seed=0,1",
                             f"tracking.uri={uri}"], cwd=tmp_path, env=faulty_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
        rounds = [_checkpoint_round(str(p)) for p in tmp_path.glob("outputs/multirun/*/*/*/checkpoint.json")]
        if len(rounds) == 2 and min(rounds) >= 2:
            break
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=300)
    print(out[-2500:])
    assert proc.returncode == 143, out[-3000:]
    assert "the sweep was interrupted by SIGTERM" in out
    client = MlflowClient(tracking_uri=uri)
    runs = mlflow_runs(uri, parents=True)
    jobs = [r for r in runs if r.data.tags.get("hpoflow.kind") != "study"]
    (study,) = [r for r in runs if r.data.tags.get("hpoflow.kind") == "study"]
    assert study.info.status == "KILLED" and len(jobs) == 2
    for run in jobs:
        assert run.info.status == "KILLED" and "interrupted" in run.data.tags["error"]
        steps = [s for s, _ in _history(client, run.info.run_id)["query_cost"]]
        assert len(steps) >= 2 and steps == list(range(1, len(steps) + 1))  # flushed, each step once


@pytest.mark.parametrize("address, loopback", [("local", True), ("127.0.0.1:6379", True), ("localhost:6379", True),
                                               ("ray://127.0.0.1:10001", True), ("10.0.0.5:6379", False),
                                               ("ray://head.example:10001", False)])
def test_loopback_clusters_are_recognised(address, loopback):
    from hydra_plugins.hpoflow_ray_launcher.ray_launcher import on_loopback

    assert on_loopback(address) is loopback


def test_the_worker_cache_survives_hydras_plugin_scan():
    """A worker's shared objects stay cached across jobs: Hydra's plugin scan (run again by every
    ``Singleton.set_state``) re-executes the modules under ``hydra_plugins`` except those named ``_*``."""
    from hydra.core.plugins import Plugins

    import hydra_plugins
    from hydra_plugins.hpoflow_ray_launcher import _worker_cache

    _worker_cache.SHARED["sweep"] = marker = object()
    try:
        Plugins._scan_all_plugins(modules=[hydra_plugins])
        assert sys.modules["hydra_plugins.hpoflow_ray_launcher._worker_cache"].SHARED.get("sweep") is marker
    finally:
        _worker_cache.SHARED.clear()


@needs_ray
def test_a_ray_started_by_hpoflow_collects_no_usage_statistics():
    """Nothing leaves the machine: a process that imported hpoflow (the CLI, a sweep's driver, hence the Ray it
    starts and its workers) has Ray's usage statistics, and their cloud metadata probes, off; a user's explicit
    setting wins."""
    code = ("import hpoflow; from ray._common.usage.usage_lib import usage_stats_enabled; "
            "print(usage_stats_enabled())")
    for env, expected in (({}, "False"), ({"RAY_USAGE_STATS_ENABLED": "1"}, "True")):
        clean = {k: v for k, v in cli_env().items() if k != "RAY_USAGE_STATS_ENABLED"} | env
        out = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == expected, out.stderr[-2000:]


@pytest.mark.parametrize("exc, address, says", [
    (ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:6379"), "127.0.0.1:6379",
     "Ray at 127.0.0.1:6379 cannot be reached (ConnectionError: Failed to connect"),
    (RuntimeError("something\nelse"), "local",
     "a local Ray could not be started or joined (RuntimeError: something else)"),
])
def test_a_failed_ray_init_is_one_line_naming_the_address(exc, address, says):
    from hpoflow.runner.ray_pool import ray_error

    message = ray_error(address, exc)
    assert message.startswith(says) and "\n" not in message, message


@needs_ray
@pytest.mark.cli
def test_a_cluster_that_wants_a_token_the_driver_lacks_is_one_error_line_and_a_failed_study(tmp_path):
    """Ray 2.59+: RAY_AUTH_MODE=token with no token anywhere. Before: ray.exceptions.AuthenticationError's
    traceback and the study's parent run FINISHED; now one line, exit 2, the parent run FAILED with the reason."""
    from tests.cluster.servers import free_port

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = cli_env() | {"RAY_ADDRESS": f"127.0.0.1:{free_port()}", "RAY_AUTH_MODE": "token", "HOME": str(tmp_path)}
    for key in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, "-m", "hpoflow", "-m", "hydra/launcher=ray", "algo=random", "task=branin",
                           "seed=0,1", "budget.rounds=2", f"tracking.uri={uri}", "tracking.experiment=auth"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(errors) == 1 and "refused the connection (AuthenticationError" in errors[0], proc.stderr[-3000:]
    assert "RAY_AUTH_TOKEN_PATH" in errors[0]
    (parent,) = mlflow_runs(uri, "auth", parents=True)
    assert parent.info.status == "FAILED" and "AuthenticationError" in parent.data.tags["error"]


@needs_ray
@pytest.mark.cli
def test_budget_executor_ray_without_the_clusters_token_is_one_line_and_a_failed_run(tmp_path):
    """The library's Ray pool (budget.executor=ray): before, Ray's AuthenticationError traceback and the run left
    RUNNING; now one line, exit 2, the run FAILED."""
    from tests.cluster.servers import free_port

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = cli_env() | {"RAY_ADDRESS": f"127.0.0.1:{free_port()}", "RAY_AUTH_MODE": "token", "HOME": str(tmp_path)}
    for key in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, "-m", "hpoflow", "algo=random", "task=branin", "budget.rounds=2",
                           "budget.workers=2", "budget.executor=ray", f"tracking.uri={uri}", "progress=false"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "Error: budget.executor=ray: Ray at 127.0.0.1:"), proc.stderr[-3000:]
    (run,) = mlflow_runs(uri)
    assert run.info.status == "FAILED" and "AuthenticationError" in run.data.tags["error"]
