"""MLflow store helpers: default SQLite URI, client with retries, race-free experiment creation."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")
DEFAULT_DB = "outputs/mlflow.db"


def default_uri(root: str | Path = ".") -> str:
    return f"sqlite:///{(Path(root) / DEFAULT_DB).resolve()}"


def artifact_location(uri: str) -> str | None:
    """Artifacts of a SQLite store live beside the database file; a server decides its own."""
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///"):])
        return (db.parent / "mlartifacts").resolve().as_uri()
    return None


def make_client(uri: str) -> Any:
    """An MlflowClient for ``uri``; creates the SQLite file's folder first."""
    from mlflow.tracking import MlflowClient

    if uri.startswith("sqlite:///"):
        Path(uri[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    return retry(lambda: MlflowClient(tracking_uri=uri))


def init_store(uri: str) -> None:
    """Create the store's schema once (before parallel jobs fan out)."""
    client = make_client(uri)
    retry(lambda: client.search_experiments(max_results=1))


def get_or_create_experiment(client: Any, name: str, artifact_root: str | None) -> str:
    """Experiment id for ``name``, creating it; a concurrent creator winning the race is fine."""
    from mlflow.exceptions import MlflowException

    def attempt() -> str:
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            return exp.experiment_id
        try:
            return client.create_experiment(name, artifact_location=artifact_root)
        except MlflowException:
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise
            return exp.experiment_id

    return retry(attempt)


def retry(fn: Callable[[], T], tries: int = 8, base_delay: float = 0.2) -> T:
    """Call ``fn``, retrying with exponential backoff on SQLite lock errors."""
    for attempt in range(tries):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - only lock errors are retried, others re-raised
            if attempt == tries - 1 or "locked" not in str(exc).lower():
                raise
            time.sleep(base_delay * 2**attempt)
    raise AssertionError("unreachable")
