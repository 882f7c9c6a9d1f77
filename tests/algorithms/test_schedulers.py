"""Hyperband's and ASHA's rung arithmetic on small cases, checked by hand against the papers' tables."""
from __future__ import annotations

import itertools
import json

import pytest

from hpoflow.algorithms.schedulers import ASHA, RungStopper, StoppingASHA, SyncHyperband, WarmHyperband, bracket_sizes


def ids():
    counter = itertools.count(1)
    return lambda: next(counter)


def test_bracket_sizes_match_hyperbands_table():  # Li et al. 2018, Table 1 (R = 81, eta = 3): n_i per bracket
    assert bracket_sizes(5, 3, 4) == [81, 27, 9, 3, 1]
    assert bracket_sizes(5, 3, 3) == [34, 11, 3, 1]
    assert bracket_sizes(5, 3, 2) == [15, 5, 1]
    assert bracket_sizes(5, 3, 1) == [8, 2]
    assert bracket_sizes(5, 3, 0) == [5]


def run_sequentially(scheduler, reward, jobs):
    out, new_id = [], ids()
    for _ in range(jobs):
        job = scheduler.next_job(new_id)
        out.append((job.config_id, job.level))
        scheduler.report(job, reward(job.config_id, job.level))
    return out


def test_successive_halving_promotes_the_best_third_after_the_rung_completes():
    sha = SyncHyperband([1, 3, 9], 3, [2])  # one bracket: 9 at 1, 3 at 3, 1 at 9
    jobs = run_sequentially(sha, lambda i, r: float(i), 13)  # larger id = better reward
    assert jobs[:9] == [(i, 1) for i in range(1, 10)]
    assert jobs[9:12] == [(9, 3), (8, 3), (7, 3)]
    assert jobs[12] == (9, 9)
    assert sha.next_job(ids()).config_id == 1 and sha.started == 2  # the next bracket starts


def test_hyperband_cycles_its_brackets_from_aggressive_to_full():
    hb = SyncHyperband([1, 3, 9], 3, [2, 1, 0])  # brackets: 9@1 3@3 1@9 | ceil(4.5)=5@3 1@9 | 3@9
    jobs = run_sequentially(hb, lambda i, r: -float(i), 13 + 6 + 3 + 1)  # smaller id = better
    assert jobs[12] == (1, 9)
    assert jobs[13:18] == [(i, 3) for i in range(10, 15)]
    assert jobs[18] == (10, 9)
    assert jobs[19:22] == [(15, 9), (16, 9), (17, 9)]
    assert jobs[22] == (18, 1)  # and again from the most aggressive bracket


def test_a_blocked_bracket_opens_the_next_one_for_another_worker():
    sha = SyncHyperband([1, 3], 3, [1])  # 3 at 1, then 1 at 3
    new_id = ids()
    first = [sha.next_job(new_id) for _ in range(3)]
    extra = sha.next_job(new_id)  # every job of bracket 0 is running: bracket 1 starts
    assert extra.bracket == 1 and extra.new
    for job, r in zip(first, (0.1, 0.9, 0.5)):
        sha.report(job, r)
    promoted = sha.next_job(new_id)
    assert (promoted.config_id, promoted.level, promoted.bracket) == (first[1].config_id, 3, 0)


def test_failures_are_never_promoted():
    sha = SyncHyperband([1, 3], 3, [1])
    new_id = ids()
    jobs = [sha.next_job(new_id) for _ in range(3)]
    for job, r in zip(jobs, (None, 0.2, 0.1)):
        sha.report(job, r)
    assert sha.next_job(new_id).config_id == jobs[1].config_id


def test_asha_promotes_as_soon_as_a_config_is_in_the_top_third():
    asha = ASHA([1, 3, 9], 3)
    new_id = ids()
    a, b = asha.next_job(new_id), asha.next_job(new_id)
    asha.report(a, 1.0)
    asha.report(b, 2.0)
    c = asha.next_job(new_id)  # 2 results at rung 0: floor(2/3) = 0 promotable: a new config
    assert c.new and c.rung == 0
    asha.report(c, 0.5)
    d = asha.next_job(new_id)  # 3 results: the best (b) goes to rung 1
    assert (d.config_id, d.rung, d.level) == (b.config_id, 1, 3)
    e = asha.next_job(new_id)  # b is running at rung 1, nothing else in the top third: new
    assert e.new


