"""Checkpoint/resume in-process: exact trajectories after an interruption, the state_dict contract, safety."""
from __future__ import annotations

import json
import math
import os
from functools import partial

import numpy as np
import pytest
import torch
from mlflow.tracking import MlflowClient

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPEIConfig, OptimizerConfig, RandomConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.checkpoint import Checkpointer, CheckpointError, LoopState, load, save
from hpoflow.core.hardware import seed_everything
from hpoflow.core.records import Direction, Evaluation, OnError, Record
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Budget, ResumeWarning, run
from hpoflow.store.mlflow_tracker import MlflowTracker
from hpoflow.surrogates.configs import GPConfig
from hpoflow.tasks.base import Task
from tests.runner.test_loop import Recorder


class Noisy(Task):
    """A noisy 2-d bowl with its own NumPy RNG; optionally interrupts (Ctrl-C) at one round."""

    name = "noisy"
    direction = Direction.MINIMIZE
    optimum = 0.0

    def __init__(self, interrupt_at: int = 0, fail_at: int = 0):
        self.space = SearchSpace.of(Float("a", -1.0, 1.0), Float("b", -1.0, 1.0))
        self.interrupt_at, self.fail_at = interrupt_at, fail_at
        self._rng = np.random.default_rng(5)

    def evaluate(self, config, *, round, observe=True):
        if round == self.interrupt_at:
            raise KeyboardInterrupt
        if round == self.fail_at:
            raise RuntimeError("boom")
        f = (config["a"] - 0.2) ** 2 + (config["b"] + 0.4) ** 2
        return Evaluation(value=f + 0.1 * self._rng.standard_normal(), true_value=f)


def _random(task):
    return RandomSearch(RandomConfig(), BuildContext(task=task, rounds=10, seed=3))


def _gp_ei(task):
    from hpoflow.surrogates.gp import build

    config = GPEIConfig(n_init=3, optimizer=OptimizerConfig(raw_samples=64, num_restarts=2, max_iter=30))
    surrogate = partial(build, GPConfig(max_iter=30), dtype=torch.float64, device=torch.device("cpu"))
    return GPEI(config, BuildContext(task=task, rounds=10, seed=3, surrogate=surrogate))


def _trajectory(records: list[Record]) -> list[tuple]:
    return [(r.round, tuple(r.config.values()), r.value, r.failed) for r in records]


@pytest.mark.parametrize("make", [_random, _gp_ei], ids=["random", "gp_ei"])
def test_interrupted_then_resumed_run_equals_uninterrupted(tmp_path, make):
    rounds = 9 if make is _gp_ei else 10
    seed_everything(3)
    task = Noisy()
    reference = run(task, make(task), None, Budget(rounds))

    seed_everything(3)
    task = Noisy(interrupt_at=6)
    with pytest.raises(KeyboardInterrupt):
        run(task, make(task), None, Budget(rounds), checkpoint=Checkpointer(tmp_path / "ck.json"))
    state = load(tmp_path / "ck.json")
    assert state.round == 5 and state.meta["status"] == "RUNNING"

    seed_everything(3)  # what the CLI does before building: a fresh task and algorithm
    task, tracker = Noisy(), Recorder()
    resumed = run(task, make(task), tracker, Budget(rounds), resume=state,
                  checkpoint=Checkpointer(tmp_path / "ck.json"))
    assert _trajectory(resumed.records) == _trajectory(reference.records)
    assert resumed.summary == reference.summary
    assert [r for r, _ in tracker.steps] == list(range(1, rounds + 1))  # old rounds re-offered to the tracker
    assert load(tmp_path / "ck.json").meta["status"] == "FINISHED"


class Counting(RandomSearch):
    """Random search implementing the state_dict contract; counts its asks."""

    asks = 0

    def ask(self, round):
        Counting.asks += 1
        return super().ask(round)

    def state_dict(self):
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state):
        self.generator.set_state(state["generator"])


def test_algorithm_state_dict_replaces_replay(tmp_path):
    def make(task):
        return Counting(RandomConfig(), BuildContext(task=task, rounds=8, seed=1))

    task = Noisy()
    reference = run(task, make(task), None, Budget(8))
    task = Noisy(fail_at=4)
    with pytest.raises(Exception, match="boom"):  # on_error=fail: round 4 is recorded as failed
        run(task, make(task), None, Budget(8), checkpoint=Checkpointer(tmp_path / "ck.json"))
    state = load(tmp_path / "ck.json")
    assert state.round == 4 and state.records[-1].failed and isinstance(state.algorithm["generator"], torch.Tensor)
    Counting.asks = 0
    resumed = run(Noisy(), make(Noisy()), None, Budget(8), resume=state, on_error=OnError.SKIP)
    assert Counting.asks == 4  # rounds 5..8 only: no replay
    assert [r.config for r in resumed.records[4:]] == [r.config for r in reference.records[4:]]
    assert resumed.summary["failed"] == 1


