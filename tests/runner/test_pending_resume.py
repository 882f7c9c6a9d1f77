"""The checkpoint of a run with several workers saves the trials running at each save, and a resume puts them back:
each is evaluated again once, with its trial number, configuration, fidelity and config id (an ASHA promotion is not
lost), and no trial told before the save is asked again. In process, with thread workers; the kill -9 tests through
the CLI are tests/cli/test_worker_resume_cli.py."""
from __future__ import annotations

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.budget import Budget
from hpoflow.core.checkpoint import Checkpointer, load
from hpoflow.runner.loop import Loop, evaluate
from hpoflow.runner.workers import drive_parallel
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.multi_fidelity import make_branin_mf


def _algorithm(name: str, task):
    ctx = BuildContext(task, rounds=10_000, seed=3, surrogate=lambda d: ExactGP(d))
    if name == "random":
        return RandomSearch(RandomConfig(), ctx)
    if name == "freeze_thaw":
        from hpoflow.algorithms.freeze_thaw import FreezeThaw
        from hpoflow.algorithms.freeze_thaw_config import FreezeThawConfig

        return FreezeThaw(FreezeThawConfig(init_configs=2, init_steps=20, steps=2), ctx)
    return MultiFidelity(MultiFidelityConfig(name=name, scheduler=name, searcher="random"), ctx)


def _job(s) -> tuple:
    return (s.config_id, s.fidelity, tuple(round(v, 12) for v in s.config.values()))


@pytest.mark.parametrize("name", ["asha", "hyperband", "freeze_thaw", "random"])
def test_trials_running_at_the_checkpoint_are_evaluated_again_once_after_a_resume(tmp_path, name):
    task, path, budget = make_branin_mf(max_resource=9), tmp_path / "ck.json", Budget(rounds=40, workers=2)
    loop = Loop(task, _algorithm(name, task), budget=budget, checkpoint=Checkpointer(path))
    asked = [loop.ask() for _ in range(3)]
    for s in asked[:2]:  # two told; the third and two more asked after it run on
        loop.tell(s, evaluate(task, s.config, loop.trial_number(s), s.observe, s.fidelity, s.config_id))
    asked += [loop.ask() for _ in range(2)]
    running = {loop.trial_number(s): _job(s) for s in loop.pending}
    s = asked[2]
    loop.tell(s, evaluate(task, s.config, loop.trial_number(s), s.observe, s.fidelity, s.config_id))  # saved here
    del running[3]
    state = load(path)  # the process dies here: trials 4 and 5 were running
    assert [p["trial"] for p in state.pending] == [4, 5]
    task = make_branin_mf(max_resource=9)
    resumed = Loop(task, _algorithm(name, task), budget=budget, checkpoint=Checkpointer(path), resume=state)
    back = resumed.resume_pending()
    assert {resumed.trial_number(s): _job(s) for s in back} == running
    assert resumed.resume_pending() == []  # once
    result = drive_parallel(resumed, 2, "thread")
    trials = [int(m["trial"]) for m in result.metrics]
    assert sorted(trials) == list(range(1, 41))  # every trial told once
    jobs = {int(m["trial"]): (r.config_id, r.fidelity if name != "random" else None,
                              tuple(round(v, 12) for v in r.config.values()))
            for r, m in zip(result.records, result.metrics)}
    assert all(jobs[t] == job for t, job in running.items())  # the same jobs, not new ones
    if name != "random":
        assert len(set(jobs.values())) == len(jobs)  # no configuration evaluated twice at one level
