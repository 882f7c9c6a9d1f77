"""Reliability guarantees through the real CLI: one writer per run, SIGTERM, stale runs, unique folders,
verified checkpoints, a lost store, a dead server's password, resume with the original command line."""
from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.checkpoint import FILENAME
from tests.cli.test_failures_cli import FAULTY, faulty_env
from tests.cli_server import WarmProcess, fresh_interpreter_wanted, warm_server
from tests.conftest import mlflow_runs

pytestmark = pytest.mark.cli  # every test starts python -m hpoflow in a subprocess (make test-fast skips it)

ROUNDS = 40  # 0.3 s each: the winner of two resumes still runs ~11 s when the other starts
SLOW = ["--config-dir", str(FAULTY / "conf"), "task=faulty", "task.noise_std=0.5", "algo=random", "seed=2",
        "tracking.flush_every=1", "tracking.heartbeat_s=1"]  # a sleeping objective: time to act mid-run
KEYS = ("value", "best_value", "regret", "cumulative_regret", "query_cost")
PASSWORD = "hunter2"


@pytest.fixture(autouse=True)
def _server_started() -> None:
    """The warm server is up before a test starts its clock (a lease's heartbeat, a kill at round k)."""
    if not fresh_interpreter_wanted():
        warm_server(faulty_env()).start()


def _popen(cwd: Path, *args: str) -> subprocess.Popen | WarmProcess:
    """``python -m hpoflow *args`` started in ``cwd`` (forked from the warm server; see tests/cli_server.py)."""
    cwd.mkdir(parents=True, exist_ok=True)
    if fresh_interpreter_wanted():
        return subprocess.Popen([sys.executable, "-m", "hpoflow", *args], cwd=cwd, env=faulty_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return warm_server(faulty_env()).popen("hpoflow", list(args), cwd)


def _cli(cwd: Path, *args: str, module: str = "hpoflow", timeout: float = 600) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    if fresh_interpreter_wanted():
        return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=faulty_env(), capture_output=True,
                              text=True, timeout=timeout, check=False)
    return warm_server(faulty_env()).run(module, list(args), cwd, timeout)


def _checkpoint(cwd: Path) -> Path | None:
    return next(iter(cwd.glob(f"outputs/runs/*/*/{FILENAME}")), None)


def _round(cwd: Path) -> int:
    path = _checkpoint(cwd)
    try:
        return int(json.loads(path.read_text())["round"]) if path else 0
    except (OSError, ValueError, KeyError):  # replaced between the glob and the read
        return 0


def _wait_for_round(proc: subprocess.Popen, cwd: Path, target: int) -> None:
    deadline = time.time() + 300
    while proc.poll() is None and _round(cwd) < target and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended before round {target}: {proc.communicate()[1][-2000:]}"


def _steps(uri: str, run_id: str, key: str = "query_cost") -> list[int]:
    return sorted(m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, key))


def _errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and " INFO " not in ln and "Warning" not in ln]


def test_two_concurrent_resumes_one_writer_wins_and_stale_runs_are_found(tmp_path, new_store):
    uri = new_store("m.db")
    victim = _popen(tmp_path / "run", *SLOW, "task.delay=0.3", f"budget.rounds={ROUNDS}", f"tracking.uri={uri}")
    _wait_for_round(victim, tmp_path / "run", 3)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    (crashed,) = mlflow_runs(uri)
    assert crashed.info.status == "RUNNING"

    stale = _cli(tmp_path, "stale", f"tracking.uri={uri}", module="hpoflow.store.runs")
    assert stale.returncode == 0 and crashed.info.run_id in stale.stdout and "1 stale run(s)" in stale.stdout

    folder = str(_checkpoint(tmp_path / "run").parent)
    first, second = (_popen(tmp_path / "run", f"resume={folder}", f"tracking.uri={uri}") for _ in range(2))
    results = [(p.wait(timeout=600), *p.communicate()) for p in (first, second)]
    codes = sorted(code for code, _, _ in results)
    loser = next((err for code, _, err in results if code != 0), "")
    print(f"\nconcurrent resumes: exit codes {codes}; the loser said: {_errors(loser)}")
    assert codes == [0, 2], [err[-2000:] for _, _, err in results]
    assert len(_errors(loser)) == 1 and "being written by owner" in loser and "Traceback" not in loser
    run = MlflowClient(tracking_uri=uri).get_run(crashed.info.run_id)
    assert run.info.status == "FINISHED"
    for key in KEYS:  # no duplicate row: every round exactly once
        assert _steps(uri, crashed.info.run_id, key) == list(range(1, ROUNDS + 1)), key
    after = _cli(tmp_path, "stale", f"tracking.uri={uri}", module="hpoflow.store.runs")
    assert "0 stale run(s)" in after.stdout


