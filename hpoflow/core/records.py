"""What flows through the loop: evaluations, suggestions, records, and regret book-keeping.

Regret follows SPEC conventions: instantaneous ``r_t = |f* - f(x_t)|`` in the optimising direction,
using the noise-free value when the task knows it; cumulative is the sum, simple the minimum.
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor


class Direction(str, enum.Enum):
    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"

    @property
    def sign(self) -> float:
        """+1 when larger is better: ``sign * value`` is always a reward."""
        return 1.0 if self is Direction.MAXIMIZE else -1.0

    def better(self, a: float, b: float) -> bool:
        return a > b if self is Direction.MAXIMIZE else a < b


class RunStatus(str, enum.Enum):
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLED = "KILLED"


class OnError(str, enum.Enum):
    """What the loop does when an objective raises or returns NaN/inf."""

    FAIL = "fail"
    SKIP = "skip"


@dataclass
class Evaluation:
    """What a task returns for one configuration.

    ``value`` is the one number a single-objective method optimises. A multi-fidelity evaluation also says the
    ``fidelity`` level it reached and its learning ``curve``: ``[step, value]`` pairs, one per fidelity step
    trained *in this call* (a continued trial reports only its new steps; ``cost`` then counts only them).
    ``values``: further named values (objectives, constraints) the task reports beside ``value``.
    """

    value: float
    true_value: float | None = None
    cost: float = 1.0
    metrics: dict[str, float] = field(default_factory=dict)
    optimum: float | None = None  # round-specific f* for time-varying tasks
    fidelity: float | None = None  # the level evaluated at (None: the task has no fidelity, or its full one)
    curve: list[list[float]] = field(default_factory=list)  # [[step, value], ...] reached in this call
    values: dict[str, float] = field(default_factory=dict)  # named values besides ``value`` (several objectives)


def as_evaluation(value: Any) -> Evaluation:
    """A number (float, int, NumPy scalar, 0-d or 1-element array or tensor) or an Evaluation, as an Evaluation.

    Raises:
        TypeError: anything else (a dict, a string, an array with several elements).
    """
    if isinstance(value, Evaluation):
        return value
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"the objective returned {value!r}; expected a float or an Evaluation")
    size = value.numel() if hasattr(value, "numel") else getattr(value, "size", None)  # torch / NumPy
    if hasattr(value, "item") and size == 1:  # a NumPy scalar, a 0-d or 1-element array is a number to users
        value = value.item()
    try:
        return Evaluation(value=float(value))
    except (TypeError, ValueError):
        raise TypeError(f"the objective returned {type(value).__name__} {value!r:.80}; expected a float or an "
                        "Evaluation") from None


def as_outcome(value: Any) -> Evaluation | Failure:
    """What ``tell`` accepts: an Evaluation, a Failure, or a number (see ``as_evaluation``)."""
    return value if isinstance(value, Failure) else as_evaluation(value)


@dataclass
class Suggestion:
    """A point an ask/tell algorithm proposes; ``observe=False`` means do not pay to observe it.

    Multi-fidelity methods also say the ``fidelity`` level to evaluate at (None: the task's full fidelity) and the
    ``config_id`` of the configuration across its evaluations (a promoted trial keeps its id, so a task that can
    continue training resumes from the level that id reached).
    """

    config: dict[str, Any]
    x: Tensor
    observe: bool = True
    info: dict[str, float] = field(default_factory=dict)
    fidelity: float | None = None
    config_id: int | None = None

    def point(self) -> list[float]:
        """The point's coordinates in ``[0, 1]^d`` as floats (what a checkpoint stores)."""
        return self.x.detach().cpu().double().tolist()


class PlainSuggestion(Suggestion):
    """A suggestion made without torch: its point is a tuple of floats, and ``x`` (a float64 tensor, as every
    other suggestion's) is built on first use, importing torch only then (see ``RandomSearch``)."""

    def __init__(self, config: dict[str, Any], u: Sequence[float], observe: bool = True,
                 info: dict[str, float] | None = None, fidelity: float | None = None,
                 config_id: int | None = None) -> None:
        self.config, self.u, self.observe = config, tuple(float(v) for v in u), observe
        self.info = {} if info is None else info
        self.fidelity, self.config_id = fidelity, config_id
        self._x: Tensor | None = None

    @property
    def x(self) -> Tensor:
        if self._x is None:
            import torch

            self._x = torch.tensor(self.u, dtype=torch.float64)
        return self._x

    @x.setter
    def x(self, value: Tensor) -> None:
        self._x = value

    def point(self) -> list[float]:
        return list(self.u) if self._x is None else super().point()


@dataclass
class Failure:
    """An evaluation that raised or produced a non-finite value.

    ``cost`` is what the attempt spent (charged to the cost budget like any query): the evaluation's own
    cost for a non-finite value, or the ``cost`` attribute of the raised exception (see ``ObjectiveFailed``).
    """

    error: str
    cost: float = 0.0


class ObjectiveFailed(RuntimeError):
    """Raise from ``Task.evaluate`` to report a failure together with the cost already spent on it."""

    def __init__(self, message: str, cost: float = 0.0) -> None:
        super().__init__(message)
        self.cost = check_cost(cost, "ObjectiveFailed(cost=...)")


def check_cost(cost: Any, where: str = "cost") -> float:
    """``cost`` as a float: a finite number >= 0 (what a budget can add up).

    Raises:
        ValueError: anything else, one line naming the value.
    """
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) and not hasattr(cost, "__float__"):
        raise ValueError(f"{where}: cost={cost!r} must be a finite number >= 0")
    try:
        value = float(cost)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: cost={cost!r} must be a finite number >= 0") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: cost={cost!r} must be a finite number >= 0")
    return value


