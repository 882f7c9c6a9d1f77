"""``python -m hpoflow.report`` over every kind of tracking URI: the same study read through the server (http)
and straight from its database (sqlite, postgresql://) gives the same tables and best configurations; where the
store cannot take the report's artifacts, one warning line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.servers import HAVE_PG, postgres_server, sqlite_server
from tests.conftest import cli_env

SWEEP = ["-m", "algo=random,grid", "task=branin", "task.noise_std=0.5", "seed=0,1,2", "budget.rounds=5",
         "tracking.experiment=uris"]


def _report(cwd: Path, uri: str, out: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "hpoflow.report", f"tracking.uri={uri}", "tracking.experiment=uris",
                           f"report.out={out}"], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc


def _tables(stdout: str) -> str:
    """The printed report without the lines that name the store or the output files."""
    return "\n".join(ln for ln in stdout.splitlines() if not ln.startswith(("wrote ", "figures:", "logged ")))


def _same_report(cwd: Path, server_uri: str, db_uri: str) -> None:
    http = _report(cwd, server_uri, "http")
    direct = _report(cwd, db_uri, "direct")
    assert _tables(http.stdout) == _tables(direct.stdout)
    assert (cwd / "http" / "summary.csv").read_text() == (cwd / "direct" / "summary.csv").read_text()
    assert "x0" in http.stdout and "n/a" not in http.stdout  # the best configurations, read from every store
    assert "logged report.html" in http.stdout
    warnings = [ln for ln in direct.stderr.splitlines() if ln.startswith("Warning: the report was not logged")]
    assert len(warnings) == 1 and "Traceback" not in direct.stderr, direct.stderr[-2000:]
    print(f"\n{db_uri.split(':')[0]} and http: the same report ({len(_tables(http.stdout).splitlines())} lines); "
          f"{warnings[0][:160]}")


@pytest.mark.cli
@pytest.mark.slow  # a server and a sweep: minutes on a shared 2-core machine
def test_sqlite_and_the_server_give_the_same_report(tmp_path):
    with sqlite_server(tmp_path / "server") as uri:
        proc = subprocess.run([sys.executable, "-m", "hpoflow", *SWEEP, f"tracking.uri={uri}"], cwd=tmp_path,
                              env=cli_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _same_report(tmp_path, uri, f"sqlite:///{tmp_path / 'server' / 'server.db'}")


@pytest.mark.cli
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_PG, reason="PostgreSQL binaries or psycopg2 not installed")
def test_postgresql_and_the_server_give_the_same_report(tmp_path):
    with postgres_server() as server:
        proc = subprocess.run([sys.executable, "-m", "hpoflow", *SWEEP, f"tracking.uri={server['uri']}"], cwd=tmp_path,
                              env=cli_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _same_report(tmp_path, server["uri"], server["db_uri"])