def test_asha_state_forgets_running_jobs_so_a_resume_asks_them_again():
    asha = ASHA([1, 3], 3)
    new_id = ids()
    jobs = [asha.next_job(new_id) for _ in range(3)]
    for job, r in zip(jobs, (1.0, 2.0, 3.0)):
        asha.report(job, r)
    running = asha.next_job(new_id)
    assert running.rung == 1
    again = ASHA([1, 3], 3)
    again.load_state_dict(asha.state_dict())
    assert again.next_job(new_id).config_id == running.config_id


def test_hyperband_state_round_trip_resumes_the_same_jobs():
    hb, new_id = SyncHyperband([1, 3, 9], 3, [2, 1, 0]), ids()
    for _ in range(10):
        job = hb.next_job(new_id)
        hb.report(job, float(job.config_id % 4))
    copy = SyncHyperband([1, 3, 9], 3, [2, 1, 0])
    copy.load_state_dict(hb.state_dict())
    a, b = hb.next_job(ids()), copy.next_job(ids())
    assert (a.config_id, a.level, a.bracket) == (b.config_id, b.level, b.bracket)


def test_rung_stopper_keeps_the_top_third_of_each_rung():
    stop = RungStopper([1, 3, 9], 3)
    assert stop.report(1, 1, 0.5) is False  # the first trial always goes on
    assert stop.report(2, 1, 0.1) is True   # 2 at the rung: keep max(1, 0) = 1: 0.1 < 0.5
    assert stop.report(3, 1, 0.9) is False  # 3 at the rung: keep 1: 0.9 is the best
    assert stop.report(4, 1, 0.6) is True
    assert stop.report(3, 2, 0.95) is False  # between rungs: nothing new to compare
    assert stop.report(3, 9, 0.0) is False   # the top rung never stops


def test_stopping_asha_runs_the_first_configuration_to_the_top_and_stops_a_loser_at_its_rung():
    sched, new_id = StoppingASHA([1, 3, 9], 3), ids()
    a = sched.next_job(new_id)
    assert a.new and a.rung == 0
    sched.report(a, 0.5)  # alone at rung 0: goes on
    a1 = sched.next_job(new_id)
    assert (a1.config_id, a1.rung, a1.level, a1.new) == (a.config_id, 1, 3, False)
    sched.report(a1, 0.6)
    a2 = sched.next_job(new_id)
    assert (a2.config_id, a2.rung) == (a.config_id, 2)  # the first full-fidelity result after one ladder
    sched.report(a2, 0.7)
    b = sched.next_job(new_id)
    assert b.new
    sched.report(b, 0.1)  # 2 at rung 0, keep max(1, 0) = 1: 0.1 < 0.5 stops
    c = sched.next_job(new_id)
    assert c.new
    sched.report(c, 0.9)  # the best of 3: goes on, served before any new configuration
    assert (sched.next_job(new_id).config_id, c.rung) == (c.config_id, 0)


def test_stopping_asha_never_continues_a_failure_and_resumes_a_running_continuation():
    sched, new_id = StoppingASHA([1, 3], 3), ids()
    bad = sched.next_job(new_id)
    sched.report(bad, None)
    good = sched.next_job(new_id)
    assert good.new
    sched.report(good, 1.0)
    running = sched.next_job(new_id)
    assert (running.config_id, running.rung) == (good.config_id, 1)
    again = StoppingASHA([1, 3], 3)
    again.load_state_dict(sched.state_dict())  # taken while the continuation runs: asked again
    job = again.next_job(ids())
    assert (job.config_id, job.rung, job.new) == (good.config_id, 1, False)
    sched.report(running, 2.0)  # the top rung: nothing to continue
    assert sched.next_job(new_id).new


