"""The README's "Running a study on a Ray cluster", "SLURM", "A shared tracking server" and "A large study
straight into the database" sections, run as the user would run them (each
section's commands as one bash script, in order, ports replaced by free ones). Skipped without the cluster extra
(ray, hydra-submitit-launcher) or PostgreSQL."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess

import pytest

from tests.cluster.servers import HAVE_PG, free_port, server_folder
from tests.docs_pages import ROUNDS, shrink
from tests.test_readme import section_commands, shell_env

HAVE_RAY = importlib.util.find_spec("ray") is not None
HAVE_SUBMITIT = importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None


def _script(title: str, replace: dict[str, str], shrunk: bool = False) -> str:
    """The section's commands as one bash script; ``shrunk``: hpoflow jobs at ``ROUNDS`` rounds, as the docs' page
    tests run them (tests/docs_pages.py), where the checks do not need long jobs."""
    lines = [shrink(line) if shrunk else line for line in section_commands(title)]
    cleanup = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"  # a failed step must not leave the Ray head running
    text = "\n".join(["set -euo pipefail", cleanup, *lines])
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


# run right after the README waits for the head node: the addresses Ray's processes listen on
LISTENERS = """python -c "import psutil, time
def listening():
    out = set()
    for p in psutil.process_iter(['name', 'environ']):
        if (p.info['environ'] or {}).get('RAY_AUTH_TOKEN_PATH') == '$RAY_AUTH_TOKEN_PATH':
            out |= {(p.info['name'], c.laddr.ip) for c in p.net_connections('inet') if c.status == 'LISTEN'}
    return out
deadline = time.monotonic() + 60
while not {'gcs_server', 'raylet'} <= {n for n, _ in listening()} and time.monotonic() < deadline:
    time.sleep(0.5)
print(*(f'{n} {ip}' for n, ip in sorted(listening())), sep=chr(10))" > listeners.txt"""


@pytest.mark.cli
@pytest.mark.skipif(not (HAVE_RAY and HAVE_PG), reason="needs ray (pip install 'hpoflow[cluster]') and PostgreSQL")
def test_the_ray_cluster_walkthrough_runs(tmp_path):
    """In the default run (CI): about a minute. A Ray release that changes authentication, addresses or worker
    loss fails here."""
    from tests.test_readme import scratch

    port, ray_port = free_port(), free_port()
    server_dir = server_folder("hpoflow-readme-server-")
    wait = next(line for line in section_commands("### Running a study on a Ray cluster") if "/dev/tcp/" in line)
    script = _script("### Running a study on a Ray cluster", {wait: f"{wait}\n{LISTENERS}",  # first: it has 6379
                                                              "127.0.0.1:5000": f"127.0.0.1:{port}",
                                                              "PORT=5000": f"PORT={port}", "6379": str(ray_port)})
    env = shell_env() | {"HPOFLOW_SERVER_DIR": server_dir, "PG_PORT": str(free_port())}
    for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        env.pop(key, None)  # exactly the README's settings
    work = scratch(tmp_path)
    try:
        proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run(["bash", "scripts/tracking_server.sh", "stop"], cwd=work, env=env | {"PORT": str(port)},
                       capture_output=True, timeout=120)
    out = proc.stdout + proc.stderr
    print("\n".join(ln for ln in out.splitlines() if "retrying" in ln or ln.startswith(("study cluster", "Error"))))
    assert proc.returncode == 0, out[-5000:]
    assert "retrying (1 of 2), it resumes from its checkpoint" in out
    assert "study cluster: 0 finished (skipped), 0 resumed, 4 new, 1 retried, 0 failed; 4 runs in the store" in out
    assert (work / "outputs" / "report" / "cluster" / "summary.csv").is_file()
    token = work / "outputs" / "ray_auth_token"
    assert token.stat().st_mode & 0o777 == 0o600 and len(token.read_text().strip()) == 64
    assert token.read_text().strip() not in out
    assert "Token authentication is disabled" not in out  # the README's comment: the cluster uses the token
    listeners = (work / "listeners.txt").read_text().split()
    names, addresses = set(listeners[0::2]), set(listeners[1::2])
    assert "gcs_server" in names and "raylet" in names, listeners
    assert addresses <= {"127.0.0.1", "::ffff:127.0.0.1"}, listeners  # GCS, raylet, workers: loopback only


