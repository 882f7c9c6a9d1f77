"""The Task contract: a search space, a direction, and an ``evaluate`` that returns an Evaluation."""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import SearchSpace

if TYPE_CHECKING:
    import torch


class Task(ABC):
    """An objective to optimise.

    Attributes:
        name: registry name, used for tags and the default experiment name.
        space: the hyperparameters.
        direction: whether larger or smaller values are better.
        optimum: the known optimal value f*, or None (reports then use the best value seen).
        bound: a known bound on f* (e.g. accuracy <= 1) used for run-time regret when f* is unknown.
        candidates: a finite set of encoded points (``m x d``) when the domain is a finite set.
        fidelity: the resource an evaluation may be given (``hpoflow.core.fidelity.Fidelity``), or None. A task
            that declares one implements ``evaluate_at``; its ``evaluate`` is the full fidelity's.
        objectives: several objectives and constraints over the Evaluation's named ``values``
            (``hpoflow.core.objectives.Objectives``), or None (one objective: ``value``). With them, ``value``
            is the first objective in minimisation form and ``direction`` is MINIMIZE.
    """

    name: str = "task"
    space: SearchSpace
    direction: Direction = Direction.MINIMIZE
    optimum: float | None = None
    bound: float | None = None
    candidates: torch.Tensor | None = None
    fidelity: Fidelity | None = None
    objectives: Objectives | None = None

    @abstractmethod
    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        """Evaluate ``config`` at loop round ``round``.

        With ``observe=False`` the task must not charge cost nor reveal a noisy value (value is NaN);
        it may still report ``true_value`` so that regret can be charged.

        Raises:
            Exception: any error of the objective; the loop applies its ``on_error`` policy.
        """

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        """Evaluate ``config`` at ``fidelity`` (a level of ``self.fidelity``).

        ``config_id`` names the configuration across its evaluations: a task that can continue training resumes
        the state it kept for that id at a lower level, trains only the levels in between, charges only them as
        ``cost`` and reports them as the ``curve``; one that cannot trains from scratch (cost = the level).
        The Evaluation says the ``fidelity`` it reached.

        Raises:
            TypeError: the task declares no fidelity.
        """
        raise TypeError(f"task '{self.name}' declares no fidelity: it cannot be evaluated at {fidelity}; "
                        "use a full-fidelity algorithm, or a task with a fidelity")

    def expected_cost(self, fidelity: float | None, reached: float = 0.0,
                      config_id: int | None = None) -> float | None:
        """What an evaluation at ``fidelity`` (None: the full evaluation) will cost, known before it runs, for the
        configuration ``config_id`` whose trial has reached level ``reached``; None when only the evaluation can
        say.

        The loop holds a cost budget with it (`hpoflow.core.budget.fits`). Default: with a fidelity, the level
        (trained from scratch, what `evaluate_at` charges by default); without one, unknown. A task that
        continues trials (`hpoflow.tasks.continuation.Continuable`) charges only the units above ``reached``."""
        if self.fidelity is None:
            return None
        return float(self.fidelity.level(self.fidelity.max if fidelity is None else fidelity))

    @property
    def regret_reference(self) -> float | None:
        """f* if known, else the bound, for run-time regret."""
        return self.optimum if self.optimum is not None else self.bound

    def reference_values(self) -> dict[str, float]:
        """Known reference numbers of this task instance (e.g. an exact optimum), recorded as run tags
        ``task.<key>``. Default: none."""
        return {}

    def close(self) -> None:  # noqa: B027 - an optional hook, empty by design
        """Release resources (files, pools). Default: nothing."""


def unobserved(true_value: float | None = None, **metrics: float) -> Evaluation:
    """The Evaluation of a round the algorithm chose not to pay for."""
    return Evaluation(value=math.nan, true_value=true_value, cost=0.0, metrics=dict(metrics))
