"""algo=freeze_thaw: the scheduler's decisions on hand-built cases, pending trials, the state round trip, the
config's one-line errors and a run on replayed curves."""
from __future__ import annotations

import json

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.freeze_thaw import FreezeThaw, FreezeThawScheduler
from hpoflow.algorithms.freeze_thaw_config import FreezeThawConfig
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import run
from hpoflow.tasks.replay import ReplayTask

LEVELS = [1, 3, 9, 27]


def counter(start: int = 100):
    state = {"n": start}

    def new_id() -> int:
        state["n"] += 1
        return state["n"]
    return new_id


def rising(top: float, levels: list[int]) -> list[list[float]]:
    """A saturating curve of rewards reaching about ``top`` at 27."""
    return [[level / 27, top - 0.3 * (level / 27) ** -0.5 / 27 ** 0.5] for level in levels]


def scheduler_with(trials: dict[int, dict], candidates: list[list[float]], **config) -> FreezeThawScheduler:
    """A scheduler whose book holds ``trials`` (loaded through its state, as a resume does)."""
    settings = {"init_configs": 1, "init_steps": 400, **config}
    s = FreezeThawScheduler(LEVELS, 1, seed=0, candidates=candidates, config=FreezeThawConfig(**settings))
    fresh = FreezeThawScheduler(LEVELS, 1, seed=0, candidates=candidates, config=FreezeThawConfig(**settings))
    s.load_state_dict({"trials": [[i, t] for i, t in trials.items()], "decisions": 0,
                       "model": fresh.model.state_dict()})
    return s


def trial(u: float, index: int, rung: int, curve: list[list[float]]) -> dict:
    return {"u": [u], "index": index, "rung": rung, "curve": curve, "failed": False}


def test_it_continues_a_clearly_promising_paused_trial():
    candidates = [[0.1], [0.9], [0.5], [0.55], [0.95]]
    trials = {1: trial(0.9, 1, 3, rising(0.3, [1, 3, 9, 27])),  # finished, poor
              2: trial(0.95, 4, 3, rising(0.32, [1, 3, 9, 27])),  # finished, poor
              3: trial(0.1, 0, 1, rising(0.9, [1, 3]))}  # paused at 3 epochs, far ahead of both
    s = scheduler_with(trials, candidates)
    job = s.next_job(counter())
    assert (job.config_id, job.rung, job.level, job.new) == (3, 2, 9, False)
    assert s.last["kind"] == "continue"


def test_it_starts_a_new_configuration_when_every_paused_one_is_bad():
    candidates = [[0.1], [0.9], [0.5], [0.55], [0.95], [0.3]]
    trials = {1: trial(0.1, 0, 3, rising(0.9, [1, 3, 9, 27])),  # the incumbent, finished
              2: trial(0.9, 1, 1, rising(0.1, [1, 3])),  # paused, far behind it, their slopes known
              3: trial(0.95, 4, 1, rising(0.12, [1, 3]))}
    s = scheduler_with(trials, candidates)
    job = s.next_job(counter())
    assert job.new and job.rung == 0 and job.level == 1 and job.config_id == 101
    assert job.point in ([0.5], [0.55], [0.3])  # a member of the set not started yet
    assert s.last["kind"] == "new"


def test_running_trials_are_neither_continued_nor_started_twice():
    candidates = [[i / 10] for i in range(10)]
    s = FreezeThawScheduler(LEVELS, 1, seed=0, candidates=candidates, config=FreezeThawConfig(init_configs=2))
    new_id = counter()
    jobs = [s.next_job(new_id) for _ in range(2)]
    for job in jobs:
        s.observe_curve(job.config_id, [(1, 0.5 + job.point[0] / 10)])
        s.report(job, 0.5 + job.point[0] / 10)
    running = [s.next_job(new_id) for _ in range(4)]  # four workers: nothing reported yet
    ids = [j.config_id for j in running]
    assert len(set(ids)) == 4
    assert set(s.running) == set(ids)
    points = [tuple(t["u"]) for t in s.trials.values()]
    assert len(set(points)) == len(points)  # a set member is started once


