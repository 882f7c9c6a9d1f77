"""``executor="ray"`` (issue 29): evaluations as Ray tasks on a loopback-only Ray; a worker that dies is retried,
one that always dies is a failed round (the run goes on under on_error=skip, every round logged).

Needs the ``cluster`` extra (skipped without Ray); slow (starting Ray takes 10-60 s):
``pytest -m slow tests/test_ray_executor.py``."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import hpoflow  # noqa: E402
from hpoflow.core.records import RunStatus  # noqa: E402
from hpoflow.runner.ray_pool import init_args  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray():
    """One loopback Ray for the module (the executor joins a running Ray and leaves it running)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray.init(**init_args({}, 2), log_to_driver=False)
    yield
    ray.shutdown()


def test_init_args_join_ray_address_or_start_on_loopback_only():
    assert init_args({"RAY_ADDRESS": "ray://10.0.0.5:10001"}, 4) == {"address": "ray://10.0.0.5:10001"}
    assert init_args({"RAY_ADDRESS": "127.0.0.1:6379"}, 4) == {"address": "127.0.0.1:6379",
                                                              "_node_ip_address": "127.0.0.1"}
    local = init_args({}, 4)
    assert local["address"] == "local" and local["_node_ip_address"] == "127.0.0.1"
    assert local["include_dashboard"] is False and local["num_cpus"] >= 4


def _dying(marks: str, config):
    """k=3 kills its worker every time; k=2 kills it once (the retry succeeds); a closure: Ray pickles it."""
    k = config["k"]
    if k == 3:
        os._exit(1)
    mark = Path(marks) / "k2"
    if k == 2 and not mark.exists():
        mark.touch()
        os._exit(1)
    return float((k - 1) ** 2)


def test_ray_tasks_evaluate_retry_a_dead_worker_and_record_a_lost_trial_as_failed(local_ray, tmp_path):
    from mlflow import MlflowClient

    marks = str(tmp_path)
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    result = hpoflow.minimize(lambda c: _dying(marks, c), {"k": ("int", 0, 3)}, algo="grid", rounds=4, workers=2,
                              executor="ray", on_error="skip", tracking={"uri": store, "experiment": "ray"})
    assert result.status is RunStatus.FINISHED and len(result.records) == 4
    by_k = {r.config["k"]: r for r in result.records}
    assert sorted(by_k) == [0, 1, 2, 3]
    assert not by_k[2].failed and by_k[2].value == 1.0 and (tmp_path / "k2").exists()  # died once, retried
    assert by_k[3].failed and by_k[3].error.startswith("evaluation lost: ")  # died on every retry
    assert result.best_value == 0.0 and result.best_config == {"k": 1}
    client = MlflowClient(store)
    run = client.get_run(result.run_id)
    assert run.info.status == "FINISHED" and run.data.params["budget.executor"] == "ray"
    assert sorted(m.step for m in client.get_metric_history(result.run_id, "pending")) == [1, 2, 3, 4]
    assert ray.is_initialized()  # a Ray the executor joined is left running