def test_warm_hyperband_runs_one_stopping_warm_up_of_uniform_configurations_then_hyperbands_brackets():
    sched, new_id = WarmHyperband([1, 3, 9], 3), ids()
    assert sched.warm_configs == 9  # Hyperband's most aggressive bracket at 3 rungs: 9, 3, 1
    first = sched.next_job(new_id)
    assert first.new and first.uniform and first.rung == 0
    sched.report(first, 0.5)
    for rung in (1, 2):  # alone at its rungs: the first configuration runs to the top
        job = sched.next_job(new_id)
        assert (job.config_id, job.rung, job.new) == (first.config_id, rung, False)
        sched.report(job, 0.5)
    rewards = iter([0.1, 0.9, 0.2, 0.3, 0.4, 0.05, 0.6, 0.7])  # 8 more warm-up configurations
    seen = []
    while sched.started < 9 or sched.warmup.queue:
        job = sched.next_job(new_id)
        seen.append(job)
        assert job.uniform == job.new and job.config_id in sched.warm_ids
        sched.report(job, next(rewards) if job.new else 1.0)
    assert sum(j.new for j in seen) == 8
    assert any(not j.new for j in seen)  # 0.9 beat the rung: continued before the next new configuration
    job = sched.next_job(new_id)  # the warm-up is over: Hyperband's first (most aggressive) bracket
    assert job.new and not job.uniform and job.rung == 0 and job.config_id not in sched.warm_ids
    assert sched.hyperband.open[0]["sizes"] == [9, 3, 1]


def test_warm_hyperband_state_round_trip_in_each_phase():
    def drive(sched, jobs, new_id):
        for _ in range(jobs):
            job = sched.next_job(new_id)
            sched.report(job, float((job.config_id * 7919) % 13) + job.level)

    for jobs in (4, 30):  # in the warm-up; in Hyperband's brackets
        sched, new_id = WarmHyperband([1, 3, 9], 3), ids()
        drive(sched, jobs, new_id)
        again = WarmHyperband([1, 3, 9], 3)
        again.load_state_dict(json.loads(json.dumps(sched.state_dict())))
        a, b = [sched.next_job(lambda: 1000) for _ in range(3)], [again.next_job(lambda: 1000) for _ in range(3)]
        assert [(j.config_id, j.rung, j.uniform) for j in a] == [(j.config_id, j.rung, j.uniform) for j in b]


SCHEDULERS = {"asha": lambda: ASHA([1, 3, 9], 3), "hyperband": lambda: SyncHyperband([1, 3, 9], 3, [2, 1, 0]),
              "asha_stopping": lambda: StoppingASHA([1, 3, 9], 3),
              "warm_hyperband": lambda: WarmHyperband([1, 3, 9], 3)}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_a_scheduler_given_back_the_jobs_running_at_its_state_goes_on_as_never_stopped(name):
    """state_dict forgets running jobs; adopt() marks each running again (a resume evaluates those very jobs),
    after which the restored scheduler hands out the same jobs as the one never stopped; a job running already is
    refused (stopping-type ASHA keeps no book of its new configurations, so it refuses only continuations)."""
    first, counter = SCHEDULERS[name](), itertools.count(1)
    new_id = lambda: next(counter)  # noqa: E731
    running = []
    for _ in range(40):  # 2 jobs running at a time, told in ask order
        running.append(first.next_job(new_id))
        if len(running) == 2:
            job = running.pop(0)
            first.report(job, float(job.config_id % 7) + job.level)
    ahead = [first.next_job(new_id)]  # a third: asked while both ran
    running += ahead
    saved, next_id = json.loads(json.dumps(first.state_dict())), next(counter)
    again = SCHEDULERS[name]()
    again.load_state_dict(saved)
    assert all(again.adopt(job) for job in running)
    for job in running:
        if not (isinstance(again, StoppingASHA) and job.rung == 0):
            assert not again.adopt(job)  # running already: not twice
    counters = [itertools.count(next_id), itertools.count(next_id)]
    for job in running:
        for s in (first, again):
            s.report(job, float(job.config_id % 7) + job.level)
    for _ in range(30):
        jobs = [s.next_job(lambda c=c: next(c)) for s, c in zip((first, again), counters)]
        assert jobs[0] == jobs[1]
        for s, job in zip((first, again), jobs):
            s.report(job, float(job.config_id % 7) + job.level)
