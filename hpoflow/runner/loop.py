"""The common loop: budgets, failure policy, regret book-keeping and tracking for every algorithm.

:class:`Loop` is one run, advanced a round at a time (``ask``/``tell`` or ``step``); :func:`run` drives it
over a task, and :class:`hpoflow.Study` lets a training loop the user owns drive it from outside. Either way
every round goes through the same book, tracker and checkpoint, and the tracker is finished in every case.
"""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm, PendingNotSupported
from hpoflow.core.budget import ROUNDS_UNDER_COST, Budget, cost_note, fits
from hpoflow.core.checkpoint import Checkpointer, LoopState, pending_trial
from hpoflow.core.objectives import ParetoBook
from hpoflow.core.records import (
    Evaluation,
    Failure,
    OnError,
    PlainSuggestion,
    Record,
    RegretBook,
    RunStatus,
    Suggestion,
    check_cost,
)
from hpoflow.core.signals import deferred
from hpoflow.core.tracker import NullTracker, Tracker
from hpoflow.runner.restore import ResumeWarning, restore, save
from hpoflow.tasks.base import Task

__all__ = ["Budget", "CostNeverSpent", "Loop", "ObjectiveError", "PendingNotSupported", "ResumeWarning", "RunResult",
           "drive", "evaluate", "outcome_of", "run"]


class ObjectiveError(RuntimeError):
    """The objective raised or returned a non-finite value and the policy is ``on_error=fail``."""


class CostNeverSpent(ObjectiveError):
    """A cost budget that the evaluations do not spend: ``ZERO_COST_ROUNDS`` rounds in a row cost nothing, or (with
    no round limit) the rounds so far cost so little that the rest would need more rounds than the safety limit,
    ``ROUNDS_UNDER_COST``."""


ZERO_COST_ROUNDS = 1000  # rounds in a row that cost nothing, under a cost budget: the budget cannot end


@dataclass
class RunResult:
    """What a finished run returns: the summary, the records and the per-round metrics."""

    status: RunStatus
    summary: dict[str, Any]
    records: list[Record] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)


def outcome_of(ev: Evaluation, config: dict[str, Any], observe: bool) -> Evaluation | Failure:
    """``ev``, or a Failure when its cost is not a finite number >= 0 (charged 0), or an observed value (the value,
    or any objective or constraint in ``values``) is not finite."""
    try:
        check_cost(ev.cost, "the evaluation")
    except ValueError as exc:
        return Failure(f"{exc} (for {config})", cost=0.0)
    if observe and not math.isfinite(ev.value):
        return Failure(f"objective returned a non-finite value ({ev.value}) for {config}", cost=ev.cost)
    if observe:
        bad = {k: v for k, v in ev.values.items() if not _finite(v)}
        if bad:
            return Failure(f"objective returned non-finite values ({', '.join(f'{k}={v}' for k, v in bad.items())}) "
                           f"for {config}", cost=ev.cost)
    return ev


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError, OverflowError):
        return False


def evaluate(task: Task, config: dict[str, Any], round: int, observe: bool, fidelity: float | None = None,
             config_id: int | None = None) -> Evaluation | Failure:
    """The task's evaluation of ``config`` (at ``fidelity``, for ``config_id``, when a multi-fidelity method asks);
    any error of the objective, or a non-finite value, is a :class:`Failure`."""
    try:
        if fidelity is None:
            ev = task.evaluate(config, round=round, observe=observe)
        else:
            ev = task.evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round, observe=observe)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - any objective error becomes a recorded Failure
        cost = getattr(exc, "cost", 0.0)
        try:
            cost = check_cost(cost)
        except ValueError:
            cost = 0.0  # a foreign exception's attribute: never a negative or non-finite charge
        return Failure(f"{type(exc).__name__}: {exc}", cost=cost)
    return outcome_of(ev, config, observe)


