"""Simulated time: ``k`` workers replayed exactly on one thread (``budget.executor=simulated``).

Each evaluation runs at once in the driver, and takes ``duration`` *simulated* seconds: its ``elapsed`` metric
when the task reports one (a replayed learning curve's recorded training time), else its cost. The driver keeps a
clock and a queue of running trials ordered by simulated finish time: a worker that frees at time ``t`` gets the
next ask at ``t``, and results are told in simulated completion order, so an asynchronous method (ASHA) with ``k``
workers sees exactly what it would see on ``k`` real workers whose evaluations took those times (Syne Tune's
simulator backend does the same). Every round logs ``sim_time``, the simulated clock when it completed.

Written by hand: the event queue is a dozen lines over ``heapq``; the simulators that exist (Syne Tune's) are
tied to their own schedulers and trial objects.
"""
from __future__ import annotations

import dataclasses
import heapq
import itertools

from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.runner.loop import Loop, RunResult, evaluate

__all__ = ["drive_simulated", "duration"]


def duration(outcome: Evaluation | Failure) -> float:
    """Simulated seconds an evaluation took: its ``elapsed`` metric, else its cost (a failure: its cost)."""
    if isinstance(outcome, Evaluation):
        return float(outcome.metrics.get("elapsed", outcome.cost))
    return float(outcome.cost)


def drive_simulated(loop: Loop, workers: int) -> RunResult:
    """Run ``loop`` with ``workers`` simulated workers until the budget is spent, then finish it."""
    clock = 0.0
    order = itertools.count()  # ties in finish time: ask order
    running: list[tuple[float, int, Suggestion, Evaluation | Failure]] = []
    with loop.guard():
        while True:
            while len(running) < workers and loop.can_ask:
                s = loop.ask_fitting()
                if s is None:
                    break  # did not fit the cost budget: the running trials end the run
                outcome = evaluate(loop.task, s.config, loop.trial_number(s), s.observe, s.fidelity, s.config_id)
                heapq.heappush(running, (clock + duration(outcome), next(order), s, outcome))
            if not running:
                break
            clock, _, s, outcome = heapq.heappop(running)
            if isinstance(outcome, Evaluation):
                outcome = dataclasses.replace(outcome, metrics={**outcome.metrics, "sim_time": clock})
            loop.tell(s, outcome)
    return loop.finish()
