"""A sweep against a real MLflow server on PostgreSQL (scripts/tracking_server.sh), read back through both.

Skipped when PostgreSQL's binaries or psycopg2 are not installed (``apt-get install -y postgresql``,
``pip install psycopg2-binary`` or the ``cluster`` extra).
"""
from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import REPO, mlflow_runs

SCRIPT = REPO / "scripts" / "tracking_server.sh"
HAVE_PG = bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"))
pytestmark = pytest.mark.skipif(not HAVE_PG or importlib.util.find_spec("psycopg2") is None,
                                reason="PostgreSQL binaries or psycopg2 not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """Start PostgreSQL + mlflow server on free loopback ports; stop both afterwards. One for the module (a start
    and a stop cost ~20 s): each test writes into an experiment of its own and reads back only that one."""
    folder = tempfile.mkdtemp(prefix="hpoflow-server-")  # not under pytest's private tmp: postgres must reach it
    os.chmod(folder, 0o755)
    env = dict(os.environ, HPOFLOW_SERVER_DIR=folder, PORT=str(_free_port()),
               PG_PORT=str(_free_port()), PYTHON=sys.executable, WORKERS="1")
    proc = subprocess.run(["bash", str(SCRIPT), "start"], env=env, timeout=600, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print(f"\n{proc.stdout.strip()}")
    try:
        yield env
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=env, timeout=120, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_sweep_against_postgres_backed_server(server, run_cli):
    import psycopg2

    uri = f"http://127.0.0.1:{server['PORT']}"
    run_cli("-m", "algo=random,grid", "task=branin", "seed=0,1", "budget.rounds=4", f"tracking.uri={uri}")

    runs = mlflow_runs(uri, "branin")  # through the server's REST API
    client = MlflowClient(tracking_uri=uri)
    assert len(runs) == 4 and {r.info.status for r in runs} == {"FINISHED"}
    for run in runs:
        assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "value")) == [1, 2, 3, 4]
        assert "trajectory.csv" in {a.path for a in client.list_artifacts(run.info.run_id)}  # served artifacts

    password = (server["HPOFLOW_SERVER_DIR"] + "/pg_password")
    with open(password) as fh, psycopg2.connect(host="127.0.0.1", port=server["PG_PORT"], user="mlflow",
                                                 password=fh.read().strip(), dbname="mlflow") as con:
        cur = con.cursor()
        cur.execute("SHOW listen_addresses")
        listen = cur.fetchone()[0]
        branin = "experiment_id = (SELECT experiment_id FROM experiments WHERE name = 'branin')"
        cur.execute("SELECT status, count(*) FROM runs r WHERE EXISTS (SELECT 1 FROM tags t WHERE "
                    f"t.run_uuid = r.run_uuid AND t.key = 'mlflow.parentRunId') AND {branin} GROUP BY status")
        by_status = dict(cur.fetchall())  # the study's runs
        cur.execute(f"SELECT status, count(*) FROM runs WHERE {branin} GROUP BY status")
        with_parent = dict(cur.fetchall())
        cur.execute(f"SELECT count(*) FROM metrics m JOIN runs r ON m.run_uuid = r.run_uuid WHERE m.key = 'value' "
                    f"AND r.{branin}")
        value_rows = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM experiments WHERE name = 'branin'")
        experiments = cur.fetchone()[0]
    print(f"\nPostgreSQL (listen_addresses={listen}): the study's runs by status {by_status} (with its parent "
          f"{with_parent}), 'value' metric rows {value_rows}, experiments named branin: {experiments}; server {uri}")
    assert listen == "127.0.0.1" and by_status == {"FINISHED": 4} and with_parent == {"FINISHED": 5}
    assert value_rows == 16 and experiments == 1


def test_a_sweep_straight_into_the_database_keeps_each_checkpoint_in_the_store(server, run_cli, tmp_path):
    """``tracking.uri=postgresql+psycopg2://...`` (no MLflow server): every step once, and each run's checkpoint
    also an artifact (the experiment's artifact location: here ./mlruns of the folder the sweep ran in)."""
    from hpoflow.core.checkpoint import load
    from hpoflow.store.checkpoint_artifacts import ARTIFACT_DIR, fetch

    with open(server["HPOFLOW_SERVER_DIR"] + "/pg_password") as fh:
        password = fh.read().strip()
    uri = f"postgresql+psycopg2://mlflow:{password}@127.0.0.1:{server['PG_PORT']}/mlflow"
    proc = run_cli("-m", "algo=random,grid", "task=branin", "seed=0", "budget.rounds=4", f"tracking.uri={uri}",
                   "tracking.experiment=direct")
    assert password not in proc.stdout + proc.stderr  # the URI is printed masked

    runs = mlflow_runs(uri, "direct")
    client = MlflowClient(tracking_uri=uri)
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    for run in runs:
        run_id = run.info.run_id
        assert sorted(m.step for m in client.get_metric_history(run_id, "value")) == [1, 2, 3, 4]
        assert {a.path for a in client.list_artifacts(run_id, ARTIFACT_DIR)} >= {f"{ARTIFACT_DIR}/a.json"}
        got = fetch(client, run_id, tmp_path / "fetched" / run_id / "checkpoint.json")  # what a retry elsewhere reads
        assert got is not None and 1 <= load(got[0]).round <= 4
    print(f"\n2 runs straight into PostgreSQL, artifacts under {runs[0].info.artifact_uri.rsplit('/', 2)[0]}")