@pytest.mark.cli
@pytest.mark.skipif(not HAVE_SUBMITIT, reason="hydra-submitit-launcher is not installed (the cluster extra)")
def test_the_slurm_section_runs_locally(tmp_path):
    from tests.test_readme import scratch

    script = _script("### SLURM", {})
    proc = subprocess.run(["bash", "-c", script], cwd=scratch(tmp_path), env=shell_env(), capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "study branin: 0 finished (skipped), 0 resumed, 2 new, 0 retried, 0 failed" in proc.stdout


@pytest.mark.cli
@pytest.mark.skipif(not (HAVE_RAY and HAVE_PG), reason="needs ray (pip install 'hpoflow[cluster]') and PostgreSQL")
def test_the_straight_into_the_database_section_runs(tmp_path):
    from mlflow.tracking import MlflowClient

    from tests.conftest import mlflow_runs
    from tests.test_readme import scratch

    port, pg_port = free_port(), free_port()
    server_dir = server_folder("hpoflow-readme-db-")
    script = _script("### A large study straight into the database", {
        "PORT=5000": f"PORT={port}", "PG_PORT=5433": f"PG_PORT={pg_port}", "127.0.0.1:5433": f"127.0.0.1:{pg_port}",
        "outputs/tracking_server/pg_password": f"{server_dir}/pg_password"}, shrunk=True)
    env = shell_env() | {"HPOFLOW_SERVER_DIR": server_dir}
    work = scratch(tmp_path)
    try:
        proc = subprocess.run(["bash", "-c", script.replace("scripts/tracking_server.sh stop", "")], cwd=work,
                              env=env, capture_output=True, text=True, timeout=1200)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-5000:]
        with open(f"{server_dir}/pg_password") as fh:
            password = fh.read().strip()
        uri = f"postgresql+psycopg2://mlflow:{password}@127.0.0.1:{pg_port}/mlflow"
        runs = mlflow_runs(uri, "direct")
        client = MlflowClient(tracking_uri=uri)
        assert len(runs) == 8 and {r.info.status for r in runs} == {"FINISHED"}
        steps = list(range(1, ROUNDS + 1))  # every round's value logged once
        assert all(sorted(m.step for m in client.get_metric_history(r.info.run_id, "query_cost")) == steps
                   for r in runs)
        assert password not in out
    finally:
        subprocess.run(["bash", "scripts/tracking_server.sh", "stop"], cwd=work, env=env | {"PORT": str(port)},
                       capture_output=True, timeout=120)
        shutil.rmtree(server_dir, ignore_errors=True)
    assert "study direct: 0 finished (skipped), 0 resumed, 8 new, 0 retried, 0 failed; 8 runs in the store" in out
    assert (work / "outputs" / "report" / "direct" / "summary.csv").is_file()


@pytest.mark.cli
@pytest.mark.skipif(not HAVE_PG, reason="needs PostgreSQL's binaries and psycopg2 (pip install 'hpoflow[cluster]')")
def test_the_shared_tracking_server_section_runs(tmp_path):
    from tests.conftest import mlflow_runs
    from tests.test_readme import scratch

    port, pg_port = free_port(), free_port()
    server_dir = server_folder("hpoflow-readme-server-")
    lines = [shrink(line) for line in section_commands("### A shared tracking server (PostgreSQL)")
             if not line.startswith("apt-get install")]  # what the README installs, this machine has (HAVE_PG)
    script = "\n".join(["set -euo pipefail", *lines]).replace("127.0.0.1:5000", f"127.0.0.1:{port}")
    env = shell_env() | {"HPOFLOW_SERVER_DIR": server_dir, "PORT": str(port), "PG_PORT": str(pg_port)}
    work = scratch(tmp_path)
    try:
        proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
        restart = subprocess.run(["bash", "scripts/tracking_server.sh", "start"], cwd=work, env=env,
                                 capture_output=True, text=True, timeout=300)  # the store outlives the server
        assert restart.returncode == 0, restart.stderr[-3000:]
        runs = mlflow_runs(f"http://127.0.0.1:{port}")
        assert len(runs) == 4 and {r.info.status for r in runs} == {"FINISHED"}
        assert sorted(r.data.tags["algo"] for r in runs) == ["gp_ei", "gp_ei", "random", "random"]
    finally:
        subprocess.run(["bash", "scripts/tracking_server.sh", "stop"], cwd=work, env=env, capture_output=True,
                       timeout=120)
        shutil.rmtree(server_dir, ignore_errors=True)
