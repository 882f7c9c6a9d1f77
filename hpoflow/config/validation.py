"""Whole-config sanity checks that no single component's dataclass can make, run before any work.

Each failure is a ``ValueError`` with one line naming the key, the bad value and what is allowed (the CLI
prints it and exits 2). Component dataclasses check their own ranges; this module catches what slips
between them: NaN/inf anywhere (``budget.cost=nan`` would silently remove the cost limit), keys that are
no setting at all (``+foo=1``), sizes no run can reach (``budget.rounds=2**70``), an empty store URI, and
settings a built task ignores (``task=hartmann6 task.dim=3``).
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from hpoflow.core.space import MAX_DIM

MAX_ROUNDS = 1_000_000
MAX_SEED = 2**32 - 1  # NumPy's limit (torch accepts more; one limit for all three RNGs)
MAX_INT = 10**9       # any other integer setting: no option of hpoflow needs more
MAX_NAME = 250        # run and experiment names


def _walk(config: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(config, dict):
        return [kv for k, v in config.items() for kv in _walk(v, f"{prefix}{k}.")]
    if isinstance(config, (list, tuple)):
        return [kv for i, v in enumerate(config) for kv in _walk(v, f"{prefix}{i}.")]
    return [(prefix.rstrip("."), config)]


def root_keys() -> set[str]:
    """The top-level settings (the root schema's fields)."""
    from hpoflow.config.schema import RootConfig

    return {f.name for f in fields(RootConfig)}


# the URI schemes MLflow's tracking client opens (its store registry; a SQLAlchemy dialect may follow a "+")
TRACKING_SCHEMES = ("sqlite", "http", "https", "postgresql", "mysql", "mssql", "file", "databricks", "uc")


def uri_scheme_problem(uri: str) -> str | None:
    """One line for a ``tracking.uri`` whose scheme no MLflow store takes (``htp://``), else None: said here,
    before MLflow answers with its model registry's sentence."""
    from urllib.parse import urlsplit

    scheme = urlsplit(uri.strip()).scheme.lower()
    if not scheme or scheme.split("+", 1)[0] in TRACKING_SCHEMES:
        return None
    return (f"tracking.uri={uri!r}: '{scheme}://' is not a store MLflow opens; allowed: sqlite:///FILE, "
            "http(s)://HOST:PORT, postgresql://..., mysql://..., mssql://..., file:///FOLDER, databricks")


def check_config(raw: dict[str, Any]) -> None:
    """Raise ValueError (one line) on the first nonsense value of a resolved config."""
    unknown = sorted(set(raw) - root_keys())
    if unknown:
        raise ValueError(f"'{unknown[0]}' is not a setting; allowed top-level keys: {', '.join(sorted(root_keys()))}")
    for key, value in _walk(raw):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{key}={value} must be a finite number")
        if isinstance(value, int) and not isinstance(value, bool):
            limit = (MAX_ROUNDS if key == "budget.rounds" else MAX_SEED if key == "seed"
                     else MAX_DIM if key.rsplit(".", 1)[-1] == "dim" else MAX_INT)
            if abs(value) > limit:
                raise ValueError(f"{key}={value} is beyond the maximum {limit:,}")
    tracking = raw.get("tracking") or {}
    uri = tracking.get("uri")
    if isinstance(uri, str) and not uri.strip():
        raise ValueError("tracking.uri is empty: give a store URI (e.g. sqlite:///outputs/mlflow.db, "
                         "http://host:5000) or leave it out for the default store")
    problem = (uri_scheme_problem(uri) or store_uri_problem(uri)) if isinstance(uri, str) else None
    if problem:
        raise ValueError(problem)
    for key in ("run_name", "experiment"):
        name = tracking.get(key)
        if isinstance(name, str) and (len(name) > MAX_NAME or not name.strip()):
            raise ValueError(f"tracking.{key} must be 1 to {MAX_NAME} characters (got {len(name)})")


def store_uri_problem(uri: str) -> str | None:
    """A one-line reason a store URI cannot work, else None: an in-memory SQLite database (its runs are gone when
    the process ends), a ``postgresql://`` URI whose default driver (psycopg 3 for SQLAlchemy 2.1) is missing."""
    from importlib.util import find_spec

    scheme, _, rest = uri.partition("://")
    scheme = scheme.lower()
    if scheme == "sqlite" and (rest in ("", "/", "/:memory:") or "mode=memory" in rest):
        return (f"tracking.uri={uri!r} is an in-memory database: its runs would be gone when the process ends; "
                "allowed: a file (sqlite:///outputs/mlflow.db), a server (http://host:5000) or a database URI")
    if scheme == "postgres" or (scheme == "postgresql" and find_spec("psycopg") is None):
        user, at, place = rest.rpartition("@")  # the user name and password are not repeated in the message
        why = ("SQLAlchemy does not know the scheme postgres://" if scheme == "postgres"
               else "the default PostgreSQL driver (psycopg 3) is not installed")
        return (f"tracking.uri={scheme}://{'...@' if at else ''}{place}: {why}; allowed: "
                f"postgresql+psycopg2://{'...@' if at else ''}{place} (the driver that pip install "
                "'hpoflow[cluster]' installs)")
    return None


def check_task(task_config: Any, task: Any) -> None:
    """Raise ValueError if the built task ignored a size it was given (a fixed-dimension task's ``dim``)."""
    dim = getattr(task_config, "dim", None) if not isinstance(task_config, dict) else task_config.get("dim")
    space = getattr(task, "space", None)
    if isinstance(dim, int) and space is not None and space.dim != dim:
        raise ValueError(f"task.dim={dim}: {task.name} has a fixed dimension of {space.dim} "
                         f"(leave task.dim out or set it to {space.dim})")