def test_stale_running_run_is_marked_failed_and_a_live_one_is_left_alone(store, tmp_path):
    from hpoflow.store.backend import get_or_create_experiment, make_client
    from hpoflow.store.lease import Lease

    client = make_client(store)
    exp = get_or_create_experiment(client, "e", None)
    me = Lease.mine()
    dead = Lease("d" * 32, "another-host", 4242, time.time() - 3600, 10.0)  # silent for an hour
    dead_id = client.create_run(exp, tags=dead.tags(), run_name="dead").info.run_id
    live_id = client.create_run(exp, tags=me.tags(), run_name="live").info.run_id
    foreign_id = client.create_run(exp, run_name="not-hpoflow").info.run_id

    proc = _cli(tmp_path, "stale", "--mark-failed", f"tracking.uri={store}", module="hpoflow.store.runs")
    print(f"\n{proc.stdout}")
    assert proc.returncode == 0 and dead_id in proc.stdout and live_id not in proc.stdout
    assert "1 stale run(s)" in proc.stdout and "1 RUNNING run(s) without an hpoflow lease" in proc.stdout
    marked = client.get_run(dead_id)
    assert marked.info.status == "FAILED" and "stale: its writer is gone" in marked.data.tags["error"]
    assert client.get_run(live_id).info.status == client.get_run(foreign_id).info.status == "RUNNING"
    bad = _cli(tmp_path, "stale", "tracking.nope=1", module="hpoflow.store.runs")
    assert bad.returncode == 2 and bad.stderr.startswith("Error: 'tracking.nope=1' is not a setting")


