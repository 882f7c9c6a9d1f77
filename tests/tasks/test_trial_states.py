"""Continuation of multi-fidelity trials: cost accounting, curves, the bound, the folder and the crash rule."""
from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.trial_states import Kept, TrialStates, state_folder


class Counter(Continuable):
    """A task whose 'training' counts units: state = units trained; value = units / 10; records every unit."""

    name = "counter"

    def __init__(self, capacity: int = 8, noise: float = 0.0) -> None:
        self.noise, self.rng = noise, np.random.default_rng(0)
        self.space = SearchSpace.of(Float("x", 0.0, 1.0))
        self.fidelity = Fidelity("epochs", 1, 27)
        self.states = TrialStates(capacity)
        self.trained: list[tuple[int, float]] = []  # (trial seed, unit) for every unit trained

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Any:
        return self.evaluate_full(config, round=round, observe=observe)

    def fresh_state(self, config: dict[str, Any], seed: int) -> dict[str, Any]:
        return {"units": 0, "seed": seed}

    def advance(self, state: Any, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        assert state["units"] == start
        for unit in range(int(start) + 1, int(stop) + 1):
            self.trained.append((state["seed"], unit))
        state["units"] = int(stop)
        return [[float(u), u / 10] for u in range(int(start) + 1, int(stop) + 1)]

    def score(self, state: Any, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        return curve[-1][1], {}

    def noisy(self, value: float) -> tuple[float, float | None]:
        return (value + self.noise * float(self.rng.standard_normal()), value) if self.noise else (value, None)


def _at(task: Counter, level: int, cid: int | None, round: int) -> Any:
    return task.evaluate_at({"x": 0.5}, fidelity=level, config_id=cid, round=round)


def test_continuing_1_3_9_costs_1_2_6_and_the_curve_never_repeats_a_step():
    task = Counter()
    evs = [_at(task, r, 4, i) for i, r in enumerate((1, 3, 9), 1)]
    assert [e.cost for e in evs] == [1, 2, 6] and [e.fidelity for e in evs] == [1, 3, 9]
    steps = [p[0] for e in evs for p in e.curve]
    assert steps == list(range(1, 10))  # 1..9, each once
    assert len(task.trained) == 9 and evs[-1].value == 0.9 and evs[-1].metrics["epochs"] == 9
    top = _at(task, 27, 4, 4)
    assert top.cost == 18 and task.states.get(4).state is None  # the full level is never continued: no state kept
    assert _at(task, 27, 4, 4) == top and _at(task, 27, 4, 5).cost == 27  # its own round replays; else retrained


def test_an_evicted_or_lower_level_trial_is_retrained_and_charged_in_full():
    task = Counter(capacity=1)
    assert _at(task, 3, 1, 1).cost == 3
    assert _at(task, 1, 2, 2).cost == 1       # config 2 pushes config 1 out (capacity 1)
    assert _at(task, 9, 1, 3).cost == 9       # config 1 starts again: the full level
    assert _at(task, 3, 1, 4).cost == 3       # below the level reached: from scratch too (no rewinding)
    assert _at(task, 9, None, 5).cost == 9 and len(task.states) == 1  # no id: never kept
    assert len(task.trained) == 3 + 1 + 9 + 3 + 9


def test_fidelity_levels_are_validated_and_unobserved_rounds_train_nothing():
    task = Counter()
    for bad in (0, 28, 2.5):
        with pytest.raises(ValueError, match="epochs="):
            _at(task, bad, 1, 1)  # type: ignore[arg-type]
    ev = task.evaluate_at({"x": 0.5}, fidelity=3, config_id=1, round=1, observe=False)
    assert ev.cost == 0 and ev.value != ev.value and not task.trained
    assert task.evaluate({"x": 0.5}, round=1).fidelity == 27


def test_the_folder_keeps_the_states_bounded_and_a_resumed_run_continues_them(tmp_path):
    task = Counter(capacity=2)
    task.set_state_folder(tmp_path / "states", 0)
    for cid in (1, 2, 3):
        _at(task, 3, cid, cid)
    assert sorted(p.name[:20] for p in (tmp_path / "states").iterdir()) == ["config_0002_r0000002",
                                                                           "config_0003_r0000003"]
    again = Counter(capacity=2)  # the process after a crash, resumed after round 3
    again.set_state_folder(tmp_path / "states", 3)
    ev = _at(again, 9, 3, 4)
    assert ev.cost == 6 and [p[0] for p in ev.curve] == list(range(4, 10))
    assert _at(again, 9, 1, 5).cost == 9  # dropped by the bound: from scratch
    fresh = Counter()
    fresh.set_state_folder(tmp_path / "states", 0)  # a fresh run in that folder: nothing is adopted
    assert not list((tmp_path / "states").iterdir()) and _at(fresh, 9, 2, 1).cost == 9


def test_a_state_newer_than_the_checkpoint_only_replays_its_own_round(tmp_path):
    """Rounds 1-2 checkpointed, round 3 (config 1: 3 -> 9) lost with the crash: replaying round 3 returns what it
    returned (its 6 units counted once, nothing trained again); anything else never continues that state."""
    task = Counter()
    task.set_state_folder(tmp_path, 0)
    _at(task, 3, 1, 1)
    _at(task, 3, 2, 2)
    lost = _at(task, 9, 1, 3)
    replayed = Counter()
    replayed.set_state_folder(tmp_path, 2)
    ev = _at(replayed, 9, 1, 3)
    assert (ev.cost, ev.value, ev.curve) == (lost.cost, lost.value, lost.curve) == (6, 0.9, lost.curve)
    assert not replayed.trained
    assert _at(replayed, 27, 1, 4).cost == 18  # and then continued: the replay adopted the state
    other = Counter()
    other.set_state_folder(tmp_path, 2)
    assert _at(other, 9, 2, 3).cost == 6                 # config 2's state (round 2) is known: continued
    other_order = Counter()
    other_order.set_state_folder(tmp_path, 2)
    # config 1 at 27 is what the first resumed process evaluated (round 4, lost to this one): replayed, its 18
    # units counted once; nothing trained
    assert _at(other_order, 27, 1, 5).cost == 18 and not other_order.trained


def test_states_pickle_for_process_workers_and_name_their_folder(tmp_path):
    states = TrialStates(3)
    states.put(1, Kept(3, 1, {"w": 1}))
    copy = pickle.loads(pickle.dumps(states))
    assert copy.get(1).level == 3 and copy.take(1).state == {"w": 1} and copy.get(1) is None
    assert state_folder(tmp_path / "checkpoint.json") == tmp_path / "checkpoint.trial_states"
    with pytest.raises(ValueError, match="capacity=0"):
        TrialStates(0)


def test_a_replayed_round_keeps_the_noise_stream_in_step(tmp_path):
    """The loop restores the task's RNG as of the checkpoint; the replay of a lost round draws the noise that round
    drew, so every later round observes what the uninterrupted run observed."""
    uninterrupted = Counter(noise=0.1)
    expected = [_at(uninterrupted, 1, 1, 1), _at(uninterrupted, 3, 1, 2), _at(uninterrupted, 1, 2, 3)]
    crashed = Counter(noise=0.1)
    crashed.set_state_folder(tmp_path, 0)
    _at(crashed, 1, 1, 1)
    rng_after_round_1 = pickle.dumps(crashed.rng)  # the checkpoint's round
    _at(crashed, 3, 1, 2)  # lost with the crash
    resumed = Counter(noise=0.1)
    resumed.rng = pickle.loads(rng_after_round_1)
    resumed.set_state_folder(tmp_path, 1)
    again = [_at(resumed, 3, 1, 2), _at(resumed, 1, 2, 3)]
    assert again == expected[1:] and again[0].true_value == 0.3 and again[0].value != 0.3
    assert [u for _, u in resumed.trained] == [1]  # round 2 replayed, round 3 trained


def _names(folder: Any) -> list[str]:
    return sorted(p.name[:20] for p in folder.iterdir() if p.name.startswith("config_"))


def test_a_checkpoint_far_behind_the_states_replays_every_lost_round(tmp_path):
    """The checkpoint saved round 1 while the trials went on to round 4 (a deferred checkpoint, k workers): the
    resumed run replays rounds 2-4 from their states, trains nothing again, and then continues config 1."""
    task = Counter()
    task.set_state_folder(tmp_path, 0)
    lost = [_at(task, 1, 1, 1), _at(task, 3, 1, 2), _at(task, 1, 2, 3), _at(task, 9, 1, 4)]
    task.commit_states(1)
    assert _names(tmp_path) == ["config_0001_r0000001", "config_0001_r0000002", "config_0001_r0000004",
                                "config_0002_r0000003"]
    resumed = Counter()
    resumed.set_state_folder(tmp_path, 1)
    assert [_at(resumed, 3, 1, 2), _at(resumed, 1, 2, 3), _at(resumed, 9, 1, 4)] == lost[1:]
    assert not resumed.trained
    assert _at(resumed, 27, 1, 5).cost == 18 and len(resumed.trained) == 18  # continued from the replayed 9
    resumed.commit_states(5)  # the checkpoint holds round 5: each trial keeps its newest known state only
    assert _names(tmp_path) == ["config_0001_r0000005", "config_0002_r0000003"]


def test_a_second_crash_never_continues_a_state_the_first_resume_passed_by(tmp_path):
    """Resumed after round 1, the run takes another way in round 2 (config 1 at 9, not 3): the lost round-2 state
    goes. A lost state the resumed run never asked for (config 2 at 1) stays unknown to a second resume, whose
    checkpoint records (config id, level) pairs without it, so it is never continued, only replayed as itself."""
    task = Counter()
    task.set_state_folder(tmp_path, 0)
    _at(task, 1, 1, 1)
    _at(task, 3, 1, 2)
    _at(task, 1, 2, 3)  # lost, and the resumed run will not ask it
    resumed = Counter()
    resumed.set_state_folder(tmp_path, 1, told={(1, 1.0)})
    assert _at(resumed, 9, 1, 2).cost == 8  # another level in round 2: continued from round 1's state
    assert _names(tmp_path) == ["config_0001_r0000001", "config_0001_r0000002", "config_0002_r0000003"]
    _at(resumed, 1, 3, 3)
    told = {(1, 1.0), (1, 9.0), (3, 1.0)}
    resumed.commit_states(3, told)
    assert _names(tmp_path) == ["config_0001_r0000002", "config_0002_r0000003", "config_0003_r0000003"]
    second = Counter()
    second.set_state_folder(tmp_path, 3, told)
    assert _at(second, 3, 2, 4).cost == 3  # config 2's lost state (level 1) is not continued: from scratch
    assert _at(second, 27, 1, 5).cost == 18 and len(second.trained) == 3 + 18


def test_a_trial_pending_at_the_checkpoint_is_replayed_whatever_its_new_trial_number(tmp_path):
    """k workers: trial 2 (config 2 to 3) finished but was not told when the checkpoint saved round 2 (trials 1
    and 3 told). The resumed run asks config 2 at 3 again under a new trial number: the kept evaluation is
    returned, nothing trained again."""
    task = Counter()
    task.set_state_folder(tmp_path, 0)
    _at(task, 1, 1, 1)
    _at(task, 1, 2, 1)
    lost = _at(task, 3, 2, 2)
    _at(task, 1, 3, 3)
    resumed = Counter()
    resumed.set_state_folder(tmp_path, 2, told={(1, 1.0), (2, 1.0), (3, 1.0)})
    assert _at(resumed, 3, 2, 4) == lost and not resumed.trained
    assert _at(resumed, 9, 2, 5).cost == 6  # and continued from it


def test_process_workers_share_the_folder_not_their_copies(tmp_path):
    """Two copies of one task (what spawned process workers hold): a trial one of them started, the other
    continues, because the folder is the map."""
    task = Counter()
    task.set_state_folder(tmp_path, 0)
    a, b = pickle.loads(pickle.dumps(task)), pickle.loads(pickle.dumps(task))
    assert _at(a, 3, 7, 1).cost == 3
    assert _at(b, 9, 7, 2).cost == 6 and 7 in b.states and len(b.states) == 1
