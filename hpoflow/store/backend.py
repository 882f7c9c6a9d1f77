"""MLflow store helpers: default SQLite URI, safe concurrent use of one store, race-free experiments.

Several processes (a joblib/Ray sweep, two shells) may share one SQLite file. What makes that safe:
the schema is created once, under an exclusive file lock (``<db>.lock``), before any run is written;
the database is switched to WAL journaling (readers never block the writer); MLflow's sessions wait up
to 20 s on a busy database (``PRAGMA busy_timeout``); and every write is retried with jittered exponential
backoff when SQLite still reports "database is locked" (WAL can refuse a read-to-write upgrade at once).
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
DEFAULT_DB = "outputs/mlflow.db"
_READY: set[tuple[str, int, int]] = set()  # stores this process has already initialised: (uri, inode, device)
_EXPERIMENTS: dict[tuple[str, int, int, str], str] = {}  # experiment ids this process has looked up or created
_JITTER = random.SystemRandom()  # never the seeded global RNG: retries must not change a run's trajectory


def default_uri(root: str | Path = ".") -> str:
    return f"sqlite:///{(Path(root) / DEFAULT_DB).resolve()}"


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores)."""
    if uri.startswith("sqlite:///"):
        return Path(uri[len("sqlite:///"):].split("?", 1)[0])
    return None


def artifact_location(uri: str) -> str | None:
    """Artifacts of a SQLite store live beside the database file; a server decides its own."""
    db = sqlite_path(uri)
    if db is not None:
        return (db.parent / "mlartifacts").resolve().as_uri()
    return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock held across processes (released when the process dies)."""
    with open(path, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


HTTP_DEFAULTS = {  # a dead server fails in ~15 s, not MLflow's minutes (its defaults: 7 retries, 120 s timeout)
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0.5",
}


BULK_READ_TIMEOUT_S = "120"  # a report's page of 1,000 runs from a busy server can take longer than 5 s


@contextlib.contextmanager
def patient_http(timeout_s: str = BULK_READ_TIMEOUT_S) -> Iterator[None]:
    """Within the block, MLflow's HTTP requests may take ``timeout_s`` seconds (bulk reads of a large study),
    unless the user set ``MLFLOW_HTTP_REQUEST_TIMEOUT`` to something other than hpoflow's default."""
    key = "MLFLOW_HTTP_REQUEST_TIMEOUT"
    before = os.environ.get(key)
    if before not in (None, HTTP_DEFAULTS[key]):
        yield
        return
    os.environ[key] = timeout_s
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def _client(uri: str) -> Any:
    """An MlflowClient; for an http(s) server, MLflow's retry and timeout settings default to HTTP_DEFAULTS
    (the user's own ``MLFLOW_HTTP_REQUEST_*`` environment variables win)."""
    if uri.startswith(("http://", "https://")):
        for key, value in HTTP_DEFAULTS.items():
            os.environ.setdefault(key, value)
        logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)  # each retry: our one line says it
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


_HELD: dict[Path, int] = {}  # one read-only descriptor per database file, open for the process's lifetime


def held_descriptor(db: Path) -> int | None:
    """A descriptor on ``db`` that pins its inode (a deleted file's inode number cannot be reused while open).

    Never closed: closing any descriptor of a SQLite file drops the process's POSIX locks on it (SQLite's
    documented caveat), so one per store is kept, and replaced only if the path now names another file.
    """
    try:
        st = os.stat(db)
    except OSError:
        return None
    fd = _HELD.get(db)
    if fd is not None:
        held = os.fstat(fd)
        if (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino):
            return fd
    _HELD[db] = os.open(db, os.O_RDONLY)
    return _HELD[db]


def store_identity(uri: str) -> tuple[str, int, int]:
    """The key of this process's caches for ``uri``: a SQLite store by its file (inode and device, the inode held
    open by :func:`held_descriptor`, as :mod:`hpoflow.store.health` holds it: a file removed and created again is
    another store), any other store by its URI."""
    db = sqlite_path(uri)
    if db is None:
        return uri, 0, 0
    fd = held_descriptor(db)  # pins the inode: a new file cannot reuse its number
    if fd is None:
        return uri, -1, -1
    st = os.fstat(fd)
    return uri, st.st_ino, st.st_dev


def forget_stores() -> None:
    """Drop this process's caches of initialised stores and experiment ids (tests; a store replaced in place)."""
    _READY.clear()
    _EXPERIMENTS.clear()


def init_store(uri: str) -> None:
    """Create the store's schema once per process (a file lock serialises concurrent creators); SQLite gets WAL
    mode; a server is asked once whether it answers."""
    if store_identity(uri) in _READY:
        return
    db = sqlite_path(uri)
    if db is None:
        client = _client(uri)
        retry(lambda: client.search_experiments(max_results=1))
        _READY.add(store_identity(uri))
        return
    db.parent.mkdir(parents=True, exist_ok=True)  # a new store's folder, as for the default outputs/mlflow.db
    # MLflow announces a new store's schema at INFO ("Creating initial MLflow database tables...", "Updating
    # database tables"): hpoflow made the store on purpose, so those lines say nothing; warnings still show
    schema_log = logging.getLogger("mlflow.store.db.utils")  # raised, never lowered (a CLI job sets CRITICAL)
    schema_log.setLevel(max(schema_log.level, logging.WARNING))
    with file_lock(db.with_name(db.name + ".lock")):
        fresh = not db.exists() or db.stat().st_size == 0
        con = sqlite3.connect(db, timeout=30)
        try:
            retry(lambda: con.execute("PRAGMA journal_mode=WAL").fetchone())
        finally:
            con.close()
        client = _client(uri)
        retry(lambda: client.search_experiments(max_results=1))  # creates the tables on a fresh file
        if fresh:
            _default_experiment_beside(db, artifact_location(uri))
    _READY.add(store_identity(uri))


