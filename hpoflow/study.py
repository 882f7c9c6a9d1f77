"""Ask/tell for a training loop the caller owns: ``trial = study.ask()``, train, ``study.tell(trial, value)``.

A :class:`Study` is one run of the common loop (:class:`hpoflow.runner.loop.Loop`) advanced from outside: the same
regret book, MLflow records (run lease, statuses), checkpoints and resume as a CLI run.
"""
from __future__ import annotations

import atexit
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from hpoflow.algorithms.base import AskTellAlgorithm
from hpoflow.api import Result, open_library_run, result_of
from hpoflow.config.compose import library_settings
from hpoflow.config.settings import ConfigError
from hpoflow.core.records import Direction, Evaluation, Failure, Record, RunStatus, Suggestion
from hpoflow.core.space import SearchSpace, parse_space
from hpoflow.runner.loop import outcome_of
from hpoflow.tasks.function import FunctionTask, as_evaluation


class StudyClosed(RuntimeError):
    """The study has ended (budget spent, finished, or failed): nothing more can be asked or told."""


@dataclass(frozen=True)
class Trial:
    """One round's suggestion: evaluate ``config`` (unless ``observe`` is False), then ``Study.tell`` it."""

    number: int                # the round, 1-based
    config: dict[str, Any]
    observe: bool = True       # False: a costly-feedback rule chose not to pay for this round; tell it no value
    suggestion: Suggestion | None = field(default=None, repr=False, compare=False)


