"""Simulated time: ``k`` workers replayed exactly on one thread (``budget.executor=simulated``).

Each evaluation runs at once in the driver, and takes ``duration`` *simulated* seconds: its ``elapsed`` metric
when the task reports one (a replayed learning curve's recorded training time), else its cost. The driver keeps a
clock and a queue of running trials ordered by simulated finish time: a worker that frees at time ``t`` gets the
next ask at ``t``, and results are told in simulated completion order, so an asynchronous method (ASHA) with ``k``
workers sees exactly what it would see on ``k`` real workers whose evaluations took those times (Syne Tune's
simulator backend does the same). Every round logs ``sim_time``, the simulated clock when it completed.

A resumed simulated run is equal to the run never stopped: :func:`replay_simulation` re-runs the simulation of
the recorded rounds with a freshly built algorithm (asked again in the same order and told the recorded outcomes,
nothing trained), so the algorithm, the clock and the trials running at the checkpoint are those of that moment;
the running trials are evaluated again, which a task that keeps its trial states replays without training.

Written by hand: the event queue is a dozen lines over ``heapq``; the simulators that exist (Syne Tune's) are
tied to their own schedulers and trial objects.
"""
from __future__ import annotations

import dataclasses
import heapq
import warnings

from hpoflow.core.budget import fits
from hpoflow.core.checkpoint import LoopState
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.runner.loop import Loop, RunResult, evaluate
from hpoflow.runner.restore import ResumeWarning, same_config

__all__ = ["Simulation", "drive_simulated", "duration", "replay_simulation"]

Running = tuple[float, int, Suggestion, "Evaluation | Failure"]  # (finish time, trial number, suggestion, outcome)


@dataclasses.dataclass
class Simulation:
    """Where a simulation stands: its clock and the trials running, as a heap of ``Running`` entries."""

    clock: float = 0.0
    running: list[Running] = dataclasses.field(default_factory=list)


def duration(outcome: Evaluation | Failure) -> float:
    """Simulated seconds an evaluation took: its ``elapsed`` metric, else its cost (a failure: its cost)."""
    if isinstance(outcome, Evaluation):
        return float(outcome.metrics.get("elapsed", outcome.cost))
    return float(outcome.cost)


def drive_simulated(loop: Loop, workers: int) -> RunResult:
    """Run ``loop`` with ``workers`` simulated workers until the budget is spent, then finish it (a resumed loop
    continues the simulation :func:`replay_simulation` rebuilt)."""
    sim = loop.simulation if loop.simulation is not None else Simulation()
    clock, running = sim.clock, list(sim.running)
    heapq.heapify(running)
    with loop.guard():
        while True:
            while len(running) < workers and loop.can_ask:
                s = loop.ask_fitting()
                if s is None:
                    break  # did not fit the cost budget: the running trials end the run
                t = loop.trial_number(s)
                outcome = evaluate(loop.task, s.config, t, s.observe, s.fidelity, s.config_id)
                heapq.heappush(running, (clock + duration(outcome), t, s, outcome))  # ties: ask order
            if not running:
                break
            clock, _, s, outcome = heapq.heappop(running)
            if isinstance(outcome, Evaluation):
                outcome = dataclasses.replace(outcome, metrics={**outcome.metrics, "sim_time": clock})
            loop.tell(s, outcome)
    return loop.finish()


def replay_simulation(loop: Loop, state: LoopState) -> None:
    """Bring ``loop``'s freshly built ask/tell algorithm to the moment ``state`` was saved, by simulating its
    recorded rounds again: the same asks in the same order, told the recorded outcomes in completion order.

    Sets ``loop.simulation`` (the clock, and the trials running then, evaluated again: a task that keeps its trial
    states replays those evaluations without training) and the loop's pending trials. A replay that does not
    reproduce the recorded rounds (a non-deterministic algorithm) warns with :class:`ResumeWarning`.
    """
    algorithm, budget, workers = loop.algorithm, loop.budget, loop.budget.workers
    told = {_trial(r.metrics, r.round): o for r, o in zip(state.records, state.outcomes) if o is not None}
    spent = 0.0  # the cost booked so far (RegretBook.query_cost)
    committed: dict[int, float] = {}  # trial number -> the expected cost it was admitted with (Loop.admit)
    clock = 0.0
    running: list[Running] = []
    pending: dict[int, Suggestion] = {}  # trial number -> suggestion, in ask order
    diverged = None
    for record, outcome in zip(state.records, state.outcomes):
        r = record.round
        while (len(running) < workers and loop.refused is None and r + len(pending) <= budget.rounds
               and (budget.cost is None or spent < budget.cost)):  # Loop.can_ask at that moment
            t = r + len(pending)
            s = algorithm.ask_pending(t, list(pending.values()))  # type: ignore[attr-defined]
            if budget.cost is not None:  # Loop.admit as it was: the job fits what is left, running jobs counted
                cost = loop.job_cost(s)
                left = budget.cost - spent - sum(committed.values())
                if not (fits(cost, left, budget.cost) if cost is not None else left > 0):
                    loop.refused = cost if cost is not None else 0.0  # withdrawn there; nothing asked after it
                    break
                committed[t] = cost or 0.0
            ran = told.get(t)
            if ran is None:  # running at the checkpoint
                ran = evaluate(loop.task, s.config, t, s.observe, s.fidelity, s.config_id)
            pending[t] = s
            heapq.heappush(running, (clock + duration(ran), t, s, ran))
        if not running:
            diverged = diverged or r
            break
        clock, t, s, ran = heapq.heappop(running)
        del pending[t]
        committed.pop(t, None)
        if t != _trial(record.metrics, r) or not same_config(s.config, record.config):
            diverged = diverged or r
        algorithm.tell(s, outcome if outcome is not None else ran)  # type: ignore[attr-defined]
        spent += record.cost
        loop.note_cost(record)
    if diverged is not None:
        name = getattr(algorithm, "name", type(algorithm).__name__)
        warnings.warn(f"resume: simulating '{name}' again did not reproduce round {diverged}; the rest of the run "
                      "may differ from an uninterrupted one", ResumeWarning, stacklevel=3)
    loop.simulation = Simulation(clock, running)
    loop.adopt_pending([(s, t, committed.get(t)) for _, t, s, _ in sorted(running, key=lambda e: e[1])])


def _trial(metrics: dict[str, float], round: int) -> int:
    """A concurrent round's trial number (its ask order), logged as the ``trial`` metric."""
    return int(metrics.get("trial", round))
