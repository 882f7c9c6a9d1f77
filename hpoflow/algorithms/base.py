"""Algorithm contracts: one ``step`` per loop round; black-box methods implement ask/tell instead."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from hpoflow.core.records import Evaluation, Failure, Record, Suggestion
from hpoflow.tasks.base import Task


@dataclass
class BuildContext:
    """What every algorithm may need besides its own config."""

    task: Task
    rounds: int
    seed: int = 0
    dtype: torch.dtype = torch.float64
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    surrogate: Callable[[int], Any] | None = None  # dim -> fresh surrogate model

    def generator(self, offset: int = 0) -> torch.Generator:
        g = torch.Generator()
        g.manual_seed(self.seed * 1_000_003 + offset)
        return g


class Algorithm(ABC):
    """One step of the common loop. Gradient-based methods implement ``step`` directly.

    Raises (from ``step``):
        Exception: errors of the objective; the loop applies its ``on_error`` policy.
    """

    name: str = "algorithm"

    @abstractmethod
    def step(self, round: int) -> Record:
        """Run round ``round`` (1-based) and return its Record."""

    # -- resume contract (optional) ---------------------------------------------------------------------
    # Do nothing and resume still works: a fresh instance (same config, same seed) *replays* the run: it
    # is asked again every past round and told the recorded outcome (objectives are not re-evaluated;
    # ``step`` algorithms re-run their steps). That is exact whenever ask/tell are deterministic given the
    # seed (RNGs from ``ctx.generator``, no wall-clock decisions), and costs one ask per past round.
    # Override BOTH methods below when ask is expensive or not deterministic; the loop then calls
    # ``load_state_dict`` on a freshly built instance instead of replaying.

    def state_dict(self) -> dict[str, Any]:
        """The full state for an exact resume: tensors and plain Python values only (dict, list, int,
        float, str, bool, None; string dict keys) -- the checkpoint is plain JSON, no pickled objects --
        including your RNG states (``generator.get_state()``). Not overridden: resume replays instead."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: B027 - an optional hook, empty by design
        """Restore what ``state_dict`` returned into a freshly built instance (same config and seed)."""


class AskTellAlgorithm(Algorithm):
    """Black-box methods: the loop calls ``ask``, evaluates the task (if ``observe``), then ``tell``."""

    def __init__(self, task: Task) -> None:
        self.task = task

    @abstractmethod
    def ask(self, round: int) -> Suggestion:
        """Propose the next point."""

    @abstractmethod
    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        """Receive the evaluation of ``suggestion`` (or the failure to evaluate it)."""

    def step(self, round: int) -> Record:  # used when the algorithm runs outside the loop
        s = self.ask(round)
        ev = self.task.evaluate(s.config, round=round, observe=s.observe)
        self.tell(s, ev)
        return Record(round=round, config=s.config, value=ev.value if s.observe else None, queried=s.observe,
                      cost=ev.cost, true_value=ev.true_value, optimum=ev.optimum, metrics={**ev.metrics, **s.info})