def warmed_up(workers: int, **config) -> tuple[FreezeThawScheduler, object]:
    """A scheduler for ``workers`` whose five warm-up configurations have reported at the lowest level."""
    candidates = [[i / 10] for i in range(10)]
    s = FreezeThawScheduler(LEVELS, 1, seed=0, candidates=candidates, config=FreezeThawConfig(**config),
                            workers=workers)
    new_id = counter()
    for job in [s.next_job(new_id) for _ in range(5)]:
        s.observe_curve(job.config_id, [(1, 0.5 + job.point[0] / 10)])
        s.report(job, 0.5 + job.point[0] / 10)
    return s, new_id


def test_with_one_worker_the_best_paused_trial_climbs_one_level_a_job():
    s, new_id = warmed_up(1)
    job = s.next_job(new_id)
    best = max(s.trials, key=lambda i: s.trials[i]["curve"][-1][1])
    assert (job.config_id, job.rung, job.level, s.last["kind"]) == (best, 1, 3, "first")


def test_with_workers_the_first_jumps_go_straight_to_the_full_level_and_no_more():
    s, new_id = warmed_up(4)
    ranked = sorted(s.trials, key=lambda i: -s.trials[i]["curve"][-1][1])
    jobs = [s.next_job(new_id) for _ in range(2)]
    assert [(j.config_id, j.rung, j.level) for j in jobs] == [(ranked[0], 3, 27), (ranked[1], 3, 27)]
    third = s.next_job(new_id)  # two trials on their way to the full level: the model decides the next job
    assert s.last["kind"] in ("continue", "new") and third.rung < 3


def test_first_jumps_zero_climbs_with_workers_too():
    s, new_id = warmed_up(4, first_jumps=0)
    jobs = [s.next_job(new_id) for _ in range(3)]
    assert [j.rung for j in jobs] == [1, 1, 1] and {s.last["kind"]} == {"first"}


def test_a_failed_trial_is_never_continued():
    s = FreezeThawScheduler(LEVELS, 1, seed=0, candidates=[[0.2], [0.4]], config=FreezeThawConfig(init_configs=1))
    new_id = counter()
    job = s.next_job(new_id)
    s.report(job, None)
    later = [s.next_job(new_id) for _ in range(3)]
    assert all(j.config_id != job.config_id for j in later)


def run_replay(rounds: int, state: dict | None = None, seed: int = 0, config: FreezeThawConfig | None = None):
    task = ReplayTask("digits_cnn", seed, max_fidelity=9)
    algo = FreezeThaw(config or FreezeThawConfig(init_steps=50, steps=5), BuildContext(task, 1000, seed))
    if state is not None:
        algo.load_state_dict(json.loads(json.dumps(state)))
    suggestions = []
    for r in range(1, rounds + 1):
        s = algo.ask(r)
        outcome = task.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=r)
        algo.tell(s, outcome)
        suggestions.append((s.config_id, s.fidelity, s.u))
    return algo, suggestions


def test_a_resumed_scheduler_makes_the_decisions_of_an_uninterrupted_one():
    _, whole = run_replay(20)
    first, part = run_replay(10)
    assert part == whole[:10]
    task = ReplayTask("digits_cnn", 0, max_fidelity=9)
    resumed = FreezeThaw(FreezeThawConfig(init_steps=50, steps=5), BuildContext(task, 1000, 0))
    resumed.load_state_dict(json.loads(json.dumps(first.state_dict())))
    task.states = first.task.states  # the task's trial states go with the run's checkpoint
    rest = []
    for r in range(11, 21):
        s = resumed.ask(r)
        resumed.tell(s, task.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=r))
        rest.append((s.config_id, s.fidelity, s.u))
    assert rest == whole[10:]  # exactly: the same weights, moments and random streams


