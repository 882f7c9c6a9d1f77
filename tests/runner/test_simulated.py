"""budget.executor=simulated: k workers replayed exactly in simulated time on one thread."""
from __future__ import annotations

from typing import Any

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.budget import Budget
from hpoflow.core.records import Direction, Evaluation, Failure
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Loop, drive
from hpoflow.runner.simulated import drive_simulated, duration, replay_simulation
from hpoflow.tasks.base import Task
from hpoflow.tasks.multi_fidelity import make_branin_mf


class Timed(Task):
    """Evaluation i (in ask order) takes ``durations[i]`` simulated seconds; its value is i."""

    def __init__(self, durations: list[float]) -> None:
        self.space, self.direction, self.name = SearchSpace((Float("x", 0.0, 1.0),)), Direction.MINIMIZE, "timed"
        self.durations, self.calls = durations, 0

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        self.calls += 1
        return Evaluation(value=float(self.calls), metrics={"elapsed": self.durations[self.calls - 1]})


def test_results_are_told_in_simulated_completion_order():
    task = Timed([5.0, 1.0, 3.0, 1.0, 1.0])
    loop = Loop(task, RandomSearch(RandomConfig(), BuildContext(task, 5)), budget=Budget(rounds=5, workers=2,
                                                                                          executor="simulated"))
    result = drive_simulated(loop, 2)
    # t=0: 1 (ends 5) and 2 (ends 1); t=1: 3 (ends 4); t=4: 4 (ends 5); t=5: 1 ends, then 4 (ask order breaks the
    # tie), then 5 starts at 5 and ends at 6
    assert [r.value for r in result.records] == [2, 3, 1, 4, 5]
    assert [m["sim_time"] for m in result.metrics] == [1, 4, 5, 5, 6]


def test_one_simulated_worker_is_the_sequential_run():
    def records(simulated: bool):
        task = make_branin_mf(max_resource=27)
        algo = MultiFidelity(MultiFidelityConfig(scheduler="hyperband"), BuildContext(task, 1000, seed=3))
        loop = Loop(task, algo, budget=Budget(rounds=40, executor="simulated" if simulated else "thread"))
        return (drive_simulated(loop, 1) if simulated else drive(loop)).records

    a, b = records(False), records(True)
    assert [(r.config_id, r.fidelity, r.value) for r in a] == [(r.config_id, r.fidelity, r.value) for r in b]


def test_without_an_elapsed_metric_the_cost_is_the_duration():
    assert duration(Evaluation(value=1.0, cost=9.0)) == 9.0
    assert duration(Evaluation(value=1.0, cost=9.0, metrics={"elapsed": 2.5})) == 2.5
    assert duration(Failure("x", cost=3.0)) == 3.0


def test_the_budget_accepts_simulated_and_names_it_when_refusing():
    assert Budget(executor="simulated").executor == "simulated"
    with pytest.raises(ValueError, match="allowed: thread, process, ray, simulated"):
        Budget(executor="fast")


def _asha(task: Task) -> MultiFidelity:
    return MultiFidelity(MultiFidelityConfig(scheduler="asha"), BuildContext(task, 1000, seed=3, workers=4))


def _trace(records: list) -> list:
    return [(r.config_id, r.fidelity, r.value, r.cost, r.metrics.get("trial"), r.metrics.get("sim_time"))
            for r in records]


@pytest.mark.parametrize("stop_after", [1, 7, 23])
def test_a_resumed_simulated_run_equals_the_run_never_stopped(tmp_path, stop_after: int):
    """ASHA with 4 simulated workers, stopped after round ``stop_after`` (3 trials still running) and resumed from
    its checkpoint file with a freshly built algorithm: the same trials, levels, values, trial numbers and simulated
    times as the run never stopped (the simulation is replayed, not restarted at time 0 with nothing running)."""
    from hpoflow.core.checkpoint import Checkpointer, load
    from hpoflow.runner.build import told_levels
    from hpoflow.tasks.trial_states import state_folder

    budget = Budget(rounds=60, workers=4, executor="simulated")
    task = make_branin_mf(max_resource=27)
    expected = drive_simulated(Loop(task, _asha(task), budget=budget), 4).records

    def stop(record, metrics):
        if record.round == stop_after:
            raise KeyboardInterrupt

    path = tmp_path / "checkpoint.json"
    task = make_branin_mf(max_resource=27)
    task.set_state_folder(state_folder(path))  # the trial states beside the checkpoint, as the runner keeps them
    with pytest.raises(KeyboardInterrupt):
        drive_simulated(Loop(task, _asha(task), budget=budget, checkpoint=Checkpointer(path), on_round=stop), 4)
    state = load(path)
    assert state.round == stop_after
    task = make_branin_mf(max_resource=27)
    task.set_state_folder(state_folder(path), state.round, told_levels(state.records))
    resumed = Loop(task, _asha(task), budget=budget, checkpoint=Checkpointer(path), resume=state,
                   replay=replay_simulation)
    assert len(resumed.pending) == 3  # the trials running when it stopped, asked again
    assert _trace(drive_simulated(resumed, 4).records) == _trace(expected)


@pytest.mark.parametrize("from_end", [1, 2, 6])
def test_a_simulated_run_under_a_cost_budget_resumed_near_its_end_equals_the_run_never_stopped(tmp_path,
                                                                                               from_end: int):
    """Stopped while its last jobs drain (the job that did not fit the cost budget already refused) or just
    before: the replay refuses the same job, so the resumed run asks nothing the original did not."""
    from hpoflow.core.checkpoint import Checkpointer, load
    from hpoflow.runner.build import told_levels
    from hpoflow.tasks.trial_states import state_folder

    budget = Budget(rounds=100_000, cost=200, workers=4, executor="simulated")
    task = make_branin_mf(max_resource=27)
    expected = drive_simulated(Loop(task, _asha(task), budget=budget), 4).records
    assert sum(r.cost for r in expected) <= 200
    stop_after = len(expected) - from_end

    def stop(record, metrics):
        if record.round == stop_after:
            raise KeyboardInterrupt

    path = tmp_path / "checkpoint.json"
    task = make_branin_mf(max_resource=27)
    task.set_state_folder(state_folder(path))
    with pytest.raises(KeyboardInterrupt):
        drive_simulated(Loop(task, _asha(task), budget=budget, checkpoint=Checkpointer(path), on_round=stop), 4)
    state = load(path)
    task = make_branin_mf(max_resource=27)
    task.set_state_folder(state_folder(path), state.round, told_levels(state.records))
    resumed = Loop(task, _asha(task), budget=budget, checkpoint=Checkpointer(path), resume=state,
                   replay=replay_simulation)
    assert (resumed.refused is not None) == (from_end <= 2)  # the refusal came before the last two rounds
    assert _trace(drive_simulated(resumed, 4).records) == _trace(expected)