class Nondeterministic(RandomSearch):
    def ask(self, round):
        self.generator.manual_seed(int.from_bytes(os.urandom(4), "little"))
        return super().ask(round)


def test_nondeterministic_replay_warns_and_keeps_recorded_history(tmp_path):
    def make(task):
        return Nondeterministic(RandomConfig(), BuildContext(task=task, rounds=6, seed=0))

    with pytest.raises(KeyboardInterrupt):
        run(Noisy(interrupt_at=4), make(Noisy()), None, Budget(6), checkpoint=Checkpointer(tmp_path / "c.json"))
    state = load(tmp_path / "c.json")
    recorded = [r.config for r in state.records]
    with pytest.warns(ResumeWarning, match="round 1"):
        resumed = run(Noisy(), make(Noisy()), None, Budget(6), resume=state)
    assert [r.config for r in resumed.records[:3]] == recorded and len(resumed.records) == 6


def test_checkpoint_is_plain_data_and_refuses_pickled_objects(tmp_path):
    path = tmp_path / "ck.json"
    state = LoopState()
    state.add(Record(1, {"a": np.float64(0.5)}, np.float64(1.0), metrics={"m": 2.0}), {"value": 1.0},
              torch.zeros(2), Evaluation(1.0))
    state.book = {"best_value": 1.0, "simple_regret": math.inf}
    save(path, state)
    assert json.loads(path.read_text())["rounds"][0]["record"]["config"] == {"a": 0.5}
    assert load(path).book["simple_regret"] == math.inf
    assert not list(tmp_path.glob(".ck.json.*"))  # the temporary file was renamed over, not left behind

    torch.save({"version": 1, "evil": Recorder()}, path)  # a pickle: never unpickled
    with pytest.raises(CheckpointError, match="not a readable hpoflow checkpoint"):
        load(path)
    state.algorithm = {"model": Recorder()}
    with pytest.raises(CheckpointError, match="tensors and plain Python values"):
        save(path, state)


def test_resumed_tracker_logs_every_step_exactly_once(store):
    def rec(t):
        return Record(t, {"x": 0.1 * t}, float(t), cost=1.0)

    first = MlflowTracker(store, "resume", "r", flush_every=4, flush_seconds=1e9)
    first.start({"seed": 0}, {"algo": "random"})
    for t in range(1, 7):
        first.log(rec(t), {"value": float(t), "query_cost": float(t), "extra": 1.0})
    # "killed": rounds 1-4 were flushed, 5-6 are lost with the process; the run stays RUNNING
    client = MlflowClient(tracking_uri=store)
    first._heartbeat.stop()  # ... and its heartbeat stopped long ago: the lease is dead
    from hpoflow.store.lease import Lease, _write

    _write(client, first.run_id, Lease(first._lease.owner, first._lease.host, first._lease.pid, 0.0, 10.0))
    assert [m.step for m in client.get_metric_history(first.run_id, "value")] == [1, 2, 3, 4]

    second = MlflowTracker(store, "resume", "r", flush_every=4, run_id=first.run_id)
    second.start({"seed": 0}, {"resumed_at_round": "6"})
    for t in range(1, 9):  # the loop re-offers rounds 1-6 from the checkpoint, then runs 7-8
        second.log(rec(t), {"value": float(t), "query_cost": float(t), "extra": 1.0})
    from hpoflow.core.records import RunStatus

    second.finish(RunStatus.FINISHED, {"best_value": 1.0})
    run_ = client.get_run(first.run_id)
    assert run_.info.status == "FINISHED" and run_.data.tags["resumed_at_round"] == "6"
    for key in ("value", "query_cost", "extra"):
        assert sorted(m.step for m in client.get_metric_history(first.run_id, key)) == list(range(1, 9)), key


def _saved(tmp_path, rounds: int = 3):
    task = Noisy()
    path = tmp_path / "checkpoint.json"
    run(task, _random(task), budget=Budget(rounds), checkpoint=Checkpointer(path, {"run_id": "r"}))
    return path


def test_checkpoint_carries_a_hash_that_catches_any_edit(tmp_path):
    path = _saved(tmp_path)
    text = path.read_text()
    assert text.startswith('{"sha256":"') and load(path).round == 3
    for edited in (text.replace('"round":3,', '"round":999,'), text.replace('"wall_time":', '"wall_time":1', 1),
                   text[:-40] + text[-39:]):
        path.write_text(edited)
        with pytest.raises(CheckpointError, match="SHA-256|not a readable"):
            load(path)
    data = json.loads(text)
    del data["sha256"]
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="carries no content hash"):
        load(path)