def _record(t: int, s: Suggestion, outcome: Evaluation | Failure, decision: float) -> Record:
    metrics = {**s.info, "decision_time": decision}
    if isinstance(outcome, Failure):
        return Record(round=t, config=s.config, value=None, queried=s.observe, cost=outcome.cost,
                      metrics=metrics, failed=True, error=outcome.error, fidelity=s.fidelity, config_id=s.config_id)
    metrics.update(outcome.metrics)
    fidelity = outcome.fidelity if outcome.fidelity is not None else s.fidelity
    return Record(round=t, config=s.config, value=outcome.value if s.observe else None, queried=s.observe,
                  cost=outcome.cost, true_value=outcome.true_value, optimum=outcome.optimum, metrics=metrics,
                  fidelity=fidelity, config_id=s.config_id, curve=[list(p) for p in outcome.curve],
                  values=dict(outcome.values))


def _step_round(algo: Algorithm, t: int) -> Record:
    start = time.perf_counter()
    try:
        record = algo.step(t)
    except (KeyboardInterrupt, SystemExit, MemoryError, ObjectiveError):
        raise
    except Exception as exc:  # noqa: BLE001 - same policy as for ask/tell algorithms
        return Record(round=t, config={}, value=None, failed=True, error=f"{type(exc).__name__}: {exc}")
    record.metrics.setdefault("decision_time", time.perf_counter() - start)
    if record.queried and record.value is not None and not math.isfinite(record.value):
        record.failed, record.error = True, f"objective returned a non-finite value ({record.value})"
    return record


