"""Ask/tell for a training loop the caller owns: ``trial = study.ask()``, train, ``study.tell(trial, value)``.

A ``Study`` is one run of the common loop (``hpoflow.runner.loop.Loop``) advanced from outside: the same
regret book, MLflow records (run lease, statuses), checkpoints and resume as a CLI run. Several trials may be
pending at once (8 GPUs, a cluster): ``ask()`` again before telling, tell in any order.
"""
from __future__ import annotations

import atexit
import dataclasses
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hpoflow.algorithms.base import AskTellAlgorithm
from hpoflow.algorithms.schedulers import RungStopper
from hpoflow.api import Result, budget_rounds, function_task, open_library_run, result_of
from hpoflow.config.compose import library_settings
from hpoflow.config.library import check_arguments
from hpoflow.config.settings import ConfigError
from hpoflow.core.fidelity import rung_levels
from hpoflow.core.records import Direction, Evaluation, Failure, Record, RunStatus, Suggestion, as_evaluation
from hpoflow.core.space import SearchSpace
from hpoflow.runner.loop import outcome_of
from hpoflow.tasks.function import FunctionTask

if TYPE_CHECKING:  # typing.Self is Python 3.11+; we support 3.10
    from typing_extensions import Self


class StudyClosed(RuntimeError):
    """The study has ended (budget spent, finished, or failed): nothing more can be asked or told."""


@dataclass(frozen=True)
class Trial:
    """One suggestion: evaluate ``config`` (unless ``observe`` is False), then ``Study.tell`` it.

    In a study with a fidelity: train to ``fidelity`` (a multi-fidelity algorithm's level; the full one
    otherwise), and while training ``report(step, value)`` each step and stop once ``should_stop()`` says so
    (the study's pruner: ASHA's rule at the rung levels). ``config_id`` is the configuration's id across a
    multi-fidelity algorithm's promotions. ``state`` is what ``Study.tell(..., state=...)`` stored for that
    configuration at a lower level (None if nothing): continue it from ``start``, the level it reached, and the
    trial is charged only the steps above it.
    """

    number: int                # the trial's ask order, 1-based (its round when trials are told in ask order)
    config: dict[str, Any]
    observe: bool = True       # False: a costly-feedback rule chose not to pay for this round; tell it no value
    suggestion: Suggestion | None = field(default=None, repr=False, compare=False)
    fidelity: float | None = None  # the level to train to (a study with a fidelity)
    config_id: int | None = None   # the configuration across promotions (multi-fidelity algorithms)
    reports: list[list[float]] = field(default_factory=list, repr=False, compare=False)  # [[step, value], ...]
    stopper: Any = field(default=None, repr=False, compare=False)  # the study's pruner (RungStopper) or None
    direction_sign: float = field(default=-1.0, repr=False, compare=False)
    integer: bool = field(default=False, repr=False, compare=False)  # the fidelity's steps are whole numbers
    start: float = field(default=0.0, repr=False, compare=False)  # the level config_id reached in earlier trials
    state: Any = field(default=None, repr=False, compare=False)  # what tell(state=...) stored for config_id

    def report(self, step: float, value: float) -> None:
        """An intermediate value at ``step`` (an epoch, a boosting round): the trial's learning curve.

        ``step`` is in ``(0, fidelity]`` (a whole number for an integer fidelity) and increases; a non-finite
        ``value`` stops the trial (``should_stop()`` turns True).

        Raises:
            ValueError: the study has no fidelity, the trial was told already, ``step`` is out of that range or
                does not increase, or ``value`` is not a number.
        """
        if self.fidelity is None:
            raise ValueError("report(step, value) needs a study with a fidelity: Study(..., fidelity=(name, min, max))")
        if self.__dict__.get("_told", False):
            raise ValueError(f"report(): trial {self.number} was told already; ask a new trial")
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
            raise ValueError(f"report(step={step!r}): the step must be a finite number")
        if not 0 < step <= self.fidelity:
            raise ValueError(f"report(step={step!r}): the step must be in (0, {self.fidelity:g}], the level this "
                             "trial was asked to train to (trial.fidelity)")
        if self.integer and float(step) != int(step):
            raise ValueError(f"report(step={step!r}): the fidelity counts whole steps; report an integer step")
        if self.reports and step <= self.reports[-1][0]:
            raise ValueError(f"report(step={step!r}): steps must increase (the last was {self.reports[-1][0]})")
        v = as_evaluation(value).value
        self.reports.append([float(step), v])
        if not math.isfinite(v):
            object.__setattr__(self, "_stop", True)  # a diverged trial: nothing more to learn from it
        elif self.stopper is not None and not self.__dict__.get("_stop", False):
            reward = self.direction_sign * v
            object.__setattr__(self, "_stop", self.stopper.report(self.number, float(step), reward))

    def should_stop(self) -> bool:
        """The pruner's verdict after the last ``report``: stop training this trial and ``tell`` it."""
        return bool(self.__dict__.get("_stop", False))


