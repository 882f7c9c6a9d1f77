"""Algorithm contracts: one ``step`` per loop round; black-box methods implement ask/tell instead."""
from __future__ import annotations

import functools
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from hpoflow.core.records import Evaluation, Failure, Record, Suggestion, as_outcome
from hpoflow.surrogates.base import require
from hpoflow.tasks.base import Task

if TYPE_CHECKING:
    import torch


class BuildContext:
    """What every algorithm may need besides its own config.

    ``dtype`` and ``device`` are torch's; given none, they come from ``hardware`` (a
    ``hpoflow.core.hardware.Resolved``, resolved -- torch imported -- only when read) or default to float64
    on the CPU. ``dtype_name`` says which without torch.
    """

    def __init__(self, task: Task, rounds: int, seed: int = 0, dtype: torch.dtype | None = None,
                 device: torch.device | None = None, surrogate: Callable[[int], Any] | None = None,
                 hardware: Any = None, workers: int = 1, cost: float | None = None) -> None:
        self.task, self.rounds, self.seed, self.surrogate = task, rounds, seed, surrogate  # surrogate: dim -> model
        self.workers = workers  # trials evaluated at once (budget.workers): algo=auto picks one with a pending rule
        self.cost = cost  # budget.cost (None: none): algo=auto picks a multi-fidelity method under a cost budget
        self._dtype, self._device, self.hardware = dtype, device, hardware

    @property
    def dtype_name(self) -> str:
        if self._dtype is not None:
            return str(self._dtype).removeprefix("torch.")
        return getattr(self.hardware, "dtype_name", "float64")

    @property
    def dtype(self) -> torch.dtype:
        if self._dtype is None:
            import torch

            self._dtype = self.hardware.dtype if self.hardware is not None else torch.float64
        return self._dtype

    @dtype.setter
    def dtype(self, value: torch.dtype) -> None:
        self._dtype = value

    @property
    def device(self) -> torch.device:
        if self._device is None:
            import torch

            self._device = self.hardware.device if self.hardware is not None else torch.device("cpu")
        return self._device

    @device.setter
    def device(self, value: torch.device) -> None:
        self._device = value

    def generator(self, offset: int = 0) -> torch.Generator:
        """A torch generator seeded with ``seed * 1_000_003 + offset`` (``generator_seed``)."""
        import torch

        g = torch.Generator()
        g.manual_seed(self.generator_seed(offset))
        return g

    def generator_seed(self, offset: int = 0) -> int:
        return self.seed * 1_000_003 + offset