def _default_experiment_beside(db: Path, location: str | None) -> None:
    """MLflow creates the "Default" experiment with artifacts in ``./mlruns`` of the *current directory*; in a
    store this process just created, move that (still empty) location beside the database, as for every other
    experiment. MLflow has no API to change an experiment's artifact location, hence the one SQL statement."""
    con = sqlite3.connect(db, timeout=30)
    try:
        with con:
            retry(lambda: con.execute("UPDATE experiments SET artifact_location = ? WHERE experiment_id = 0",
                                      (location,)))
    finally:
        con.close()


DATABASE_TIMEOUT_S = 10  # to connect to a PostgreSQL/MySQL store before MLflow's own attempts
_REACHED: set[str] = set()  # database stores this process has connected to


DATABASE_SCHEMES = ("postgresql", "mysql", "mariadb", "mssql")  # database servers (SQLite is a file)


def is_database(uri: str) -> bool:
    """Whether ``uri`` is a database server's (``postgresql+psycopg2://...`` too), not a file or an http server."""
    return uri.partition("://")[0].lower().startswith(DATABASE_SCHEMES)


def probe_database(uri: str) -> None:
    """Connect once, with a short timeout, to a PostgreSQL or MySQL store: MLflow's own engine retries a dead
    database ten times with backoff (185 s and 54 warnings before the error); this fails in one line at once.

    Raises:
        ConnectionError: the database cannot be reached, or refuses the user (the driver's first line).
    """
    scheme = uri.partition("://")[0].lower()
    if uri in _REACHED or not scheme.startswith(("postgresql", "mysql", "mariadb")):
        return
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(uri, poolclass=NullPool, connect_args={"connect_timeout": DATABASE_TIMEOUT_S})
    try:
        with engine.connect():
            pass
    except sqlalchemy.exc.DBAPIError as exc:
        reason = next((line.strip() for line in str(exc.orig).splitlines() if line.strip()), type(exc.orig).__name__)
        raise ConnectionError(f"cannot connect to the database: {reason}") from None
    finally:
        engine.dispose()
    _REACHED.add(uri)


def make_client(uri: str) -> Any:
    """An MlflowClient for ``uri``; a SQLite store is initialised first (folder, schema, WAL), once per process, and
    a database store is reached once with a short timeout (:func:`probe_database`).

    Cheap after the first call: MLflow keeps one store object (engine, connection pool) per URI in a process,
    so a reused worker process (Ray, joblib) pays for the store only once."""
    if sqlite_path(uri) is not None:
        init_store(uri)
    probe_database(uri)
    return retry(lambda: _client(uri))


def find_experiment(client: Any, name: str, refuse_deleted: bool = True) -> str | None:
    """The id of the experiment ``name`` in the client's store, or None; an active one is looked up once per
    process (a deleted one every time, and refused unless ``refuse_deleted=False``).

    Raises:
        MlflowException: the experiment exists but was deleted (one line naming it and what to do).
    """
    uri = str(client.tracking_uri)
    key = store_identity(uri) + (name,)
    if key in _EXPERIMENTS:
        return _EXPERIMENTS[key]
    exp = retry(lambda: client.get_experiment_by_name(name))
    if exp is None:
        return None
    if exp.lifecycle_stage == "deleted":
        if not refuse_deleted:
            return str(exp.experiment_id)
        from mlflow.exceptions import MlflowException

        raise MlflowException(f"tracking.experiment='{name}' was deleted in this store; restore it "
                              "(mlflow experiments restore) or choose another name")
    _EXPERIMENTS[key] = str(exp.experiment_id)
    return _EXPERIMENTS[key]


def get_or_create_experiment(client: Any, name: str, artifact_root: str | None) -> str:
    """Experiment id for ``name``, creating it; a concurrent creator winning the race is fine. The id is
    remembered for this process (:func:`find_experiment`): the jobs of a sweep look it up once per worker."""
    from mlflow.exceptions import MlflowException

    def attempt() -> str:
        found = find_experiment(client, name)
        if found is not None:
            return found
        try:
            created = str(client.create_experiment(name, artifact_location=artifact_root))
            _EXPERIMENTS[store_identity(str(client.tracking_uri)) + (name,)] = created
            return created
        except MlflowException as exc:
            if "locked" in str(exc).lower():
                raise
            found = find_experiment(client, name)
            if found is None:
                raise
            return found

    return retry(attempt)


TRANSIENT = ("locked", "busy", "temporarily unavailable")


def retry(fn: Callable[[], T], tries: int = 10, base_delay: float = 0.1, max_delay: float = 5.0) -> T:
    """Call ``fn``, retrying with jittered exponential backoff on transient store errors (SQLite locks)."""
    for attempt in range(tries):
        try:
            return fn()
        except Exception as exc:  # only transient errors are retried, others re-raised
            message = str(exc).lower()
            if attempt == tries - 1 or not any(t in message for t in TRANSIENT):
                raise
            time.sleep(min(max_delay, base_delay * 2**attempt) * _JITTER.uniform(0.5, 1.5))
    raise AssertionError("unreachable")
