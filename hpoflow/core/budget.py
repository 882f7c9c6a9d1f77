"""A run's budget: how many rounds, how much query cost, how many trials at once, and where they run.

The one place the budget's defaults and checks live: the CLI's config schema (``budget:`` in ``conf/``), the
library's settings and the loop all use this dataclass, so a bad value gets the same one-line message
(``budget.workers=0 must be a positive integer ...``) wherever it comes from.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass

__all__ = ["EXECUTORS", "Budget"]

EXECUTORS = ("thread", "process", "ray", "simulated")  # where budget.workers > 1 evaluate their trials
# simulated: k workers replayed on one thread in simulated time (hpoflow.runner.simulated)


@dataclass
class Budget:
    """Stop after ``rounds`` rounds, or once the cumulative cost reaches ``cost`` (if set).

    ``workers``: trials evaluated at once by :func:`hpoflow.runner.loop.drive`, on ``executor``.
    Raises ``ValueError`` (one line naming the value and what is allowed) on a bad value.
    """

    rounds: int = 30
    cost: float | None = None  # stop once cumulative query cost reaches this
    workers: int = 1           # trials evaluated at once; a new one starts as soon as one ends (asynchronous)
    executor: str = "thread"   # thread | process | ray | simulated: where the workers run (process: the task must
    # pickle; simulated: in simulated time, each evaluation taking its 'elapsed' metric or its cost)

    def __post_init__(self) -> None:
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1:
            raise ValueError(f"budget.rounds={self.rounds!r} must be a positive integer")
        if self.cost is not None and (isinstance(self.cost, bool) or not isinstance(self.cost, (int, float))
                                      or not self.cost > 0):
            raise ValueError(f"budget.cost={self.cost!r} must be > 0 or null")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"budget.workers={self.workers!r} must be a positive integer (trials evaluated at once)")
        if self.executor not in EXECUTORS:
            raise ValueError(f"budget.executor={self.executor!r} is unknown; allowed: {', '.join(EXECUTORS)}")
        if self.executor == "ray" and importlib.util.find_spec("ray") is None:  # the cluster extra
            raise ValueError("budget.executor=ray needs Ray, which is not installed: pip install 'hpoflow[cluster]', "
                             "or budget.executor=thread|process")
