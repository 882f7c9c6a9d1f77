"""Shared fixtures: run the real CLI in a subprocess against a temporary MLflow store."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_server import WarmCli, fresh_interpreter_wanted, warm_server

REPO = Path(__file__).resolve().parents[1]
# One BLAS/OpenMP thread per test process (and per CLI child, which inherits the environment): make test runs one
# pytest-xdist worker per core, and a second spinning thread per worker cost ~40% more CPU on the torch-heavy files
# (tests/test_surrogate_pairs.py + tests/tasks/test_bilevel.py: 66 -> 41 user CPU s). The user's own setting wins.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if "torch" in sys.modules:  # imported before this file (by a plugin): its pool is sized already
    sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


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
def new_store(tmp_path: Path, empty_store_file: Path) -> Callable[[str], str]:
    """``new_store("ref.db")``: the URI of a fresh SQLite store in the test's folder, a copy of
    :func:`empty_store_file`, so the test (and every CLI call it makes) skips MLflow's table migrations (1.4-2.7
    CPU s per new store). Tests of a store that does not exist yet build their own URI."""

    def _new(name: str) -> str:
        shutil.copyfile(empty_store_file, tmp_path / name)
        return f"sqlite:///{tmp_path / name}"

    return _new


@pytest.fixture
def store(new_store: Callable[[str], str]) -> str:
    """The test's fresh SQLite MLflow store URI (``mlflow.db`` in its folder; see :func:`new_store`)."""
    return new_store("mlflow.db")


@pytest.fixture(scope="session")
def warm_cli() -> WarmCli:
    """The warm CLI fork server of this test worker (see ``tests/cli_server.py``)."""
    return warm_server(cli_env())


@pytest.fixture
def run_cli(tmp_path: Path, warm_cli: WarmCli) -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -m <module> *args`` from a temporary working folder; returns the completed process.

    A child forked from the warm server started with ``env`` (the default: :func:`cli_env`); a fresh interpreter
    for a sweep with a process launcher (``hydra/launcher=...``: joblib's workers wait out their idle timeout under
    a forked child) and with ``HPOFLOW_TEST_FRESH_CLI=1``."""

    def _run(*args: str, module: str = "hpoflow", timeout: float = 600, check: bool = True,
             env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        cwd = cwd or tmp_path
        if not fresh_interpreter_wanted() and not any("hydra/launcher=" in a for a in args):
            server = warm_cli if env is None else warm_server(env)  # a server started with that environment
            proc = server.run(module, list(args), cwd, timeout)
        else:
            proc = subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env or cli_env(),
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
