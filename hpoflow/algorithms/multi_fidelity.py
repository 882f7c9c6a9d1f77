"""Multi-fidelity methods as one ask/tell algorithm: a scheduler (SHA, Hyperband, ASHA) joined with a searcher
(random, or BOHB's rule with our GP). See :mod:`hpoflow.algorithms.schedulers` and
:mod:`hpoflow.algorithms.searchers` for the two protocols.

Each suggestion carries the ``fidelity`` level and the ``config_id`` it belongs to: the loop evaluates it with
``Task.evaluate_at``, so a task that keeps its trials' state continues a promoted configuration instead of training
it again. Rewards are ``sign * value`` (larger is better): the same rule ranks a maximised accuracy and a minimised
loss. Resume is exact through ``state_dict`` (plain JSON); the jobs running at the checkpoint (saved by the loop) are
taken back by :meth:`MultiFidelity.adopt` where the scheduler can (``Scheduler.adopt``), else asked anew.
"""
from __future__ import annotations

from typing import Any, ClassVar

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.schedulers import ASHA, Job, Scheduler, StoppingASHA, SyncHyperband, WarmHyperband
from hpoflow.algorithms.searchers import GPSearcher, RandomSearcher, Searcher
from hpoflow.core.fidelity import rung_levels
from hpoflow.core.records import Evaluation, Failure, PlainSuggestion, Suggestion
from hpoflow.surrogates.base import StandardizedSurrogate


def make_scheduler(config: MultiFidelityConfig, levels: list[float]) -> Scheduler:
    """The scheduler ``config.scheduler`` names over rung ``levels``."""
    if config.scheduler == "asha":
        return ASHA(levels, config.eta)
    if config.scheduler == "asha_stopping":
        return StoppingASHA(levels, config.eta)
    if config.scheduler == "warm_hyperband":
        return WarmHyperband(levels, config.eta)
    s_max = len(levels) - 1
    brackets = [s_max] if config.scheduler == "sha" else list(range(s_max, -1, -1))
    return SyncHyperband(levels, config.eta, brackets)


class MultiFidelity(AskTellAlgorithm):
    """``algo=sha|hyperband|asha|mf_gp``: rungs at ``min * eta^k`` up to the task's full fidelity."""

    name = "hyperband"
    pending_rule: ClassVar[str | None] = "scheduler"  # running jobs are the scheduler's book: k workers never wait

    def __init__(self, config: MultiFidelityConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        fidelity = ctx.task.fidelity
        if fidelity is None:
            raise ValueError(f"algo={config.name} needs a task with a fidelity (epochs, boosting rounds, ...); "
                             f"task '{ctx.task.name}' declares none: pick e.g. task=branin_mf, or a full-fidelity "
                             "algorithm")
        self.config, self.name = config, config.name
        if config.min_fidelity is not None and not fidelity.min <= config.min_fidelity <= fidelity.max:
            raise ValueError(f"algo.min_fidelity={config.min_fidelity} is outside the task's fidelity "
                             f"{fidelity.name} in [{fidelity.min}, {fidelity.max}]")
        self.levels = rung_levels(fidelity, config.eta, config.min_fidelity)
        self.scheduler = make_scheduler(config, self.levels)
        dim, seed = ctx.task.space.dim, ctx.generator_seed(29)
        candidates = None if ctx.task.candidates is None else ctx.task.candidates.double().tolist()  # m x d
        self.searcher: Searcher
        if config.searcher == "gp":
            self.model_protocol_check(ctx)
            self.searcher = GPSearcher(dim, seed, lambda: self.new_surrogate(ctx, config.name), self._maximize,
                                       config.min_points, config.random_fraction, candidates)
        else:
            self.searcher = RandomSearcher(dim, seed, candidates)
        self.ctx = ctx
        self.points: dict[int, list[float]] = {}  # config id -> its point in [0, 1]^d
        self.jobs: dict[int, Job] = {}  # id(suggestion) -> the job it runs
        self.next_id = 0

    def model_protocol_check(self, ctx: BuildContext) -> None:
        """searcher=gp needs a surrogate with standardised outputs (the run's ``surrogate=``, gp by default)."""
        self.surrogate_protocol = StandardizedSurrogate
        self.new_surrogate(ctx, self.config.name)

    def _maximize(self, acq: Any, generator: Any, best: Any) -> Any:
        from hpoflow.acquisition import functions as acq_functions

        x, _ = acq_functions.maximize(acq, self.task.space.dim, generator, self.config.optimizer,
                                      self.task.candidates, extra_starts=best)
        return x, None

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def ask(self, round: int) -> Suggestion:
        job = self.scheduler.next_job(self._new_id)
        if job.new:
            self.points[job.config_id] = job.point if job.point is not None else self.searcher.propose(job.uniform)
        u = self.points[job.config_id]
        info = {"rung": float(job.rung), "bracket": float(job.bracket)}
        model_rung = getattr(self.searcher, "last_rung", None)
        if job.new and isinstance(self.searcher, GPSearcher):
            info["model_rung"] = -1.0 if model_rung is None else float(model_rung)
        s = PlainSuggestion(self.task.space.decode(u), u, info=info, fidelity=job.level, config_id=job.config_id)
        self.jobs[id(s)] = job
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        job = self.jobs.pop(id(suggestion), None)
        if job is None:
            raise ValueError("tell() takes a suggestion this algorithm asked and was not told yet")
        reward = None if isinstance(outcome, Failure) else self.task.direction.sign * outcome.value
        self.scheduler.report(job, reward)
        self.searcher.observe(self.points[job.config_id], job.rung, reward)

    def adopt(self, suggestion: Suggestion) -> Suggestion | None:
        """The job ``suggestion`` ran when the checkpoint was saved, running again: the scheduler marks it so
        (``adopt``; a scheduler without it, or that refuses, gives None: the resumed run asks anew)."""
        i, rung = suggestion.config_id, int(suggestion.info.get("rung", -1))
        adopt = getattr(self.scheduler, "adopt", None)
        if i is None or i not in self.points or suggestion.fidelity is None or not 0 <= rung < len(self.levels):
            return None
        job = Job(i, rung, suggestion.fidelity, int(suggestion.info.get("bracket", 0)), point=list(self.points[i]))
        if not callable(adopt) or not adopt(job):
            return None
        s = PlainSuggestion(suggestion.config, self.points[i], suggestion.observe, dict(suggestion.info),
                            fidelity=suggestion.fidelity, config_id=i)
        self.jobs[id(s)] = job
        return s

    def state_dict(self) -> dict[str, Any]:
        return {"scheduler": self.scheduler.state_dict(), "searcher": self.searcher.state_dict(),
                "points": [[i, u] for i, u in self.points.items()], "next_id": self.next_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scheduler.load_state_dict(state["scheduler"])
        self.searcher.load_state_dict(state["searcher"])
        self.points = {int(i): list(u) for i, u in state["points"]}
        self.next_id = int(state["next_id"])


class MultiFidelityGP(MultiFidelity):
    """``algo=mf_gp``: the GP searcher's model is the run's ``surrogate=`` (gp by default), so it declares the
    protocol it needs and composition refuses another model (a time-varying GP, the network) in one line."""

    surrogate_protocol = StandardizedSurrogate
