"""A run's budget: how many rounds, how much query cost, how many trials at once, and where they run.

The one place the budget's defaults and checks live: the CLI's config schema (``budget:`` in ``conf/``), the
library's settings and the loop all use this dataclass, so a bad value gets the same one-line message
(``budget.workers=0 must be a positive integer ...``) wherever it comes from.
"""
from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass

__all__ = ["COST_TOL", "EXECUTORS", "ROUNDS_UNDER_COST", "Budget", "cost_note", "fits", "rounds_text"]

EXECUTORS = ("thread", "process", "ray", "simulated")  # where budget.workers > 1 evaluate their trials
# simulated: k workers replayed on one thread in simulated time (hpoflow.runner.simulated)
ROUNDS_UNDER_COST = 1_000_000  # budget.rounds' default under a cost budget: no round limit, the cost ends the run
COST_TOL = 1e-9  # relative: a job whose cost exceeds what remains by less than this still fits (float sums)


@dataclass
class Budget:
    """Stop after ``rounds`` rounds, or before a job that does not fit in the cost budget ``cost`` (if set).

    The cost budget holds (:func:`fits`): a job whose cost is known before it runs (a multi-fidelity job: its level,
    or only the units it adds to a trial it continues) starts only if it fits in what remains of ``cost`` once the
    jobs still running are counted; the first one that does not fit is not started and the run ends, the summary
    saying so (:func:`cost_note`). A job whose cost only the evaluation knows (a task without a fidelity) is
    predicted to cost the most any evaluation of the run has cost so far; one that costs more than predicted can
    overshoot, and the summary then says by how much.

    ``workers``: trials evaluated at once by :func:`hpoflow.runner.loop.drive`, on ``executor``.
    Raises ``ValueError`` (one line naming the value and what is allowed) on a bad value.
    """

    rounds: int = 30
    cost: float | None = None  # the cost budget: a job starts only if its cost fits in what is left of it
    workers: int = 1           # trials evaluated at once; a new one starts as soon as one ends (asynchronous)
    executor: str = "thread"   # thread | process | ray | simulated: where the workers run (process: the task must
    # pickle; simulated: in simulated time, each evaluation taking its 'elapsed' metric or its cost)

    def __post_init__(self) -> None:
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1:
            raise ValueError(f"budget.rounds={self.rounds!r} must be a positive integer")
        if self.cost is not None and (isinstance(self.cost, bool) or not isinstance(self.cost, (int, float))
                                      or not 0 < self.cost < math.inf):
            raise ValueError(f"budget.cost={self.cost!r} must be a finite number > 0, or null")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"budget.workers={self.workers!r} must be a positive integer (trials evaluated at once)")
        if self.executor not in EXECUTORS:
            raise ValueError(f"budget.executor={self.executor!r} is unknown; allowed: {', '.join(EXECUTORS)}")
        if self.executor == "ray" and importlib.util.find_spec("ray") is None:  # the cluster extra
            raise ValueError("budget.executor=ray needs Ray, which is not installed: pip install 'hpoflow[cluster]', "
                             "or budget.executor=thread|process")

    @property
    def round_limit(self) -> int | None:
        """``rounds``, or None when it is only the default lifted under a cost budget (no round limit)."""
        return None if self.cost is not None and self.rounds >= ROUNDS_UNDER_COST else self.rounds


def rounds_text(rounds: int, cost: float | None = None) -> str:
    """``'30 rounds'``, or for the default lifted under a cost budget ``'no round limit (a cost budget)'``
    (``'no round limit (budget.cost=810)'`` given the budget): what a user reads instead of 10^6."""
    if rounds >= ROUNDS_UNDER_COST:
        return "no round limit (" + ("a cost budget" if cost is None else f"budget.cost={cost:g}") + ")"
    return f"{rounds} rounds"


def fits(cost: float, remaining: float, budget: float) -> bool:
    """A job costing ``cost`` fits in ``remaining`` of a cost ``budget`` (float sums get :data:`COST_TOL`)."""
    return cost <= remaining + COST_TOL * budget


def cost_note(budget: float, spent: float, refused: float | None = None) -> str:
    """The summary's line about a cost budget: what was spent of it, and why the run ended below it or beyond it.

    ``refused``: the cost of the job that did not fit (the run ended there), or None."""
    note = f"cost budget {budget:g}: spent {spent:g}"
    if spent > budget * (1 + COST_TOL):
        return (f"{note}, {spent - budget:g} over: the last evaluations cost more than predicted (their cost is "
                "known only once they ran)")
    if refused is not None and spent < budget * (1 - COST_TOL):  # spent in full: nothing to explain
        return f"{note}; the next job ({refused:g} units) did not fit in the {max(budget - spent, 0.0):g} left"
    return note