class Study:
    """Ask/tell over any registered ask/tell algorithm, tracked and resumable like a CLI run.

    Example (the study *minimises* what it is told unless ``direction="maximize"``: say so for accuracies)::

        with Study({"lr": ("log", 1e-4, 1e-1)}, rounds=20, direction="maximize",
                   tracking="sqlite:///runs.db") as s:
            while not s.done:
                trial = s.ask()
                s.tell(trial, accuracy(trial.config))   # or s.tell(trial, failed="diverged")

    Pending trials: ``ask()`` may be called again before the earlier trials are told (each new configuration
    accounts for the pending ones, by the algorithm's ``pending_rule``); ``tell`` them in any order. A round is
    recorded per told trial, in the order they are told. Trials still pending when the study finishes are
    recorded as failed ("abandoned"). Algorithms without a rule for pending points (GO-UCB, the bandits)
    refuse a second ``ask()`` in one line.

    Args:
        space: a ``SearchSpace`` or a dict spec (see ``hpoflow.minimize``).
        algo: a registered ask/tell algorithm at its ``conf/algo`` defaults; ``**settings`` override them. ``auto``
            (the default, as in ``hpoflow.minimize``) picks one by the space and the budget
            (``result().summary["auto.choice"]`` says which); where it picks ``cobyqa`` (a continuous space, 40 to
            20 x d rounds), a second ``ask()`` before a tell is refused in one line naming ``algo=turbo``.
        rounds: the budget: the study ends (FINISHED) after this many tells (default 30; with ``cost``, no limit
            but the cost).
        fidelity: ``(name, min, max)``: trials are trained to ``trial.fidelity`` (a multi-fidelity algorithm such as
            ``hyperband`` or ``asha`` chooses it; otherwise the full level) and may ``report(step, value)`` and stop
            at ``should_stop()``; a told trial costs the steps it reached (its last report).
        cost: the budget in cost units (fidelity units with ``fidelity``): no trial is asked once it is spent. A
            trial's cost is known only when it is told (the steps it reached), so the trials told last can take the
            study beyond it, unlike ``minimize`` and the CLI, which start a job only if it fits.
        prune: ``asha`` (the default with a fidelity, unless the algorithm chooses fidelities itself): at each rung
            level (min * 3^k) a reporting trial goes on only while it is in the top third of the rung; ``none``.
        seed: seeds the algorithm and Python's, NumPy's and torch's global RNGs.
        tracking: None, an MLflow store URI, or tracking settings (see ``hpoflow.minimize``).
        checkpoint: a file for the study's state after every tell. A new Study with the same arguments and an
            existing checkpoint continues it (its MLflow run too); a trial asked but not told is asked again.
        direction: ``minimize`` (the default) or ``maximize`` (accuracies, rewards): which way ``best_value`` goes.
        name: the task's name (tags, default MLflow experiment).
        on_error: ``skip`` (default): a failed trial is recorded and the study goes on; ``fail``: it ends the
            study as FAILED (``tell`` raises ObjectiveError).
        objectives: several objectives, as for ``hpoflow.minimize``; ``tell`` then takes a dict of named values
            (a missing objective or constraint: ValueError, the trial stays pending).
        constraints: bounds on told values, as for ``hpoflow.minimize``.
        reference: the hypervolume reference point, as for ``hpoflow.minimize``.

    Leaving a ``with`` block normally finishes the study (FINISHED, even before its budget is spent); an
    exception leaves it FAILED (KILLED for Ctrl-C). A process that exits with the study open leaves it KILLED,
    resumable from its checkpoint.

    Raises:
        ConfigError: bad algorithm, setting or store; an algorithm without ask/tell; a checkpoint of other settings.
        SpaceError: a bad space spec.
    """

    def __init__(self, space: SearchSpace | dict[str, Any], algo: str = "auto", rounds: int | None = None,
                 seed: int = 0, tracking: str | dict[str, Any] | None = None, *, checkpoint: str | Path | None = None,
                 direction: str = "minimize", name: str | None = None, optimum: float | None = None,
                 surrogate: str | dict[str, Any] | None = None, on_error: str = "skip", hardware: str = "auto",
                 fidelity: Any = None, cost: float | None = None, prune: str | None = None,
                 objectives: dict[str, str] | None = None, constraints: dict[str, Any] | None = None,
                 reference: Any = None, **settings: Any) -> None:
        try:
            goal = Direction(direction)
        except ValueError:
            raise ConfigError(f"direction={direction!r} is unknown; allowed: minimize, maximize") from None
        check_arguments(name=name)
        task = function_task(None, space, goal, name or "study", optimum, fidelity,
                             (objectives, constraints, reference))
        self._objectives = task.objectives
        s = library_settings(algo, task.description(), seed=seed, rounds=budget_rounds(rounds, cost),
                             tracking=tracking, surrogate=surrogate, hardware=hardware, on_error=on_error,
                             algo_settings=settings, cost=cost)
        self._pruner(prune, task, algo)  # a bad prune= is refused before the run is opened
        self._run, self._finished = open_library_run(s, task, checkpoint)
        # the stopping rule of the algorithm that runs: what algo=auto picked (mf_gp chooses fidelities itself)
        chosen = getattr(getattr(self._run.loop.algorithm, "choice", None), "algo", algo) if self._run else algo
        self._stopper = self._pruner(prune, task, chosen)
        self._trials: dict[int, Trial] = {}  # pending: number -> Trial
        self._reached: dict[int, float] = {}  # config id -> the level its told trials reached (what a report continues)
        for record in self._run.loop.state.records if self._run is not None else ():
            if record.config_id is not None and record.fidelity is not None and not record.failed:
                self._reached[record.config_id] = max(self._reached.get(record.config_id, 0.0), record.fidelity)
        if self._stopper is not None and self._run is not None:  # a resumed study: the rungs of its told trials
            for record in self._run.loop.state.records:
                for step, value in record.curve:
                    if record.config_id is not None:
                        self._stopper.report(record.config_id, step, goal.sign * value)
        if self._run is not None:
            if not isinstance(self._run.loop.algorithm, AskTellAlgorithm):
                self._run.loop.abort(RunStatus.FAILED, f"algo={algo} has no ask/tell")
                raise ConfigError(f"algo={algo} is a gradient method that runs its own task (step); a Study needs "
                                  "an ask/tell algorithm")
            atexit.register(self._exit_open)

    @staticmethod
    def _pruner(prune: str | None, task: FunctionTask, algo: str) -> RungStopper | None:
        """The stopping rule ``should_stop`` applies: ``asha`` (the default with a fidelity and an algorithm that
        does not choose fidelities itself) or ``none``."""
        from hpoflow.algorithms.multi_fidelity_config import SCHEDULERS

        if prune not in (None, "asha", "none"):
            raise ConfigError(f"prune={prune!r} is unknown; allowed: asha, none")
        multi_fidelity_algo = algo in (*SCHEDULERS, "mf_gp", "freeze_thaw")  # they choose the levels themselves
        if task.fidelity is None:
            if prune == "asha":
                raise ConfigError("prune='asha' needs a study with a fidelity: fidelity=(name, min, max)")
            return None
        if prune == "none" or (prune is None and multi_fidelity_algo):
            return None
        return RungStopper(rung_levels(task.fidelity, 3.0), 3.0)

    # -- ask / tell ---------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The study has ended: its budget is spent, or it was finished or failed."""
        return self._run is None or self._run.loop.done

    @property
    def can_ask(self) -> bool:
        """Another trial fits the budget: the rounds told plus the trials pending are fewer than ``rounds``."""
        return self._run is not None and self._run.loop.can_ask

    @property
    def pending(self) -> list[Trial]:
        """Trials asked and not told yet, in ask order."""
        return list(self._trials.values())

    def ask(self) -> Trial:
        """The next trial to evaluate (trials asked earlier may still be pending).

        Raises:
            StudyClosed: the study has ended.
            RuntimeError: every round of the budget is already asked (tell the pending trials).
            PendingNotSupported: trials are pending and the algorithm cannot account for them (one line).
        """
        if self.done:
            raise StudyClosed(f"the study has ended ({self._status().value}); nothing more to ask")
        loop = self._run.loop
        if not loop.can_ask:
            numbers = ", ".join(str(t.number) for t in self._trials.values())
            raise RuntimeError(f"every round of the budget is asked: tell the pending trials ({numbers}) first "
                               "(tell(trial, failed='...') if one could not be evaluated)")
        s = loop.ask()
        number = loop.trial_number(s)
        fidelity = loop.task.fidelity
        level = None if fidelity is None else (s.fidelity if s.fidelity is not None else fidelity.max)
        if fidelity is not None and s.config_id is None:  # a full-fidelity algorithm: the trial is its own id
            s.config_id = number
        start = self._reached.get(s.config_id, 0.0) if s.config_id is not None else 0.0
        state = None
        task = loop.task
        if level is not None and isinstance(task, FunctionTask) and task.pausable and s.config_id is not None:
            kept_level, state = task.kept(s.config_id, level)
            start = kept_level if state is not None else start
        trial = Trial(number, dict(s.config), s.observe, s, level, s.config_id, stopper=self._stopper,
                      direction_sign=loop.task.direction.sign, integer=bool(fidelity is not None and fidelity.integer),
                      start=start, state=state)
        self._trials[trial.number] = trial
        return trial

    def tell(self, trial: Trial, value: float | Evaluation | None = None, *, failed: str | None = None,
             state: Any = None) -> Record:
        """Report the outcome of a pending ``trial`` (any order): its value, or ``failed="why"``.

        ``state`` (a study with a fidelity): what to continue this configuration from when it is promoted (a model,
        an optimiser, a path); the next trial of the same ``config_id`` gets it as ``trial.state``. It is kept
        bounded, beside the checkpoint (pickled) when the study has one; one pickle cannot write is kept in this
        process only.

        A value is a float, an int, a NumPy scalar, a 0-d or 1-element array or tensor, or an Evaluation.

        An unobserved trial (``trial.observe`` False) is told without a value. A NaN/inf value is a failure.
        The study finishes (FINISHED) when this was the last round of the budget.

        Returns:
            The round's ``Record``.

        Raises:
            ValueError: ``trial`` is not pending, or neither a value nor ``failed`` was given, or (with objectives) an
                objective or constraint is missing from the values.
            TypeError: ``value`` is neither a number nor an Evaluation (the trial stays pending); with objectives, a
                value that is neither a dict nor an Evaluation.
            ObjectiveError: a failure under ``on_error="fail"`` (the study is then FAILED).
        """
        number = getattr(trial, "number", None)
        if not isinstance(number, int) or self._trials.get(number) is not trial:
            pending = ", ".join(str(n) for n in self._trials) or "none"
            raise ValueError(f"tell() takes a pending trial (pending: {pending}); got trial "
                             f"{getattr(trial, 'number', trial)}")
        s = trial.suggestion
        assert s is not None
        if failed is not None:
            outcome: Evaluation | Failure = Failure(str(failed))
        elif not trial.observe:
            outcome = Evaluation(value=math.nan, cost=0.0) if value is None else as_evaluation(value)
        elif value is None and not trial.reports:
            raise ValueError(f"tell(trial {trial.number}, value) needs a value, or failed='...'")
        else:
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max:
                value = math.inf if value > 0 else -math.inf  # beyond a float (10**400): a non-finite value, a failure
            if self._objectives is not None and value is not None:  # a dict of named values: value = first objective
                value = self._objectives.evaluation(value)
            outcome = outcome_of(self._evaluation(trial, value), trial.config, True)
        del self._trials[trial.number]
        object.__setattr__(trial, "_told", True)  # a later report() is an error
        record = self._run.loop.tell(s, outcome)
        if trial.config_id is not None and record.fidelity is not None and not record.failed:
            self._reached[trial.config_id] = max(self._reached.get(trial.config_id, 0.0), record.fidelity)
            task = self._run.loop.task
            if state is not None and isinstance(task, FunctionTask) and task.pausable:
                task.keep(trial.config_id, record.fidelity, record.round, state, None)
        if self._run.loop.done:
            self.finish()
        return record

    @staticmethod
    def _evaluation(trial: Trial, value: Any) -> Evaluation:
        """What ``tell`` records: the value (default: the last reported one); with reports, the learning curve,
        the level reached as the fidelity, and the steps trained as the cost (unless an Evaluation says its own):
        a trial whose reports continue the level its configuration reached before (every step above it) is charged
        the steps above it, otherwise the level reached; a trial handed a ``state`` and told without reports is
        charged the steps above the state's level."""
        if not trial.reports:
            ev = as_evaluation(value)
            if trial.fidelity is not None and not isinstance(value, Evaluation):
                start = trial.start if trial.state is not None else 0.0  # continued from its state: the steps added
                ev = dataclasses.replace(ev, fidelity=trial.fidelity, cost=float(trial.fidelity - start),
                                         curve=[[float(trial.fidelity), ev.value]])
            return ev
        ev = as_evaluation(trial.reports[-1][1] if value is None else value)
        reached = trial.reports[-1][0]
        if isinstance(value, Evaluation):
            return dataclasses.replace(ev, fidelity=ev.fidelity if ev.fidelity is not None else reached,
                                       curve=ev.curve or [list(p) for p in trial.reports])
        trained = reached - trial.start if trial.reports[0][0] > trial.start else reached
        return dataclasses.replace(ev, fidelity=reached, cost=trained, curve=[list(p) for p in trial.reports])

    # -- results and ending -------------------------------------------------------------------------
    @property
    def records(self) -> list[Record]:
        return self.result().records

    @property
    def best_config(self) -> dict[str, Any] | None:
        """The incumbent so far (``Result.best_config``): with a fidelity, the best trial told at its maximum
        (None until one is)."""
        return self.result().best_config

    @property
    def best_value(self) -> float | None:
        """The incumbent's value (``Result.best_value``); None until a trial is told (with a fidelity: at its
        maximum)."""
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
        from hpoflow.runner.build import algorithm_tags

        loop = self._run.loop
        out = loop.result()
        summary = {**out.summary, **algorithm_tags(loop.algorithm)}  # algo=auto: what it picked, as minimize says
        return result_of(summary, out.records, out.metrics, self._status(), self._run.run_id, self._run.uri,
                         self._objectives)

    def finish(self) -> Result:
        """End the study now as FINISHED (the MLflow run writes its summary); a study already ended stays so.

        Trials still pending are recorded first, as failed rounds (``abandoned: ...``), in ask order.
        """
        if self._run is not None and self._run.loop.status is None:
            if self._trials:
                self._trials.clear()
                self._run.loop.abandon_pending("never told before the study finished")
            self._run.loop.finish()
            atexit.unregister(self._exit_open)
        return self.result()

    close = finish

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
