"""Tracking servers for the cluster tests: MLflow's server on SQLite, or on PostgreSQL (scripts/tracking_server.sh)."""
from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

HAVE_PG = bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb")) and (
    importlib.util.find_spec("psycopg2") is not None)


def server_folder(prefix: str) -> str:
    """A new folder for scripts/tracking_server.sh's data that PostgreSQL's account can reach (pytest's own
    temporary folders are private)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.chmod(folder, 0o755)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def sqlite_server(folder: Path) -> Iterator[str]:
    """``mlflow server`` on 127.0.0.1 with a SQLite backend and proxied artifacts; yields its http URI."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    with open(folder / "server.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                                 "--workers", "1", "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
                                 "--artifacts-destination", str(folder / "artifacts")], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log_tail = (folder / "server.log").read_text()[-2000:]
                    raise RuntimeError(f"mlflow server did not start:\n{log_tail}") from None
                time.sleep(0.5)
        yield uri
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        proc.wait(timeout=60)


@contextlib.contextmanager
def postgres_server() -> Iterator[dict[str, str]]:
    """PostgreSQL + MLflow server from scripts/tracking_server.sh on free loopback ports; yields its settings:
    ``uri`` (http), ``db_uri`` (postgresql+psycopg2://..., the password inside), and the script's environment."""
    folder = server_folder("hpoflow-server-")
    env = dict(os.environ, HPOFLOW_SERVER_DIR=folder, PORT=str(free_port()), PG_PORT=str(free_port()),
               PYTHON=sys.executable, WORKERS="2")
    script = REPO / "scripts" / "tracking_server.sh"
    proc = subprocess.run(["bash", str(script), "start"], env=env, timeout=600, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout + proc.stderr)
    password = Path(folder, "pg_password").read_text().strip()
    try:
        yield {"uri": f"http://127.0.0.1:{env['PORT']}", "PG_PORT": env["PG_PORT"], "dir": folder,
               "db_uri": f"postgresql+psycopg2://mlflow:{password}@127.0.0.1:{env['PG_PORT']}/mlflow",
               "started": proc.stdout.strip()}
    finally:
        subprocess.run(["bash", str(script), "stop"], env=env, timeout=120, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
