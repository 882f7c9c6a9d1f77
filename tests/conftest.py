"""Shared fixtures: run the real CLI in a subprocess against a temporary MLflow store."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[1]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.pop("HYDRA_FULL_ERROR", None)
    return env


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A fresh SQLite MLflow store URI."""
    return f"sqlite:///{tmp_path / 'mlflow.db'}"


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -m <module> *args`` from a temporary working folder; returns the completed process."""

    def _run(*args: str, module: str = "hpoflow", timeout: float = 600, check: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", module, *args], cwd=tmp_path, env=env or cli_env(),
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"exit {proc.returncode}\nSTDOUT:\n{proc.stdout[-3000:]}\nSTDERR:\n{proc.stderr[-5000:]}")
        return proc

    return _run


def mlflow_runs(uri: str, experiment: str | None = None, parents: bool = False) -> list:
    """The job runs of the store (or of one experiment), read back with MLflow's own client.

    A sweep's study parent run (tag ``hpoflow.kind=study``) is left out unless ``parents``.
    """
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exps = [client.get_experiment_by_name(experiment)] if experiment else client.search_experiments()
    ids = [e.experiment_id for e in exps if e is not None]
    runs = client.search_runs(ids, max_results=1000) if ids else []
    return [r for r in runs if parents or r.data.tags.get("hpoflow.kind") != "study"]