class Loop:
    """One run of the common loop, advanced round by round.

    Every completed round is booked (regret, best value, cost), logged to the tracker, checkpointed (with
    ``checkpoint``), passed to ``on_round`` and, if it failed under ``on_error=fail``, ends the run. Any
    exception inside a method (or inside :meth:`guard`) finishes the tracker first: KILLED for Ctrl-C/SIGTERM,
    FAILED otherwise, with everything logged before it flushed.

    With ``resume`` (a loaded checkpoint), the algorithm, task RNGs, regret book and tracker are restored
    (:func:`hpoflow.runner.restore.restore`) and the loop continues with the next round; the algorithm and task must
    be freshly built from the same config and seed. ``replay(loop, resume)`` restores the algorithm instead (a
    simulated run: :func:`hpoflow.runner.simulated.replay_simulation`). The checkpoint also holds the trials pending
    when it was saved (several workers); a driver puts them back with :meth:`resume_pending` before it asks.
    """

    def __init__(self, task: Task, algorithm: Algorithm, tracker: Tracker | None = None, budget: Budget | None = None,
                 on_error: OnError = OnError.FAIL, on_round: Callable[[Record, dict[str, float]], None] | None = None,
                 checkpoint: Checkpointer | None = None, resume: LoopState | None = None,
                 replay: Callable[[Loop, LoopState], None] | None = None) -> None:
        budget = budget if budget is not None else Budget()
        self.task, self.algorithm, self.budget, self.on_error = task, algorithm, budget, on_error
        self.tracker: Tracker = tracker or NullTracker()
        self.on_round, self.checkpoint = on_round, checkpoint
        self.book = RegretBook(task.direction, task.regret_reference,
                               full_fidelity=None if task.fidelity is None else float(task.fidelity.max),
                               pareto=None if task.objectives is None else ParetoBook(task.objectives))
        self.state = LoopState(plain=checkpoint is not None)
        self.status: RunStatus | None = None  # set once the run has ended
        self._pending: dict[int, tuple[Suggestion, float, int]] = {}  # id -> (suggestion, decision time, trial)
        self._free_rounds = 0  # rounds in a row that cost nothing (under a cost budget: see ZERO_COST_ROUNDS)
        self._committed: dict[int, float] = {}  # id(suggestion) -> the cost a started job is expected to charge
        self._reached: dict[int, float] = {}  # config id -> the highest level told (what a continued trial adds to)
        self._top_cost = 0.0  # the most one evaluation has cost: the prediction where only the evaluation knows
        self.refused: float | None = None  # the expected cost of the job that did not fit the cost budget (run ends)
        self.concurrent = budget.workers > 1  # trials overlap: rounds log ``trial`` and ``pending``
        self.simulation: Any = None  # a resumed simulated run: where it stood (hpoflow.runner.simulated.Simulation)
        elapsed = 0.0
        self._resumed: list[dict[str, Any]] = []  # trials pending at the checkpoint, until resume_pending()
        if resume is not None:
            with self.guard():
                restore(resume, task, algorithm, self.tracker, self.book, _step_round,
                        None if replay is None else partial(replay, self, resume))
            self.state, elapsed = resume, resume.wall_time
            for record in self.state.records:
                self.note_cost(record)
            if replay is None:  # a replay (simulated workers) rebuilds the trials running then itself
                self._resumed = list(resume.pending)
        self.round = self.state.round + 1  # the next round to run
        self._start = time.perf_counter() - elapsed

    @property
    def done(self) -> bool:
        """The run has ended, or its budget (rounds, cost) is spent."""
        return (self.status is not None or self.round > self.budget.rounds
                or (self.budget.cost is not None and self.book.query_cost >= self.budget.cost)
                or (self.refused is not None and not self._pending))

    @property
    def pending(self) -> list[Suggestion]:
        """Suggestions asked and not told yet, in ask order."""
        return [s for s, _, _ in self._pending.values()]

    @property
    def can_ask(self) -> bool:
        """Another trial fits the budget: the rounds completed plus those pending are fewer than ``rounds``, and
        no job has been refused by the cost budget (:meth:`admit`)."""
        return (not self.done and self.refused is None and self.round + len(self._pending) <= self.budget.rounds)

    def job_cost(self, suggestion: Suggestion) -> float | None:
        """What evaluating the pending ``suggestion`` is expected to cost: the task's own figure
        (:meth:`~hpoflow.tasks.base.Task.expected_cost`: a level, or the units a continued trial adds to the level
        its configuration reached), else the most one evaluation has cost so far; None before any is known."""
        if not suggestion.observe:
            return 0.0
        reached = self._reached.get(suggestion.config_id, 0.0) if suggestion.config_id is not None else 0.0
        known = self.task.expected_cost(suggestion.fidelity, reached, suggestion.config_id)
        if known is not None:
            return known
        return self._top_cost if self._top_cost > 0 else None

    def admit(self, suggestion: Suggestion) -> bool:
        """Whether the pending ``suggestion`` may start within the cost budget (no cost budget: always).

        It may when its expected cost (:meth:`job_cost`) fits in what remains: ``budget.cost`` minus the cost spent
        minus the expected cost of the jobs still running. One that does not fit is withdrawn (never evaluated nor
        recorded), no trial is asked after it, and the run ends once the running ones are told; the summary's
        ``cost_note`` says so."""
        if self.budget.cost is None:
            return True
        cost = self.job_cost(suggestion)
        left = self.budget.cost - self.book.query_cost - sum(self._committed.values())
        if (fits(cost, left, self.budget.cost) if cost is not None else left > 0):
            self._committed[id(suggestion)] = cost or 0.0
            return True
        del self._pending[id(suggestion)]
        self.refused = cost if cost is not None else 0.0
        return False

    def ask_fitting(self) -> Suggestion | None:
        """:meth:`ask`, then :meth:`admit`: the suggestion to start, or None when it does not fit the cost budget
        (the run then asks nothing more)."""
        s = self.ask()
        return s if self.admit(s) else None

    def summary(self) -> dict[str, Any]:
        """The book's summary; under a cost budget also ``cost_budget`` and ``cost_note`` (what was spent of it,
        and why the run ended below or beyond it: :func:`hpoflow.core.budget.cost_note`)."""
        out = self.book.summary()
        if self.budget.cost is not None:
            out.update(cost_budget=float(self.budget.cost),
                       cost_note=cost_note(self.budget.cost, self.book.query_cost, self.refused))
        return out

    def note_cost(self, record: Record) -> None:
        """Book what a told round says about costs to come: the level its trial reached, the most a round cost."""
        if record.failed:
            return
        if record.queried:
            self._top_cost = max(self._top_cost, float(record.cost))
        if record.config_id is not None and record.fidelity is not None:
            self._reached[record.config_id] = max(self._reached.get(record.config_id, 0.0), float(record.fidelity))

    def trial_number(self, suggestion: Suggestion) -> int:
        """The pending suggestion's trial number (its ask order, 1-based; the round it was asked for)."""
        return self._pending[id(suggestion)][2]

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Finish the tracker as KILLED (KeyboardInterrupt) or FAILED (any other exception), then re-raise."""
        try:
            yield
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM through hpoflow.core.signals (its str names the signal)
            self.abort(RunStatus.KILLED, str(exc) or "interrupted (KeyboardInterrupt)")
            raise
        except BaseException as exc:
            self.abort(RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
            raise

    def abort(self, status: RunStatus, error: str) -> None:
        """End the run as ``status`` (KILLED or FAILED) with ``error``; a run already ended is left alone."""
        if self.status is None:
            self.status = status
            self._write_deferred()  # the checkpoint as of the last completed round, before the store's last flush
            self.tracker.finish(status, self.summary(), error=error)

    def ask(self) -> Suggestion:
        """The ask/tell algorithm's suggestion for the next trial (evaluate it, then :meth:`tell`).

        Trials still pending are passed to the algorithm (:meth:`AskTellAlgorithm.ask_pending`), so the new
        suggestion accounts for them; the trial number is the ask order (``trial_number``).

        Raises:
            PendingNotSupported: trials are pending and the algorithm refuses that (the run goes on).
        """
        assert isinstance(self.algorithm, AskTellAlgorithm), "step algorithms run through step()"
        pending = self.pending
        if pending and self.algorithm.pending_rule is None:
            self.algorithm.ask_pending(self.round, pending)  # raises its one-line refusal; nothing is recorded
        with self.guard():
            t = self.round + len(pending)
            start = time.perf_counter()
            s = self.algorithm.ask_pending(t, pending)
            self._pending[id(s)] = (s, time.perf_counter() - start, t)
            self.concurrent = self.concurrent or bool(pending)
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure, *, abandoned: bool = False) -> Record:
        """Complete a pending ``suggestion`` (in any order) with its outcome: the next round is recorded.

        ``abandoned``: the trial is given up (a Failure) and does not end the run under ``on_error=fail``.

        Raises:
            ValueError: ``suggestion`` is not pending.
            ObjectiveError: the outcome is a Failure and ``on_error`` is ``fail`` (the run is then FAILED).
        """
        entry = self._pending.get(id(suggestion))
        if entry is None or entry[0] is not suggestion:
            raise ValueError(f"round {self.round}: tell() takes a suggestion asked and not told yet")
        with self.guard():
            start = time.perf_counter()
            self.algorithm.tell(suggestion, outcome)  # type: ignore[attr-defined]
            del self._pending[id(suggestion)]
            self._committed.pop(id(suggestion), None)
            record = _record(self.round, suggestion, outcome, entry[1] + time.perf_counter() - start)
            if self.concurrent:
                record.metrics.update(trial=float(entry[2]), pending=float(len(self._pending)))
            return self._complete(record, suggestion, outcome, abandoned)

    def adopt_pending(self, trials: list[tuple[Suggestion, int, float | None]]) -> None:
        """Take ``(suggestion, trial number, expected cost or None)``, asked of the algorithm outside :meth:`ask`
        (a resume that rebuilt them), as pending trials admitted with that cost; :meth:`tell` completes them."""
        for s, t, cost in trials:
            self._pending[id(s)] = (s, 0.0, t)
            if cost is not None:
                self._committed[id(s)] = cost

    def resume_pending(self) -> list[Suggestion]:
        """Put back the trials that were asked and not told when the resumed checkpoint was saved (a run with
        workers), in ask order: each is rebuilt (same trial number, configuration, point, fidelity and config id)
        and handed to the algorithm's :meth:`~hpoflow.algorithms.base.AskTellAlgorithm.adopt`; those it takes back
        become pending again, admitted with their saved cost, and are returned for the driver to evaluate (once
        each: a trial told before the checkpoint is in its records, never here). A trial the algorithm cannot take
        back is dropped: the run asks anew in its place. Call it once, before the first :meth:`ask`."""
        saved, self._resumed = self._resumed, []
        if not saved or not isinstance(self.algorithm, AskTellAlgorithm):
            return []
        told = {int(m.get("trial", r.round)) for r, m in zip(self.state.records, self.state.metrics)}
        out = []
        with self.guard():
            for p in sorted(saved, key=lambda p: p["trial"]):
                if p["trial"] in told:
                    continue  # told already (a checkpoint never says so; a guard against a hand-made one)
                rebuilt = PlainSuggestion(dict(p["config"]), p["x"], p["observe"], dict(p["info"]),
                                          fidelity=p["fidelity"], config_id=p["config_id"])
                s = self.algorithm.adopt(rebuilt)
                if s is None:
                    continue
                self.adopt_pending([(s, p["trial"], p["cost"])])
                self.concurrent = True
                out.append(s)
        return out

    def abandon_pending(self, reason: str) -> list[Record]:
        """Record every pending trial as failed (``abandoned: reason``), in ask order; the run stays consistent."""
        return [self.tell(s, Failure(f"abandoned: {reason}"), abandoned=True) for s in self.pending]

    def step(self) -> Record:
        """Run the next round of a ``step`` algorithm (gradient methods)."""
        with self.guard():
            return self._complete(_step_round(self.algorithm, self.round))

    def _complete(self, record: Record, s: Suggestion | None = None,
                  outcome: Evaluation | Failure | None = None, abandoned: bool = False) -> Record:
        with deferred():  # SIGTERM waits until the round is both logged and checkpointed: the two agree
            metrics = self.book.add(record)
            metrics["wall_time"] = time.perf_counter() - self._start
            self.tracker.log(record, metrics)
            self.state.add(record, metrics, None if s is None else s.point(), outcome)
            self.note_cost(record)
            if self.checkpoint is not None and self.checkpoint.due(record.round):
                self._save(metrics["wall_time"])
            self.round = record.round + 1
        if self.on_round is not None:
            self.on_round(record, metrics)
        if record.failed and self.on_error is OnError.FAIL and not abandoned:
            raise ObjectiveError(f"round {record.round}: {record.error}")
        self._free_rounds = self._free_rounds + 1 if record.cost == 0 else 0
        if self.budget.cost is not None and self._free_rounds >= ZERO_COST_ROUNDS:
            raise CostNeverSpent(f"budget.cost={self.budget.cost:g} cannot be spent: the last {ZERO_COST_ROUNDS} "
                                 f"rounds cost nothing (spent {self.book.query_cost:g}); give the evaluations a "
                                 "cost > 0, or a round budget instead")
        if self.budget.round_limit is None and record.round == ZERO_COST_ROUNDS and self.book.query_cost > 0:
            self._check_reachable(record.round)
        return record

    def _check_reachable(self, rounds: int) -> None:
        """Under a cost budget with no round limit: refuse, after ``rounds`` rounds, a budget whose rest would need
        more rounds than ``ROUNDS_UNDER_COST`` at the cost a round has had so far (``cost=1e308``: never spent)."""
        assert self.budget.cost is not None
        per_round = self.book.query_cost / rounds
        needed = (self.budget.cost - self.book.query_cost) / per_round
        if needed > ROUNDS_UNDER_COST - rounds:
            raise CostNeverSpent(f"budget.cost={self.budget.cost:g} cannot be spent within the "
                                 f"{ROUNDS_UNDER_COST:,}-round limit: {rounds} rounds cost {self.book.query_cost:g} "
                                 f"({per_round:g} a round), the rest needs about {needed:.3g} more rounds; give a "
                                 f"round budget, or a cost of at most {per_round * ROUNDS_UNDER_COST:g}")

    def _save(self, wall_time: float, status: str = "RUNNING", now: bool = False) -> None:
        """Save the checkpoint, after the tracker's fence: a writer that lost its run writes no file either.

        A save may be deferred (``Checkpointer.defer_s``): its text is kept until the store is written next."""
        assert self.checkpoint is not None
        fence = getattr(self.tracker, "fence", None)
        if status != "FINISHED" and callable(fence):
            fence()  # raises (LeaseLost, StoreLost) if another process took the run over, or the store is gone
        pending = [pending_trial(t, s.config, s.point(), s.observe, s.info, s.fidelity, s.config_id,
                                 self._committed.get(id(s))) for s, _, t in self._pending.values()]
        save(self.checkpoint, self.state, self.book, self.algorithm, self.task, wall_time, status=status, now=now,
             pending=pending)

    def _write_pending(self) -> None:
        """Write a deferred checkpoint save, after the tracker's fence (a run that lost its lease writes nothing)."""
        assert self.checkpoint is not None
        fence = getattr(self.tracker, "fence", None)
        if callable(fence):
            fence()
        self.checkpoint.write_pending()

    def _write_deferred(self) -> None:
        """Write a deferred checkpoint save before the run ends with an error (a failing write is left to the
        exception already on its way)."""
        if self.checkpoint is None or not self.checkpoint.pending:
            return
        try:
            self._write_pending()
        except Exception:  # noqa: BLE001 - the run is ending with an error already; the last written file stays
            pass

    def finish(self) -> RunResult:
        """End the run as FINISHED: the tracker writes the summary, the checkpoint says FINISHED.

        The checkpoint is marked FINISHED only after the tracker's ``finish`` returned, i.e. after the store
        holds every round and says FINISHED; if the tracker raises (the store was lost in the last flush
        interval, the run was taken over), the checkpoint keeps every round as RUNNING, so the run can be
        resumed, and the exception propagates (the CLI exits non-zero).
        """
        summary = self.summary()
        if self.checkpoint is not None and self.state.records:
            with self.guard():  # the last rounds, not yet saved or written: resumable whatever happens to the store now
                if not self.checkpoint.due(self.state.round):
                    self._save(time.perf_counter() - self._start, now=True)
                elif self.checkpoint.pending:
                    self._write_pending()
        try:
            self.tracker.finish(RunStatus.FINISHED, summary)
        except BaseException:
            self.status = RunStatus.FAILED  # the tracker wrote nothing more (see MlflowTracker.finish)
            raise
        self.status = RunStatus.FINISHED
        if self.checkpoint is not None:
            self._save(time.perf_counter() - self._start, status="FINISHED")
        return self.result()

    def result(self) -> RunResult:
        """The run so far: its status (FINISHED while still running), summary, records and metrics."""
        return RunResult(self.status or RunStatus.FINISHED, self.summary(), self.state.records,
                         self.state.metrics)


