"""Checkpoints kept in the tracking store (``http(s)://``): two alternating hash-checked slots, and a resume
that finds no local file reads the store's copy."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hpoflow.core.checkpoint import Checkpointer, LoopState, load
from hpoflow.core.records import Record
from hpoflow.store.checkpoint_artifacts import ARTIFACT_DIR, SLOTS, ArtifactMirror, fetch, in_store
from tests.conftest import cli_env, mlflow_runs


class FolderClient:
    """The two MlflowClient calls the mirror uses, on a local folder (one run)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def log_artifact(self, run_id: str, path: str, artifact_path: str) -> None:
        (self.root / artifact_path).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, self.root / artifact_path / Path(path).name)

    def download_artifacts(self, run_id: str, path: str, dst: str) -> str:
        Path(dst).mkdir(parents=True, exist_ok=True)
        if not (self.root / path).is_file():
            raise OSError(f"no artifact {path}")
        return shutil.copy(self.root / path, dst)


def _save_rounds(checkpointer: Checkpointer, n: int) -> None:
    state = LoopState()
    for r in range(1, n + 1):
        state.add(Record(round=r, config={"x": 0.1 * r}, value=float(r)), {"value": float(r), "query_cost": float(r)})
        checkpointer.save(state)


def test_servers_and_shared_databases_mirror_checkpoints_sqlite_does_not():
    assert in_store("http://127.0.0.1:5000") and in_store("HTTPS://host")
    assert in_store("postgresql://u@h/db") and in_store("postgresql+psycopg2://u:p@127.0.0.1:5433/mlflow")
    assert in_store("mysql+pymysql://u@h/db") and in_store("mssql+pyodbc://u@h/db")
    assert not in_store("sqlite:///outputs/mlflow.db") and not in_store("file:///tmp/mlruns")
    assert not in_store("/tmp/mlruns") and not in_store("") and not in_store(None)
    assert not in_store("postgres-ish") and not in_store("httpx://h")


def test_saves_alternate_between_two_slots_and_the_newest_valid_copy_is_fetched(tmp_path):
    client = FolderClient(tmp_path / "store")
    checkpointer = Checkpointer(tmp_path / "run" / "checkpoint.json", {"run_id": "r"})
    checkpointer.mirror = ArtifactMirror(client, "r")
    _save_rounds(checkpointer, 3)  # rounds 1, 2, 3 -> slots a, b, a
    rounds = {name: json.loads((tmp_path / "store" / ARTIFACT_DIR / name).read_text())["round"] for name in SLOTS}
    assert rounds == {"a.json": 3, "b.json": 2}
    got = fetch(client, "r", tmp_path / "elsewhere" / "checkpoint.json")
    assert got is not None and got[1] == 0 and load(got[0]).round == 3

    torn = tmp_path / "store" / ARTIFACT_DIR / "a.json"  # an upload cut short: the hash no longer matches
    torn.write_text(torn.read_text()[:-40])
    got = fetch(client, "r", tmp_path / "elsewhere2" / "checkpoint.json")
    assert got is not None and got[1] == 1 and load(got[0]).round == 2  # the other slot, whole
    (tmp_path / "store" / ARTIFACT_DIR / "b.json").write_text("{}")
    assert fetch(client, "r", tmp_path / "elsewhere3" / "checkpoint.json") is None


def test_a_finished_checkpoint_is_not_uploaded(tmp_path):
    client = FolderClient(tmp_path / "store")
    checkpointer = Checkpointer(tmp_path / "run" / "checkpoint.json")
    checkpointer.mirror = ArtifactMirror(client, "r")
    state = LoopState()
    state.add(Record(round=1, config={"x": 0.1}, value=1.0), {"value": 1.0})
    checkpointer.save(state, status="FINISHED")
    assert not (tmp_path / "store").exists()