def test_a_version_1_checkpoint_is_refused_it_carries_no_hash(tmp_path):
    data = json.loads(_saved(tmp_path).read_text())
    del data["sha256"]
    path = tmp_path / "v1.json"
    path.write_text(json.dumps({**data, "version": 1}, separators=(",", ":")))
    with pytest.raises(CheckpointError, match="carries no content hash"):
        load(path)  # "version": 1 once skipped the hash check: an edited file then passed as an old one


def test_a_checkpoint_is_bound_to_its_run_folder(tmp_path):
    import shutil

    from hpoflow.core.checkpoint import Checkpointer, LoopState, check_folder

    a, b = tmp_path / "runs" / "run-a", tmp_path / "runs" / "run-b"
    for folder, run_id in ((a, "a" * 32), (b, "b" * 32)):
        Checkpointer(folder / "checkpoint.json", {"run_id": run_id}).save(LoopState())
    check_folder(load(a / "checkpoint.json"), a / "checkpoint.json")
    shutil.copy(b / "checkpoint.json", a / "checkpoint.json")  # run B's checkpoint swapped into A's folder
    with pytest.raises(CheckpointError, match="belongs to the run folder 'runs/run-b' \\(run b{32}\\)"):
        check_folder(load(a / "checkpoint.json"), a / "checkpoint.json")
    moved = tmp_path / "backup" / "runs" / "run-b"
    shutil.copytree(b, moved)  # the whole outputs tree moved elsewhere: still its own folder
    check_folder(load(moved / "checkpoint.json"), moved / "checkpoint.json")



def _deferred(path, tracker):
    checkpointer = Checkpointer(path, {"run_id": tracker.run_id}, defer_s=1e9)  # only the first save is written
    tracker.before_flush = checkpointer.write_pending
    return checkpointer


def _store_steps(store, run_id):
    return sorted(m.step for m in MlflowClient(tracking_uri=store).get_metric_history(run_id, "query_cost"))


def test_deferred_saves_reach_the_file_before_the_store_and_resume_exactly(store, tmp_path):
    from hpoflow.core.records import RunStatus
    from hpoflow.runner.loop import Loop, drive
    from hpoflow.store.lease import Lease, _write
    from hpoflow.store.resume_guard import verify_store

    seed_everything(3)
    task = Noisy()
    reference = run(task, _random(task), None, Budget(10))

    seed_everything(3)
    task, path = Noisy(), tmp_path / "ck.json"
    tracker = MlflowTracker(store, "defer", "r", flush_every=3, flush_seconds=1e9)
    tracker.start({"seed": 3}, {})
    checkpointer = _deferred(path, tracker)
    loop = Loop(task, _random(task), tracker, Budget(10), checkpoint=checkpointer)
    for _ in range(8):  # then "SIGKILL": no abort, no finish
        suggestion = loop.ask()
        loop.tell(suggestion, task.evaluate(suggestion.config, round=loop.round))
    tracker._heartbeat.stop()
    _write(MlflowClient(tracking_uri=store), tracker.run_id,
           Lease(tracker._lease.owner, tracker._lease.host, tracker._lease.pid, 0.0, 10.0))  # a dead writer
    state = load(path)
    assert checkpointer.writes == 3 and checkpointer.pending  # round 1, then before the flushes of rounds 3 and 6
    assert state.round == 5 and _store_steps(store, tracker.run_id) == list(range(1, 7))  # one round ahead at most
    verify_store(state, store, every=1)  # the resume guard accepts it

    seed_everything(3)
    task = Noisy()
    second = MlflowTracker(store, "defer", "r", flush_every=3, run_id=tracker.run_id)
    second.start({"seed": 3}, {})
    resumed = drive(Loop(task, _random(task), second, Budget(10), resume=state,
                         checkpoint=_deferred(path, second)))
    assert _trajectory(resumed.records) == _trajectory(reference.records)
    assert _store_steps(store, tracker.run_id) == list(range(1, 11))  # every step exactly once
    assert load(path).meta["status"] == "FINISHED" and load(path).round == 10
    assert MlflowClient(tracking_uri=store).get_run(tracker.run_id).info.status == RunStatus.FINISHED.value


def test_deferred_save_is_written_when_the_run_is_interrupted(store, tmp_path):
    seed_everything(3)
    task, path = Noisy(interrupt_at=8), tmp_path / "ck.json"
    tracker = MlflowTracker(store, "defer", "r", flush_every=100, flush_seconds=1e9)
    tracker.start({"seed": 3}, {})
    checkpointer = _deferred(path, tracker)
    with pytest.raises(KeyboardInterrupt):
        run(task, _random(task), tracker, Budget(10), checkpoint=checkpointer)
    state = load(path)
    assert checkpointer.writes == 2 and not checkpointer.pending  # round 1, and round 7 at the abort
    assert state.round == 7 and state.meta["status"] == "RUNNING"
    assert _store_steps(store, tracker.run_id) == list(range(1, 8))
    assert MlflowClient(tracking_uri=store).get_run(tracker.run_id).info.status == "KILLED"
