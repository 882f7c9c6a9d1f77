"""Shared fixtures: run the real CLI in a subprocess against a temporary MLflow store."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli_server import WarmCli, fresh_interpreter_wanted

REPO = Path(__file__).resolve().parents[1]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.pop("HYDRA_FULL_ERROR", None)
    return env


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for :func:`run_cli` starts the CLI in a subprocess: it is marked ``cli`` (so that
    ``make test-fast`` leaves it out) without each test saying so; tests that start one otherwise mark it."""
    for item in items:
        if "run_cli" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cli)


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A fresh SQLite MLflow store URI."""
    return f"sqlite:///{tmp_path / 'mlflow.db'}"


@pytest.fixture(scope="session")
def empty_store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite MLflow store with its schema, made once per session (MLflow's table migrations cost
    ~2 s of CPU per new store); its engine is disposed, so no connection of this process keeps it open."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    path = tmp_path_factory.mktemp("empty_store") / "mlflow.db"
    SqlAlchemyStore(f"sqlite:///{path}", (path.parent / "mlruns").as_uri()).engine.dispose()
    con = sqlite3.connect(path)  # fold any write-ahead log into the file, so that one file is the whole store
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode=DELETE")
    finally:
        con.close()
    return path


@pytest.fixture
def ready_store(tmp_path: Path, empty_store_file: Path) -> str:
    """A SQLite MLflow store URI whose schema already exists (a copy of :func:`empty_store_file`)."""
    shutil.copyfile(empty_store_file, tmp_path / "mlflow.db")
    return f"sqlite:///{tmp_path / 'mlflow.db'}"


@pytest.fixture(scope="session")
def warm_cli() -> Iterator[WarmCli]:
    """One warm CLI fork server per test worker (see ``tests/cli_server.py``)."""
    server = WarmCli(cli_env())
    yield server
    server.close()


@pytest.fixture
def run_cli(tmp_path: Path, warm_cli: WarmCli) -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -m <module> *args`` from a temporary working folder; returns the completed process.

    A child forked from the warm server when ``env`` is the default; a fresh interpreter otherwise, for a sweep
    with a process launcher (``hydra/launcher=...``: joblib's workers wait out their idle timeout under a forked
    child) and with ``HPOFLOW_TEST_FRESH_CLI=1``."""

    def _run(*args: str, module: str = "hpoflow", timeout: float = 600, check: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        if env is None and not fresh_interpreter_wanted() and not any("hydra/launcher=" in a for a in args):
            proc = warm_cli.run(module, list(args), tmp_path, timeout)
        else:
            proc = subprocess.run([sys.executable, "-m", module, *args], cwd=tmp_path, env=env or cli_env(),
                                  capture_output=True, text=True, timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"exit {proc.returncode}\nSTDOUT:\n{proc.stdout[-3000:]}\nSTDERR:\n{proc.stderr[-5000:]}"
            )
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
