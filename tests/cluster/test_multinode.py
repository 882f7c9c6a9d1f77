"""A study on a multi-node Ray cluster (``ray.cluster_utils.Cluster``: a head and 2 worker nodes on loopback) that
loses a worker node half-way: the same command, not re-run, ends with every run FINISHED.

Tracking goes into the PostgreSQL-backed MLflow server of scripts/tracking_server.sh when PostgreSQL and psycopg2
are installed (then the lost node's run folders are deleted too, so the retry must resume from the checkpoint
kept in the store), else into SQLite (the retry resumes from the run folder). Skipped without ray.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.test_failures_cli import FAULTY
from tests.cluster.servers import HAVE_PG, postgres_server
from tests.conftest import cli_env, mlflow_runs

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'hpoflow[cluster]')")

JOBS, ROUNDS = 16, 12
LEASE_PID = "hpoflow.lease.pid"  # the writer process of a RUNNING run (hpoflow.store.lease)
KEYS = ("value", "best_value", "regret", "cumulative_regret", "simple_regret", "query_cost")


def _round(path: str) -> int:
    try:
        return int(json.loads(Path(path).read_text().split(',"rounds":')[0] + "}")["round"])
    except Exception:  # noqa: BLE001 - not written yet, or being replaced
        return 0


def _history(uri: str, run_id: str) -> dict:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    return {k: sorted((m.step, m.value) for m in client.get_metric_history(run_id, k)) for k in KEYS}


def _add_node(cluster):
    """A worker node on 127.0.0.1 (tried again when Ray's fixed 30 s start-up wait runs out on a loaded machine)."""
    for attempt in range(3):
        try:
            return cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        except Exception:  # noqa: BLE001 - "The current node timed out during startup"
            if attempt == 2:
                raise
            time.sleep(5)


@pytest.fixture
def tracking(tmp_path):
    if HAVE_PG:
        with postgres_server() as server:
            print(f"\n{server['started']}")
            yield server["uri"]
    else:
        yield f"sqlite:///{tmp_path / 'mlflow.db'}"


@pytest.mark.cli
@pytest.mark.slow
def test_a_16_job_study_survives_losing_a_worker_node(tmp_path, tracking, monkeypatch):
    from ray.cluster_utils import Cluster

    env = cli_env()
    env["PYTHONPATH"] = f"{FAULTY}{os.pathsep}{env['PYTHONPATH']}"
    for key in ("PYTHONPATH", "OMP_NUM_THREADS"):
        monkeypatch.setenv(key, env[key])  # the nodes' workers inherit this process's environment
    loopback = {"node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, **loopback})
    workers = [_add_node(cluster) for _ in range(2)]  # 3 nodes with a CPU each; a worker node will be removed
    cluster.wait_for_nodes()
    env["RAY_ADDRESS"] = cluster.address
    args = ["task=faulty", "algo=random", "task.noise_std=0.1", f"budget.rounds={ROUNDS}"]
    try:
        proc = subprocess.Popen([sys.executable, "-m", "hpoflow", "--config-dir", str(FAULTY / "conf"), "-m",
                                 "hydra/launcher=ray", *args, "task.delay=0.5", f"seed=range(0,{JOBS})",
                                 f"tracking.uri={tracking}", "tracking.experiment=cluster"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        victim, lost_runs = None, []
        deadline = time.monotonic() + 600
        while victim is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                runs = mlflow_runs(tracking, "cluster")
            except Exception:  # noqa: BLE001 - the experiment does not exist yet
                continue
            for node in workers:
                mine = [r for r in runs if r.info.status == "RUNNING"
                        and r.data.tags.get("hpoflow.node") == node.node_id]
                if any(_round(r.data.tags.get("checkpoint", "")) >= 4 for r in mine):
                    victim, lost_runs = node, mine
                    break
        if victim is None:
            proc.kill()
            raise AssertionError("no job of a worker node reached round 4 while running:\n"
                                 + proc.communicate()[0][-4000:])
        # The node dies at once, its jobs' workers with it. remove_node kills the raylet only: its Ray workers
        # notice that seconds later (2.4 s measured) and meanwhile go on running their jobs, writing the
        # checkpoint file again after it was deleted here (the retry then resumed from that file, not the
        # store: the test's flake on main and on issue-27-overhead). So the jobs' workers (each run's writer,
        # its lease pid) are frozen first and killed with the node.
        writers = [int(r.data.tags[LEASE_PID]) for r in lost_runs]
        for sig in (signal.SIGSTOP, None, signal.SIGKILL):
            if sig is None:
                cluster.remove_node(victim, allow_graceful=False)
                continue
            for pid in writers:
                with contextlib.suppress(ProcessLookupError):  # its job ended since the runs were read
                    os.kill(pid, sig)
        removed_at = time.monotonic()
        if tracking.startswith("http"):  # no shared disk: the lost node's run folders go with it
            for run in lost_runs:
                Path(run.data.tags["checkpoint"]).unlink(missing_ok=True)
        out, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.shutdown()
    account = [ln for ln in out.splitlines() if ln.startswith("study cluster:")]
    print("\n".join(ln for ln in out.splitlines() if "retrying" in ln or ln.startswith(("study", "Error"))))
    assert proc.returncode == 0, out[-4000:]
    runs = mlflow_runs(tracking, "cluster", parents=True)
    parents = [r for r in runs if r.data.tags.get("hpoflow.kind") == "study"]
    jobs = [r for r in runs if r.data.tags.get("hpoflow.kind") != "study"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert len(jobs) == JOBS and Counter(r.info.status for r in jobs) == {"FINISHED": JOBS}
    assert {r.data.tags["mlflow.parentRunId"] for r in jobs} == {parents[0].info.run_id}
    histories = {r.info.run_id: _history(tracking, r.info.run_id) for r in jobs}
    for history in histories.values():  # every metric step exactly once
        for key in KEYS:
            assert [s for s, _ in history[key]] == list(range(1, ROUNDS + 1)), key
    resumed = [r for r in jobs if "resumed_at_round" in r.data.tags]
    moved = [r for r in resumed if r.data.tags.get("hpoflow.node") == victim.node_id
             and r.data.tags.get("hpoflow.resumed_node") not in (None, victim.node_id)]
    assert moved, [r.data.tags for r in resumed]
    source = "store" if tracking.startswith("http") else "file"
    assert all(r.data.tags["hpoflow.resumed_from"] == source for r in moved)
    assert account and f"{JOBS} new" in account[0] and "0 failed" in account[0]
    retried = int(account[0].split(" retried")[0].rsplit(" ", 1)[-1])
    assert retried >= len(moved)

    ref_uri = f"sqlite:///{tmp_path / 'ref.db'}"  # an uninterrupted run of the first moved job's config
    seed = moved[0].data.params["seed"]
    subprocess.run([sys.executable, "-m", "hpoflow", "--config-dir", str(FAULTY / "conf"), *args, f"seed={seed}",
                    f"tracking.uri={ref_uri}"], cwd=tmp_path, env=cli_env() | {"PYTHONPATH": env["PYTHONPATH"]},
                   check=True, capture_output=True, timeout=300)
    (ref,) = mlflow_runs(ref_uri)
    assert histories[moved[0].info.run_id] == _history(ref_uri, ref.info.run_id)
    print(f"cluster: head + 2 worker nodes on 127.0.0.1 (a CPU each); tracking {tracking.split(':')[0]} "
          f"({'PostgreSQL-backed server' if tracking.startswith('http') else 'SQLite'}); removed node "
          f"{victim.node_id[:8]} while it ran {len(lost_runs)} job(s); {len(moved)} run(s) resumed on another node "
          f"from the checkpoint in the {source} (rounds {[r.data.tags['resumed_at_round'] for r in moved]}), "
          f"history equal to an uninterrupted run; {len(jobs)} FINISHED runs under 1 parent, every step once; "
          f"{account[0]}; the study ended {time.monotonic() - removed_at:.0f} s after the removal")