def drive(loop: Loop) -> RunResult:
    """Run ``loop`` on its own task until the budget is spent, then finish it.

    One trial at a time; :func:`hpoflow.runner.workers.drive_parallel` runs ``budget.workers`` at once.

    Raises:
        ObjectiveError: an evaluation failed and ``on_error`` is ``fail``.
    """
    with loop.guard():
        loop.resume_pending()  # a run saved with trials pending (workers): evaluated first
        for r in loop.pending:
            loop.tell(r, evaluate(loop.task, r.config, loop.trial_number(r), r.observe, r.fidelity, r.config_id))
        while not loop.done:
            if isinstance(loop.algorithm, AskTellAlgorithm):
                s = loop.ask_fitting()
                if s is None:
                    break
                loop.tell(s, evaluate(loop.task, s.config, loop.round, s.observe, s.fidelity, s.config_id))
            else:
                loop.step()
    return loop.finish()


def run(task: Task, algorithm: Algorithm, tracker: Tracker | None = None, budget: Budget | None = None,
        on_error: OnError = OnError.FAIL, on_round: Callable[[Record, dict[str, float]], None] | None = None,
        checkpoint: Checkpointer | None = None, resume: LoopState | None = None) -> RunResult:
    """Run ``algorithm`` on ``task`` until the budget is spent; every round is recorded and tracked.

    The tracker is finished in every case: FINISHED, FAILED (exception, with the error as a tag) or
    KILLED (Ctrl-C); everything logged before the failure is flushed first. ``checkpoint``: save the loop
    state after every completed round (see ``hpoflow.core.checkpoint``); ``resume``: continue from a loaded
    checkpoint (see ``Loop``).

    Raises:
        ObjectiveError: an evaluation failed and ``on_error`` is ``fail``.
    """
    return drive(Loop(task, algorithm, tracker, budget, on_error, on_round, checkpoint, resume))