class Algorithm(ABC):
    """One step of the common loop. Gradient-based methods implement ``step`` directly.

    Raises (from ``step``):
        Exception: errors of the objective; the loop applies its ``on_error`` policy.
    """

    name: str = "algorithm"
    # the surrogate capability it uses (a protocol of hpoflow.surrogates.base), None: it builds no surrogate.
    # Composition refuses a registered surrogate that lacks it before any run starts.
    surrogate_protocol: type | None = None
    # protocols it uses only where the model offers them (checked with isinstance), e.g. GP-BO's lengthscales
    surrogate_extras: tuple[type, ...] = ()

    @abstractmethod
    def step(self, round: int) -> Record:
        """Run round ``round`` (1-based) and return its Record."""

    def run_tags(self) -> dict[str, str]:
        """Tags the run records about choices the algorithm made when it was built (``algo=auto``: what it
        picked and why); also printed in the CLI's end-of-run summary. Default: none."""
        return {}

    def new_surrogate(self, ctx: BuildContext, algo: str) -> Any:
        """A fresh model from ``ctx``'s factory, checked against ``surrogate_protocol``.

        Raises:
            ValueError: the one-line refusal (no factory, or a model without the protocol's members).
        """
        model = ctx.surrogate(ctx.task.space.dim) if ctx.surrogate is not None else None
        require(algo, model, self.surrogate_protocol)
        return model

    # -- resume contract (optional) ---------------------------------------------------------------------
    # Do nothing and resume still works: a fresh instance (same config, same seed) *replays* the run: it
    # is asked again every past round and told the recorded outcome (objectives are not re-evaluated;
    # ``step`` algorithms re-run their steps). That is exact whenever ask/tell are deterministic given the
    # seed (RNGs from ``ctx.generator``, no wall-clock decisions), and costs one ask per past round.
    # Override BOTH methods below when ask is expensive or not deterministic; the loop then calls
    # ``load_state_dict`` on a freshly built instance instead of replaying. A wrapper that passes every call to
    # an algorithm in its ``delegate`` attribute (algo=auto) is saved and restored the way that delegate is.

    def state_dict(self) -> dict[str, Any]:
        """The full state for an exact resume: tensors and plain Python values only (dict, list, int,
        float, str, bool, None; string dict keys) -- the checkpoint is plain JSON, no pickled objects --
        including your RNG states (``generator.get_state()``). Not overridden: resume replays instead."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: B027 - an optional hook, empty by design
        """Restore what ``state_dict`` returned into a freshly built instance (same config and seed)."""


class PendingNotSupported(ValueError):
    """The algorithm cannot propose a point while earlier ones are still being evaluated."""


def _public_ask(ask: Callable[..., Suggestion]) -> Callable[..., Suggestion]:
    """``ask()`` takes the next round itself; an explicit round must be a 1-based integer."""

    @functools.wraps(ask)
    def wrapper(self: AskTellAlgorithm, round: int | None = None, *args: Any, **kwargs: Any) -> Suggestion:
        last = self.__dict__.get("_last_round", 0)
        if round is None:
            round = last + 1
        elif isinstance(round, bool) or not isinstance(round, numbers.Integral) or round < 1:
            raise ValueError(f"ask(round={round!r}): rounds are 1-based integers; ask() takes the next one")
        self.__dict__["_last_round"] = max(last, int(round))
        return ask(self, int(round), *args, **kwargs)

    return wrapper


def _public_tell(tell: Callable[..., None]) -> Callable[..., None]:
    """``tell`` takes an Evaluation, a Failure, or a number (float, NumPy scalar, 1-element array)."""

    @functools.wraps(tell)
    def wrapper(self: AskTellAlgorithm, suggestion: Suggestion, outcome: Any, *args: Any, **kwargs: Any) -> None:
        return tell(self, suggestion, as_outcome(outcome), *args, **kwargs)

    return wrapper


class AskTellAlgorithm(Algorithm):
    """Black-box methods: the loop calls ``ask``, evaluates the task (if ``observe``), then ``tell``.

    Pending points: ``pending_rule`` names how the algorithm proposes a point while earlier suggestions are
    still being evaluated (``workers > 1``, or ``Study.ask()`` again before ``tell``); ``None`` refuses that
    (``PendingNotSupported``). The loop calls ``ask_pending``; subclasses that support pending points
    override ``_ask_with_pending`` unless ``ask`` alone already gives distinct points.
    """

    pending_rule: ClassVar[str | None] = None
    pending_refusal: ClassVar[str] = "it keeps one pending suggestion"  # why, when pending_rule is None

    def __init__(self, task: Task) -> None:
        self.task = task

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "ask" in cls.__dict__:  # every implementation: ask() without a round, tell() with a plain number
            cls.ask = _public_ask(cls.__dict__["ask"])  # type: ignore[method-assign]
        if "tell" in cls.__dict__:
            cls.tell = _public_tell(cls.__dict__["tell"])  # type: ignore[method-assign]

    @abstractmethod
    def ask(self, round: int) -> Suggestion:
        """Propose the next point (``round``: 1-based; omitted, the round after the last one asked)."""

    @abstractmethod
    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        """Receive the evaluation of ``suggestion`` (or the failure to evaluate it; a float is an Evaluation)."""

    def ask_pending(self, round: int, pending: Sequence[Suggestion]) -> Suggestion:
        """The next point while the ``pending`` suggestions are still being evaluated (told in any order later).

        Raises:
            PendingNotSupported: ``pending`` is not empty and the algorithm has no rule for it (one line).
        """
        if not pending:
            return self.ask(round)
        if self.pending_rule is None:
            name = getattr(self, "name", type(self).__name__)
            raise PendingNotSupported(
                f"algo={name} does not support pending trials ({self.pending_refusal}): use workers=1 (tell each "
                "trial before the next ask), or an algorithm that does, e.g. gp_ei, gp_ucb, turbo, random, grid, "
                "optuna_tpe")
        return self._ask_with_pending(round, list(pending))

    def adopt(self, suggestion: Suggestion) -> Suggestion | None:
        """Take back a trial asked before a resume and still running when the checkpoint was saved (``suggestion``
        is rebuilt from the checkpoint: config, point, ``observe``, info, fidelity, config id), as asked and not told:
        the loop evaluates the suggestion returned and tells it once. The state loaded or replayed into the algorithm
        is the checkpoint's, which already counts that ask. Default: ``suggestion`` itself (``tell`` takes a point the
        algorithm did not hand out, as after a replay or a Study's foreign trial); None where the algorithm cannot
        (it keeps its own object per trial): the resumed run asks anew instead."""
        return suggestion

    def _ask_with_pending(self, round: int, pending: list[Suggestion]) -> Suggestion:
        """Default for algorithms whose ``ask`` ignores the history (random, grid): ask as usual."""
        return self.ask(round)

    def step(self, round: int) -> Record:  # used when the algorithm runs outside the loop
        s = self.ask(round)
        ev = self.task.evaluate(s.config, round=round, observe=s.observe)
        self.tell(s, ev)
        return Record(round=round, config=s.config, value=ev.value if s.observe else None, queried=s.observe,
                      cost=ev.cost, true_value=ev.true_value, optimum=ev.optimum, metrics={**ev.metrics, **s.info})