def test_a_run_on_replayed_curves_climbs_the_ladder_and_continues_trials():
    task = ReplayTask("digits_cnn", 0, max_fidelity=9)
    algo = FreezeThaw(FreezeThawConfig(init_steps=50, steps=5), BuildContext(task, 1000, 0))
    assert algo.levels == [1, 2, 4, 8, 9]
    result = run(task, algo, budget=Budget(rounds=1000, cost=90))
    records = result.records
    assert sum(m["query_cost"] == m["query_cost"] for m in result.metrics) == len(records)
    assert result.metrics[-1]["query_cost"] >= 90 > result.metrics[-2]["query_cost"]
    by_id: dict[int, list[float]] = {}
    for r in records:
        by_id.setdefault(r.config_id, []).append(r.fidelity)
    for levels in by_id.values():  # each trial climbs one level per job, from the lowest
        assert levels == algo.levels[:len(levels)]
    assert any(len(levels) > 1 for levels in by_id.values())
    assert max(len(levels) for levels in by_id.values()) == len(algo.levels)  # some trial reached the full level


def test_robust_scaling_clips_a_diverged_curve():
    curve = [[1 / 27, -2.3], [3 / 27, -1.0], [9 / 27, -0.5], [1.0, -0.2]]
    diverged = [[1 / 27, -2.3], [3 / 27, -10.0]]  # a loss of 10: far worse than anything else
    trials = {1: trial(0.2, 0, 3, curve), 2: trial(0.7, 1, 1, diverged)}
    plain = scheduler_with(trials, [[0.2], [0.7]])._data()[2]
    robust = scheduler_with(trials, [[0.2], [0.7]], clip=2.0)._data()[2]
    assert plain.max() > 2.0 and robust.max() == 2.0  # losses: the diverged point is clipped
    assert list(plain.argsort()[:4]) == list(robust.argsort()[:4])  # the order of the others is kept
    assert robust[0] - robust[3] > 2 * (plain[0] - plain[3])  # mean/std: the outlier's scale squeezes the others


@pytest.mark.parametrize(("key", "value", "message"), [
    ("acquisition", "ucb", "algo.acquisition='ucb' is unknown; allowed: ei, mfpi_random"),
    ("eta", 1, "algo.eta=1 must be a number > 1"),
    ("pool", 0, "algo.pool=0 must be an integer >= 1"),
    ("members", 1, "algo.members=1 must be an integer >= 2"),
    ("lr", -1.0, "algo.lr=-1.0 must be a number > 0"),
    ("clip", 0, "algo.clip=0 must be a number > 0 or null (mean/std scaling)"),
    ("first_jumps", -1, "algo.first_jumps=-1 must be an integer >= 0"),
])
def test_bad_settings_are_one_line_errors(key, value, message):
    with pytest.raises(ValueError) as err:
        FreezeThawConfig(**{key: value})
    assert str(err.value) == message


def test_a_study_adds_no_stopping_rule_on_top_of_freeze_thaw():
    from types import SimpleNamespace

    from hpoflow.core.fidelity import Fidelity
    from hpoflow.study import Study

    task = SimpleNamespace(fidelity=Fidelity("epochs", 1, 27))
    assert Study._pruner(None, task, "freeze_thaw") is None  # it chooses the levels itself, as hyperband does
    assert Study._pruner(None, task, "hyperband") is None and Study._pruner(None, task, "random") is not None


def test_the_state_keeps_the_models_rows_in_the_order_they_were_observed():
    """The model's minibatches index its rows: a resumed scheduler must hold them in the same order (before, it
    rebuilt them trial by trial, and a replayed run killed twice diverged from the uninterrupted one at round 29)."""
    def points(scheduler):
        U, b, r = scheduler._rows.arrays()
        return [(u, v, x) for u, v, x in zip(U.tolist(), b.tolist(), r.tolist(), strict=True)]

    algo, _ = run_replay(60)
    rows = points(algo.scheduler)
    trial_by_trial = [(t["u"], v, r) for t in algo.scheduler.trials.values() for v, r in t["curve"]]
    assert rows != trial_by_trial and sorted(map(str, rows)) == sorted(map(str, trial_by_trial))  # interleaved
    task = ReplayTask("digits_cnn", 0, max_fidelity=9)
    resumed = FreezeThaw(FreezeThawConfig(init_steps=50, steps=5), BuildContext(task, 1000, 0))
    resumed.load_state_dict(json.loads(json.dumps(algo.state_dict())))
    assert points(resumed.scheduler) == rows