def test_sigterm_at_a_random_round_kills_cleanly_and_resume_is_exact(tmp_path, new_store):
    rounds, at = 12, random.Random().randint(2, 8)
    ref_uri, uri = new_store("ref.db"), new_store("m.db")
    args = [*(a for a in SLOW if a != "tracking.flush_every=1"), "task.delay=0.25", f"budget.rounds={rounds}",
            "tracking.flush_every=100"]  # all buffered (a key given twice is refused)
    reference = _popen(tmp_path / "ref", *args, f"tracking.uri={ref_uri}")
    victim = _popen(tmp_path / "run", *args, f"tracking.uri={uri}")
    _wait_for_round(victim, tmp_path / "run", at)
    victim.send_signal(signal.SIGTERM)
    code, (_, stderr) = victim.wait(timeout=300), victim.communicate()
    done = _round(tmp_path / "run")
    (killed,) = mlflow_runs(uri)
    logged = _steps(uri, killed.info.run_id)
    context = f"SIGTERM after round {at} (checkpoint at {done}), logged {logged}"
    print(f"\nsigterm: {context}; exit {code}; stderr: {_errors(stderr)}")
    assert code == 128 + signal.SIGTERM and "Traceback" not in stderr, stderr[-2000:]
    assert _errors(stderr) == [_errors(stderr)[0]] and _errors(stderr)[0].startswith(
        "Error: interrupted by SIGTERM (signal 15): the run is KILLED with every completed round logged")
    assert killed.info.status == "KILLED" and "SIGTERM" in killed.data.tags["error"], context
    assert logged in (list(range(1, done + 1)), list(range(1, done + 2))), context  # nothing lost from the buffer

    resumed = _cli(tmp_path / "run", f"resume={_checkpoint(tmp_path / 'run').parent}", f"tracking.uri={uri}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert reference.wait(timeout=600) == 0, reference.communicate()[1][-3000:]
    (ref,) = mlflow_runs(ref_uri)
    client, ref_client = MlflowClient(tracking_uri=uri), MlflowClient(tracking_uri=ref_uri)
    assert client.get_run(killed.info.run_id).info.status == "FINISHED"
    for key in KEYS:
        mine = sorted((m.step, m.value) for m in client.get_metric_history(killed.info.run_id, key))
        expected = sorted((m.step, m.value) for m in ref_client.get_metric_history(ref.info.run_id, key))
        assert mine == expected, f"{key}: {context}"


def test_resume_accepts_the_original_command_and_refuses_changes_and_tampering(tmp_path, new_store):
    from hpoflow.core.checkpoint import load, save

    uri = new_store("m.db")
    original = ["task=branin", "algo=random", "budget.rounds=4", "seed=3", f"tracking.uri={uri}"]
    assert _cli(tmp_path, *original).returncode == 0
    path = _checkpoint(tmp_path)
    (run,) = mlflow_runs(uri)
    before = (run.info.status, _steps(uri, run.info.run_id), path.read_text())

    same = _cli(tmp_path, *original, f"resume={path.parent}")
    assert same.returncode == 0 and "nothing to do" in same.stdout, same.stderr[-2000:]
    refused = {}
    refused["changed override"] = _cli(tmp_path, *original[:3], "seed=4", original[4], f"resume={path.parent}")
    # a consistent copy from round 2, as if the outputs tree was copied then (same run folder names)
    older = tmp_path / "older" / path.parent.parent.name / path.parent.name / FILENAME
    state = load(path)
    state.round, state.rounds_json = 2, state.rounds_json[:2]
    state.meta = {**state.meta, "status": "RUNNING"}
    save(older, state)
    refused["older copy"] = _cli(tmp_path, f"resume={older}", f"tracking.uri={uri}")
    text = json.loads(path.read_text())
    for name, edit in (("round 999", {"round": 999}), ("rounds cut to 2", {"rounds": text["rounds"][:2]})):
        forged = tmp_path / name.replace(" ", "_") / FILENAME  # edited in place: the hash stays first
        forged.parent.mkdir()
        forged.write_text(json.dumps({**text, **edit}, separators=(",", ":")))
        refused[name] = _cli(tmp_path, f"resume={forged}", f"tracking.uri={uri}")
    for name, proc in refused.items():
        print(f"\n{name:18s} exit {proc.returncode}: {_errors(proc.stderr)}", end="")
    for name, proc in refused.items():
        assert proc.returncode == 2 and len(_errors(proc.stderr)) == 1 and "Traceback" not in proc.stderr, name
    assert "'seed=4' differs" in refused["changed override"].stderr
    assert "FINISHED in the store" in refused["older copy"].stderr
    assert "SHA-256" in refused["round 999"].stderr and "SHA-256" in refused["rounds cut to 2"].stderr
    (run,) = mlflow_runs(uri)
    assert (run.info.status, _steps(uri, run.info.run_id), path.read_text()) == before  # nothing changed


def test_concurrent_runs_never_share_a_folder(tmp_path, new_store):
    uri = new_store("m.db")
    procs = [_popen(tmp_path, "task=branin", "algo=random", f"seed={s}", "budget.rounds=2", f"tracking.uri={uri}")
             for s in (0, 1)]
    assert [p.wait(timeout=600) for p in procs] == [0, 0], [p.communicate()[1][-2000:] for p in procs]
    checkpoints = sorted(tmp_path.glob(f"outputs/runs/*/*/{FILENAME}"))
    assert len(checkpoints) == 2 and checkpoints[0].parent != checkpoints[1].parent
    assert {json.loads(p.read_text())["meta"]["run_id"] for p in checkpoints} == {
        r.info.run_id for r in mlflow_runs(uri)
    }


def test_store_deleted_mid_run_fails_loudly_and_keeps_the_checkpoint(tmp_path):
    store = tmp_path / "store"
    proc = _popen(tmp_path / "run", *SLOW, "task.delay=0.3", "budget.rounds=40", f"tracking.uri=sqlite:///{store}/m.db")
    _wait_for_round(proc, tmp_path / "run", 3)
    shutil.rmtree(store)
    code, (_, stderr) = proc.wait(timeout=300), proc.communicate()
    print(f"\nstore deleted at round 3: exit {code}: {_errors(stderr)}")
    assert code == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert len(_errors(stderr)) == 1 and "vanished during the run" in stderr and "its checkpoint is kept" in stderr
    assert 3 <= _round(tmp_path / "run") < 40


def test_dead_http_store_fails_fast_without_leaking_the_password(tmp_path):
    start = time.perf_counter()
    proc = _cli(tmp_path, "task=branin", "algo=random", "budget.rounds=2",
                f"tracking.uri=http://bob:{PASSWORD}@127.0.0.1:1")
    elapsed = time.perf_counter() - start
    print(f"\ndead http store: exit {proc.returncode} after {elapsed:.1f} s wall: {_errors(proc.stderr)}")
    assert proc.returncode == 2 and len(_errors(proc.stderr)) == 1 and "tracking.uri" in proc.stderr
    assert elapsed < 40  # the guarantee is ~15 s of retries; wall time on a loaded machine adds start-up
    assert PASSWORD not in proc.stdout + proc.stderr
    leaks = [str(p) for p in tmp_path.rglob("*") if p.is_file() and PASSWORD in p.read_text(errors="replace")]
    assert not leaks, leaks  # .hydra/config.yaml, hydra.yaml, overrides.yaml