@pytest.mark.cli
@pytest.mark.slow
def test_resume_by_run_id_reads_the_store_copy_when_the_run_folder_is_gone(tmp_path):
    """SIGKILL a run tracked on an http server, delete its run folder (its node is gone), resume it by run id
    from another folder: it continues from the store's checkpoint, history equal to an uninterrupted run."""
    from mlflow.tracking import MlflowClient

    from tests.cluster.servers import sqlite_server

    # 600 cheap rounds (a few seconds): the run folder's file may trail the run by a quarter second of rounds
    # (deferred writes), so a 50-round run was often past its last flush, or FINISHED, when the file said 8
    args = ["algo=random", "task=branin", "task.noise_std=0.5", "budget.rounds=600", "seed=3"]
    keys = ("value", "best_value", "regret", "simple_regret", "query_cost")
    with sqlite_server(tmp_path / "server") as uri:
        (tmp_path / "a").mkdir()
        victim = subprocess.Popen([sys.executable, "-m", "hpoflow", *args, f"tracking.uri={uri}"], cwd=tmp_path / "a",
                                  env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240
        round_ = 0
        while round_ < 8 and time.monotonic() < deadline and victim.poll() is None:
            time.sleep(0.2)
            for path in (tmp_path / "a").glob("outputs/runs/*/*/checkpoint.json"):
                try:
                    round_ = json.loads(path.read_text().split(',"rounds":')[0] + "}")["round"]
                except ValueError:
                    pass
        victim.send_signal(signal.SIGKILL)
        assert victim.wait() == -signal.SIGKILL, "the run ended before it could be killed"
        (run,) = mlflow_runs(uri)
        shutil.rmtree(tmp_path / "a")  # the run folder is gone with its node
        (tmp_path / "b").mkdir()
        proc = subprocess.run([sys.executable, "-m", "hpoflow", f"resume={run.info.run_id}", f"tracking.uri={uri}"],
                              cwd=tmp_path / "b", env=cli_env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        client = MlflowClient(tracking_uri=uri)
        resumed = client.get_run(run.info.run_id)
        assert resumed.info.status == "FINISHED" and int(resumed.data.tags["resumed_at_round"]) >= 1
        slots = {a.path for a in client.list_artifacts(run.info.run_id, ARTIFACT_DIR)}
        assert slots == {f"{ARTIFACT_DIR}/{name}" for name in SLOTS}
        history = {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k)) for k in keys}
    ref_uri = f"sqlite:///{tmp_path / 'ref.db'}"
    subprocess.run([sys.executable, "-m", "hpoflow", *args, f"tracking.uri={ref_uri}"], cwd=tmp_path, env=cli_env(),
                   check=True, capture_output=True, timeout=300)
    (ref,) = mlflow_runs(ref_uri)
    ref_client = MlflowClient(tracking_uri=ref_uri)
    expected = {k: sorted((m.step, m.value) for m in ref_client.get_metric_history(ref.info.run_id, k)) for k in keys}
    print(f"\nkilled after round {round_}, resumed at round {resumed.data.tags['resumed_at_round']} from the "
          f"store's copy; {len(history['query_cost'])} steps, each once, equal to an uninterrupted run")
    assert history == expected


def test_a_throttled_mirror_uploads_the_first_save_then_after_each_metric_flush(tmp_path):
    client = FolderClient(tmp_path / "store")
    checkpointer = Checkpointer(tmp_path / "run" / "checkpoint.json", {"run_id": "r"})
    mirror = ArtifactMirror(client, "r", throttle_s=1e9)
    mirror.after_flush(checkpointer.path)  # nothing saved yet: nothing uploaded
    checkpointer.mirror = mirror
    _save_rounds(checkpointer, 5)  # quick rounds: only round 1 goes to the store
    assert mirror.uploads == 1 and load(tmp_path / "store" / ARTIFACT_DIR / "a.json").round == 1
    mirror.after_flush(checkpointer.path)  # the tracker wrote a metric batch: the store copy catches up
    assert mirror.uploads == 2 and load(tmp_path / "store" / ARTIFACT_DIR / "b.json").round == 5
    checkpointer.mirror = ArtifactMirror(client, "r", throttle_s=0.0)  # throttle passed: every save again
    _save_rounds(checkpointer, 2)
    assert checkpointer.mirror.uploads == 2


def test_the_tracker_calls_after_flush_for_every_metric_batch_but_not_in_a_finished_end(store):
    from hpoflow.core.records import OnError
    from hpoflow.runner.loop import Budget, run
    from hpoflow.store.mlflow_tracker import MlflowTracker
    from tests.runner.test_loop import Flaky, _algo

    for task, rounds, expected in ((Flaky(), 10, [4, 8]), (Flaky(interrupt_on={7}), 10, [4, 6])):
        tracker = MlflowTracker(store, "mirror", "r", flush_every=4, flush_seconds=1e9)
        tracker.start({"task": {"name": "flaky"}}, {"algo": "random"})
        calls: list[int] = []
        tracker.after_flush = lambda t=tracker, c=calls: c.append(len(t._rows))  # rounds logged at each call
        try:
            run(task, _algo(task), tracker, Budget(rounds), on_error=OnError.FAIL)
        except KeyboardInterrupt:
            pass
        assert calls == expected  # a KILLED end's last flush is followed by one (the resume needs that copy)