@dataclass
class Record:
    """One round of the loop, whatever algorithm produced it."""

    round: int
    config: dict[str, Any]
    value: float | None
    queried: bool = True
    cost: float = 0.0
    true_value: float | None = None
    optimum: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    failed: bool = False
    error: str | None = None
    fidelity: float | None = None    # the level evaluated at (multi-fidelity)
    config_id: int | None = None     # the configuration's id across fidelities (multi-fidelity)
    curve: list[list[float]] = field(default_factory=list)  # [[step, value], ...] trained in this round
    values: dict[str, float] = field(default_factory=dict)  # named values besides ``value``


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def at_full_fidelity(record: Record, full_fidelity: float | None) -> bool:
    """Whether ``record`` can be the incumbent: it was evaluated at ``full_fidelity`` (the task's maximum), or the
    task has no fidelity (``full_fidelity`` None), or the record names no level (its task's full one)."""
    return full_fidelity is None or record.fidelity is None or record.fidelity >= full_fidelity * (1 - 1e-12)


@dataclass
class RegretBook:
    """Running best value, regret and cost; turns a Record into the per-step metrics the loop logs.

    The incumbent (``best_value``, ``best_config``) and the simple regret count only evaluations at the task's full
    fidelity (``full_fidelity``, its maximum; None: a task without a fidelity, where every evaluation counts): a
    configuration seen only after 9 of 27 epochs is not what one would deploy, and on curves that fall and rise
    its value there says little about the end. Optuna, SMAC3 and Syne Tune report the same way. Until a run's first
    full-fidelity evaluation it has no incumbent (``best_value`` None, and no ``best_value`` metric yet). With several
    objectives or constraints the Pareto front (``pareto``) holds full-fidelity evaluations only, by the same rule.
    Cumulative regret sums every evaluation, whatever its level.
    """

    direction: Direction
    optimum: float | None
    best_value: float | None = None
    best_config: dict[str, Any] | None = None
    cumulative_regret: float = 0.0
    simple_regret: float = math.inf
    query_cost: float = 0.0
    n_failed: int = 0
    full_fidelity: float | None = None  # the level at which an evaluation can be the incumbent (None: any)
    # several objectives: a hpoflow.core.objectives.ParetoBook (the front, hypervolume, feasibility per round); typed
    # Any since objectives imports this module (no import cycle, not even under TYPE_CHECKING)
    pareto: Any = None

    def add(self, record: Record) -> dict[str, float]:
        """Update the book with ``record`` and return its metrics (step = record.round)."""
        self.query_cost += record.cost
        out: dict[str, float] = {"query_cost": self.query_cost}
        if record.failed:
            self.n_failed += 1
        if self.n_failed:  # logged once anything failed; absent means "none failed" (saves a write per round)
            out["failed"] = float(self.n_failed)
        full = at_full_fidelity(record, self.full_fidelity)
        if record.queried and _finite(record.value):
            out["value"] = float(record.value)  # type: ignore[arg-type]
            if full and (self.best_value is None
                         or self.direction.better(record.value, self.best_value)):  # type: ignore[arg-type]
                self.best_value, self.best_config = float(record.value), dict(record.config)  # type: ignore[arg-type]
        if self.best_value is not None:
            out["best_value"] = self.best_value
        f_star = record.optimum if record.optimum is not None else self.optimum
        truth = record.true_value if record.true_value is not None else record.value
        if f_star is not None and _finite(truth):
            r = abs(f_star - truth)  # type: ignore[operator]
            self.cumulative_regret += r
            if full:
                self.simple_regret = min(self.simple_regret, r)
            out.update(regret=r, cumulative_regret=self.cumulative_regret)
            if math.isfinite(self.simple_regret):
                out["simple_regret"] = self.simple_regret
        if record.true_value is not None and record.true_value != record.value:
            out["true_value"] = float(record.true_value)
        if record.fidelity is not None:  # a multi-fidelity round: the level and the configuration it belongs to
            out["fidelity"] = float(record.fidelity)
            if record.config_id is not None:
                out["config_id"] = float(record.config_id)
        for key, val in (*record.values.items(), *record.metrics.items()):
            if isinstance(val, (int, float)) and math.isfinite(val):
                out[key] = float(val)
        if self.pareto is not None:  # the front, like the incumbent, holds full-fidelity evaluations only
            out.update(self.pareto.add(record.values if record.queried and not record.failed and full else None))
        return out

    def replay(self, records: Sequence[Record]) -> None:
        """Rebuild the Pareto front from the records of a resumed run (the front is not in the checkpoint)."""
        if self.pareto is not None:
            for record in records:
                full = at_full_fidelity(record, self.full_fidelity)
                self.pareto.add(record.values if record.queried and not record.failed and full else None)

    def summary(self) -> dict[str, Any]:
        s: dict[str, Any] = {"best_value": self.best_value, "best_config": self.best_config,
                             "query_cost": self.query_cost, "failed": self.n_failed}
        if self.full_fidelity is not None:
            s["incumbent_fidelity"] = self.full_fidelity  # the incumbent counts evaluations at this level only
        if self.optimum is not None or math.isfinite(self.simple_regret):
            s.update(cumulative_regret=self.cumulative_regret,
                     simple_regret=self.simple_regret if math.isfinite(self.simple_regret) else None)
        if self.pareto is not None:
            s.update(self.pareto.summary())
        return s