class Study:
    """Ask/tell over any registered ask/tell algorithm, tracked and resumable like a CLI run.

    Example::

        with Study({"lr": ("log", 1e-4, 1e-1)}, algo="gp_ei", rounds=20, tracking="sqlite:///runs.db") as s:
            while not s.done:
                trial = s.ask()
                s.tell(trial, train(trial.config))   # or s.tell(trial, failed="diverged")

    Args:
        space: a :class:`SearchSpace` or a dict spec (see :func:`hpoflow.minimize`).
        algo: a registered ask/tell algorithm at its ``conf/algo`` defaults; ``**settings`` override them.
        rounds: the budget: the study ends (FINISHED) after this many tells.
        seed: seeds the algorithm and Python's, NumPy's and torch's global RNGs.
        tracking: None, an MLflow store URI, or tracking settings (see :func:`hpoflow.minimize`).
        checkpoint: a file for the study's state after every tell. A new Study with the same arguments and an
            existing checkpoint continues it (its MLflow run too); a trial asked but not told is asked again.
        direction: ``minimize`` or ``maximize``.
        name: the task's name (tags, default MLflow experiment).
        on_error: ``skip`` (default): a failed trial is recorded and the study goes on; ``fail``: it ends the
            study as FAILED (``tell`` raises ObjectiveError).

    Leaving a ``with`` block normally finishes the study (FINISHED, even before its budget is spent); an
    exception leaves it FAILED (KILLED for Ctrl-C). A process that exits with the study open leaves it KILLED,
    resumable from its checkpoint.

    Raises:
        ConfigError: bad algorithm, setting or store; an algorithm without ask/tell; a checkpoint of other settings.
        SpaceError: a bad space spec.
    """

    def __init__(self, space: SearchSpace | dict[str, Any], algo: str = "gp_ei", rounds: int = 30, seed: int = 0,
                 tracking: str | dict[str, Any] | None = None, *, checkpoint: str | Path | None = None,
                 direction: str = "minimize", name: str | None = None, optimum: float | None = None,
                 surrogate: str | dict[str, Any] | None = None, on_error: str = "skip", hardware: str = "auto",
                 **settings: Any) -> None:
        try:
            goal = Direction(direction)
        except ValueError:
            raise ConfigError(f"direction={direction!r} is unknown; allowed: minimize, maximize") from None
        task = FunctionTask(parse_space(space), None, goal, name or "study", optimum)
        s = library_settings(algo, task.description(), seed=seed, rounds=rounds, tracking=tracking,
                             surrogate=surrogate, hardware=hardware, on_error=on_error, algo_settings=settings)
        self._run, self._finished = open_library_run(s, task, checkpoint)
        self._trial: Trial | None = None
        if self._run is not None:
            if not isinstance(self._run.loop.algorithm, AskTellAlgorithm):
                self._run.loop.abort(RunStatus.FAILED, f"algo={algo} has no ask/tell")
                raise ConfigError(f"algo={algo} is a gradient method that runs its own task (step); a Study needs "
                                  "an ask/tell algorithm")
            atexit.register(self._exit_open)

    # -- ask / tell ---------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The study has ended: its budget is spent, or it was finished or failed."""
        return self._run is None or self._run.loop.done

    def ask(self) -> Trial:
        """The next trial to evaluate.

        Raises:
            StudyClosed: the study has ended.
            RuntimeError: the last trial was not told yet.
        """
        if self.done:
            raise StudyClosed(f"the study has ended ({self._status().value}); nothing more to ask")
        if self._trial is not None:
            raise RuntimeError(f"trial {self._trial.number} was asked but not told: tell it first "
                               "(tell(trial, failed='...') if it could not be evaluated)")
        s = self._run.loop.ask()
        self._trial = Trial(self._run.loop.round, dict(s.config), s.observe, s)
        return self._trial

    def tell(self, trial: Trial, value: float | Evaluation | None = None, *, failed: str | None = None) -> Record:
        """Report the outcome of ``trial``: its value (a float or an Evaluation), or ``failed="why"``.

        An unobserved trial (``trial.observe`` False) is told without a value. A NaN/inf value is a failure.
        The study finishes (FINISHED) when this was the last round of the budget.

        Returns:
            The round's :class:`~hpoflow.core.records.Record`.

        Raises:
            ValueError: ``trial`` is not the pending one, or neither a value nor ``failed`` was given.
            TypeError: ``value`` is neither a number nor an Evaluation (the trial stays pending).
            ObjectiveError: a failure under ``on_error="fail"`` (the study is then FAILED).
        """
        if self._trial is None or trial is not self._trial:
            raise ValueError(
                f"tell() takes the pending trial (asked last); got trial {getattr(trial, 'number', trial)}"
            )
        s = trial.suggestion
        assert s is not None
        if failed is not None:
            outcome: Evaluation | Failure = Failure(str(failed))
        elif not trial.observe:
            outcome = Evaluation(value=math.nan, cost=0.0) if value is None else as_evaluation(value)
        elif value is None:
            raise ValueError(f"tell(trial {trial.number}, value) needs a value, or failed='...'")
        else:
            outcome = outcome_of(as_evaluation(value), trial.config, True)
        self._trial = None
        record = self._run.loop.tell(s, outcome)
        if self._run.loop.done:
            self.finish()
        return record

    # -- results and ending -------------------------------------------------------------------------
    @property
    def records(self) -> list[Record]:
        return self.result().records

    @property
    def best_config(self) -> dict[str, Any] | None:
        return self.result().best_config

    @property
    def best_value(self) -> float | None:
        return self.result().best_value

    @property
    def run_id(self) -> str | None:
        """The MLflow run, when tracked."""
        return self.result().run_id

    def result(self) -> Result:
        """The study so far (or its final result)."""
        if self._run is None:
            assert self._finished is not None
            return self._finished
        loop = self._run.loop
        out = loop.result()
        return result_of(out.summary, out.records, out.metrics, self._status(), self._run.run_id, self._run.uri)

    def finish(self) -> Result:
        """End the study now as FINISHED (the MLflow run writes its summary); a study already ended stays so."""
        if self._run is not None and self._run.loop.status is None:
            self._run.loop.finish()
            atexit.unregister(self._exit_open)
        return self.result()

    def _status(self) -> RunStatus:
        return RunStatus.FINISHED if self._run is None else (self._run.loop.status or RunStatus.FINISHED)

    def _exit_open(self) -> None:
        if self._run is not None:
            self._run.loop.abort(RunStatus.KILLED, "the process exited before the study finished")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            self.finish()
        elif self._run is not None:
            status = RunStatus.KILLED if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED
            self._run.loop.abort(status, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        if self._run is not None:
            atexit.unregister(self._exit_open)
