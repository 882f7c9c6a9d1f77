"""scripts/bench_scale.py: its ways and stores are checked before anything starts; a small study straight into
the MLflow database (in two batches) against Optuna on the same PostgreSQL (skipped without Ray, Optuna,
psycopg2 or PostgreSQL)."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.servers import HAVE_PG, server_folder
from tests.conftest import REPO, cli_env

SCRIPT = REPO / "scripts" / "bench_scale.py"


@pytest.mark.parametrize(("args", "message"), [
    (["--ways", "hpoflow,foo"], "--ways hpoflow,foo: unknown foo; allowed: hpoflow, hpoflow_db"),
    (["--ways", "hpoflow_db"], "--ways hpoflow_db: allowed: hpoflow, hpoflow_db (with --store postgresql)"),
])
def test_a_bad_way_is_refused_in_one_line(args, message):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--n", "2", *args], capture_output=True, text=True,
                          timeout=120, env=cli_env())
    assert proc.returncode == 2 and message in proc.stderr.splitlines()[-1] and "Traceback" not in proc.stderr


HAVE = HAVE_PG and all(importlib.util.find_spec(m) is not None for m in ("ray", "optuna"))  # HAVE_PG: psycopg2 too


@pytest.mark.cli
@pytest.mark.skipif(not HAVE, reason="needs the cluster extra (ray, psycopg2), optuna and PostgreSQL's binaries")
def test_hpoflow_straight_into_the_database_against_optuna():
    folder = Path(server_folder("hpoflow-bench-"))
    try:
        args = ["--n", "4", "--rounds", "3", "--ways", "hpoflow_db,optuna", "--store", "postgresql", "--batch", "3",
                "--keep", str(folder / "kept")]
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                              env=cli_env())
        kept = (folder / "kept" / "server" / "pgdata").is_dir()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line for line in proc.stdout.splitlines() if line.startswith("| ")}
    assert "| 4 |" in rows["hpoflow_db"] and rows["hpoflow_db"].rstrip().endswith("| 12 (12) |")  # every step once
    assert rows["optuna"].rstrip().endswith("| 12 (12) |") and "hpoflow_db wall time: " in proc.stdout
    assert "hpoflow's sweeps in batches of 3 jobs" in proc.stdout  # 4 jobs: two batches, every step still once
    assert kept  # --keep: the database stays
