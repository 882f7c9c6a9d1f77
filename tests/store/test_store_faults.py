"""Store faults of issue 42 in one line, fast: a dead database, in-memory SQLite, postgresql:// without psycopg 3."""
from __future__ import annotations

import importlib.util
import socket
import time

import pytest

from hpoflow.config.validation import store_uri_problem
from hpoflow.store.backend import probe_database


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.mark.skipif(importlib.util.find_spec("psycopg2") is None, reason="psycopg2: the cluster extra")
def test_a_dead_database_fails_at_once_in_one_line_without_its_password():
    start = time.time()
    with pytest.raises(ConnectionError) as caught:
        probe_database(f"postgresql+psycopg2://bob:hunter2@127.0.0.1:{_closed_port()}/mlflow")
    message = str(caught.value)
    assert time.time() - start < 15 and "\n" not in message and "hunter2" not in message
    assert message.startswith("cannot connect to the database: ") and "refused" in message.lower()


def test_store_uris_that_cannot_work_are_refused_and_others_pass():
    for uri in ("sqlite://", "sqlite:///:memory:", "sqlite:///file:x?mode=memory&uri=true"):
        assert "in-memory" in (store_uri_problem(uri) or ""), uri
    problem = store_uri_problem("postgres://bob:hunter2@db:5432/mlflow") or ""
    assert "postgresql+psycopg2://...@db:5432/mlflow" in problem and "hunter2" not in problem
    if importlib.util.find_spec("psycopg") is None:
        assert "psycopg 3" in (store_uri_problem("postgresql://bob@db/mlflow") or "")
    for uri in ("sqlite:///outputs/mlflow.db", "http://127.0.0.1:5000", "postgresql+psycopg2://bob@db/mlflow"):
        assert store_uri_problem(uri) is None, uri
