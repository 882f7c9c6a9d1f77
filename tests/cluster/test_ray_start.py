"""A Ray that cannot be started or joined (a local start that timed out): the CLI's one line, exit 2, for the Ray
launcher and for ``budget.executor=ray`` (``ray.init`` replaced by one that fails: no Ray is started)."""
from __future__ import annotations

import pytest

from hpoflow.cli.errors import setup_error
from hpoflow.config.settings import ConfigError

ray = pytest.importorskip("ray", reason="the cluster extra")


def _timed_out(**kwargs: object) -> None:
    raise Exception("The current node timed out during startup. This could happen because some of the Ray "
                    "processes failed to startup.\nmore lines")


@pytest.fixture
def failing_ray(monkeypatch):
    monkeypatch.setattr(ray, "init", _timed_out)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def test_the_ray_launcher_reports_a_start_that_timed_out_in_one_line(failing_ray):
    from hydra_plugins.hpoflow_ray_launcher.ray_launcher import RayLauncher

    with pytest.raises(ConfigError) as caught:
        RayLauncher(address=None, num_cpus=2)._init_ray()
    message = str(caught.value)
    assert message.startswith("Ray: could not start a local Ray on 127.0.0.1 (Exception: The current node timed out")
    assert "\n" not in message and "RAY_ADDRESS" in message
    assert setup_error(caught.value) == message  # the CLI's error reporter prints it as one line (exit 2)


def test_executor_ray_reports_a_cluster_it_cannot_join_in_one_line(failing_ray, monkeypatch):
    from hpoflow.core.space import Float, SearchSpace
    from hpoflow.runner.ray_pool import RayExecutor
    from hpoflow.tasks.function import FunctionTask

    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.9:6379")
    task = FunctionTask(SearchSpace.of(Float("x", 0.0, 1.0)), lambda c: c["x"])
    with pytest.raises(ConfigError, match=r"^Ray: could not join the Ray cluster at 10.0.0.9:6379 \(Exception: "):
        RayExecutor(task, 2)


def test_a_run_whose_ray_cannot_start_ends_failed_not_running(failing_ray, tmp_path):
    from mlflow.tracking import MlflowClient

    from hpoflow import minimize

    uri = f"sqlite:///{tmp_path / 'm.db'}"
    with pytest.raises(ConfigError, match=r"^Ray: could not start a local Ray"):
        minimize(lambda c: c["x"], {"x": ("float", 0.0, 1.0)}, algo="random", rounds=4, workers=2, executor="ray",
                 tracking=uri)
    client = MlflowClient(tracking_uri=uri)
    runs = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    assert [r.info.status for r in runs] == ["FAILED"] and runs[0].data.tags["error"].startswith("ConfigError: Ray")
