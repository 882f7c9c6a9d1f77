"""Fencing and the verified final flush, against a real SQLite store.

A writer whose lease was taken over while it was paused writes nothing more (no metric, no status, no
checkpoint); a store lost in the last flush interval makes ``finish`` raise and leaves a resumable checkpoint.
"""
from __future__ import annotations

import os

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.checkpoint import Checkpointer, load
from hpoflow.core.records import Evaluation
from hpoflow.runner.loop import Budget, run
from hpoflow.store import lease as L
from hpoflow.store.health import StoreLost
from hpoflow.store.mlflow_tracker import MlflowTracker
from tests.runner.test_loop import Flaky, _algo


def _steps(uri: str, run_id: str) -> list[int]:
    return sorted(m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, "query_cost"))


class TakenOverAt(Flaky):
    """At round ``at``: this writer is 'paused' past the grace period and another process takes the run over."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.tracker, self.thief = at, None, None

    def evaluate(self, config, *, round, observe=True):
        if round == self.at:
            self.tracker._heartbeat.beat_at -= 1000.0  # what kill -STOP for 1,000 s does to the writer's clock
            self.thief = L.acquire(self.tracker.client, self.tracker.run_id, grace_s=-1.0)  # the resume's claim
        return Evaluation(value=config["x"] ** 2, cost=2.0)


def test_each_claim_raises_the_epoch_and_release_keeps_it(store):
    tracker = MlflowTracker(store, "fence", heartbeat_s=60)
    tracker.start({"seed": 0}, {})
    client, run_id = tracker.client, tracker.run_id
    assert L.read_lease(client, run_id).epoch == 1
    second = L.acquire(client, run_id, grace_s=-1.0)
    L.release(client, run_id, second)
    assert L.epoch_of(client.get_run(run_id).data.tags) == 2  # the fencing token outlives a release
    assert L.acquire(client, run_id).epoch == 3
    with pytest.raises(L.LeaseLost, match="epoch 3, this process held 1"):
        tracker._heartbeat.beat_at -= 1000.0
        tracker.fence()
    tracker._heartbeat.stop()


@pytest.mark.parametrize("flush_every", [1, 100])
def test_a_paused_writer_taken_over_writes_no_metric_no_status_and_no_checkpoint(store, tmp_path, flush_every):
    task = TakenOverAt(at=6)
    tracker = MlflowTracker(store, "fence", flush_every=flush_every, heartbeat_s=60)  # the heartbeat never notices
    tracker.start({"seed": 0}, {})
    task.tracker = tracker
    path = tmp_path / "checkpoint.json"
    with pytest.raises(L.LeaseLost, match="taken over"):
        run(task, _algo(task), tracker, Budget(10), checkpoint=Checkpointer(path, {"run_id": tracker.run_id}))
    client = MlflowClient(tracking_uri=store)
    run_ = client.get_run(tracker.run_id)
    assert _steps(store, tracker.run_id) == ([1, 2, 3, 4, 5] if flush_every == 1 else [])  # round 6: never
    assert run_.info.status == "RUNNING" and "error" not in run_.data.tags  # the new owner's run, untouched
    assert L.read_lease(client, tracker.run_id).owner == task.thief.owner
    assert load(path).round == 5 and load(path).meta["status"] == "RUNNING"  # round 6's checkpoint: never


def test_a_store_lost_in_the_last_flush_interval_raises_and_the_run_resumes(tmp_path):
    db = tmp_path / "m.db"
    store, path = f"sqlite:///{db}", tmp_path / "checkpoint.json"
    task = Flaky()
    tracker = MlflowTracker(store, "fence", flush_every=100, heartbeat_s=60)  # all 10 rounds in the last flush
    tracker.start({"seed": 0}, {})

    def lose_store_after_last_round(record, metrics):
        if record.round == 10:
            os.rename(db, tmp_path / "away.db")  # the store vanishes before the final flush

    with pytest.raises(StoreLost, match="vanished"):
        run(task, _algo(task), tracker, Budget(10), on_round=lose_store_after_last_round,
            checkpoint=Checkpointer(path, {"run_id": tracker.run_id}, every=3))
    state = load(path)
    assert state.round == 10 and state.meta["status"] == "RUNNING"  # never FINISHED before the store is
    os.rename(tmp_path / "away.db", db)  # the store is restored: the run continues and ends, every round once
    assert MlflowClient(tracking_uri=store).get_run(tracker.run_id).info.status == "RUNNING"
    L.release(tracker.client, tracker.run_id, tracker._lease)  # its writer exits (the CLI: exit 1), lease gone
    resumed = MlflowTracker(store, "fence", run_id=tracker.run_id, heartbeat_s=60)
    resumed.start({}, {})
    task2 = Flaky()
    result = run(task2, _algo(task2), resumed, Budget(10), resume=state,
                 checkpoint=Checkpointer(path, {"run_id": tracker.run_id}))
    assert result.status.value == "FINISHED" and _steps(store, tracker.run_id) == list(range(1, 11))
    assert load(path).meta["status"] == "FINISHED"


def test_finish_verifies_that_the_store_holds_every_round(store, monkeypatch):
    tracker = MlflowTracker(store, "fence", flush_every=100, heartbeat_s=60)
    tracker.start({"seed": 0}, {})
    real = tracker.client.log_batch

    def drop_metrics(run_id, metrics=(), params=(), tags=()):  # a server that accepts the batch but loses it
        return real(run_id, metrics=[], params=params, tags=tags)

    monkeypatch.setattr(tracker.client, "log_batch", drop_metrics)
    task = Flaky()
    with pytest.raises(StoreLost, match="0 of 10 rounds"):
        run(task, _algo(task), tracker, Budget(10))
