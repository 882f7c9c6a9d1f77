"""Multi-fidelity schedulers: which configuration to run next, at which fidelity level (pure Python, no torch).

A scheduler decides *when* a configuration is started or promoted to a higher rung; a searcher
(:mod:`hpoflow.algorithms.searchers`) decides *which* new configuration to start. The split is Syne Tune's and
Ray Tune's (schedulers apart from searchers); :class:`hpoflow.algorithms.multi_fidelity.MultiFidelity` joins them
as one ask/tell algorithm of the common loop.

Protocol (:class:`Scheduler`): ``next_job(new_id)`` returns the next :class:`Job` (a new configuration at the
lowest rung of its bracket, or a promotion of a reported one), never None: a synchronous scheduler whose
brackets all wait on running jobs opens the next bracket (Ray Tune's HyperBand does the same), so ``k`` workers
never idle. ``report(job, reward)`` takes the reward (``sign * value``: larger is better; None for a failed job).
``state_dict``/``load_state_dict``: plain JSON; jobs still running when the state was taken are forgotten, so a
resumed run asks for them again, unless the scheduler takes them back: the optional ``adopt(job) -> bool`` marks a
job that was running at the checkpoint (the loop saved it) as running again, so the resumed run evaluates that very
job (same configuration id and rung: a promotion is not lost) instead of asking anew; False: it cannot.

Written by hand: the rung arithmetic of Hyperband (Li et al., JMLR 2018, Alg. 1) and ASHA (Li et al., MLSys
2020, Alg. 2) is a few dozen lines, and the libraries that have it (Optuna's pruners, Ray Tune, Syne Tune) tie it
to their own trial objects and storage.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ASHA", "Job", "RungStopper", "Scheduler", "StoppingASHA", "SyncHyperband", "WarmHyperband",
           "bracket_sizes"]


@dataclass
class Job:
    """One evaluation a scheduler wants: configuration ``config_id`` at rung ``rung`` (level ``level``)."""

    config_id: int
    rung: int
    level: float
    bracket: int = 0
    new: bool = False  # a configuration not evaluated before (the searcher proposes it)
    uniform: bool = False  # a new configuration the searcher draws uniformly (a warm-up), not from its model
    point: list[float] | None = None  # a new configuration the scheduler chose itself (freeze-thaw), in [0, 1]^d


class Scheduler(Protocol):
    """What :class:`hpoflow.algorithms.multi_fidelity.MultiFidelity` needs of a scheduler (see the module doc)."""

    levels: list[float]

    def next_job(self, new_id: Callable[[], int]) -> Job: ...

    def report(self, job: Job, reward: float | None) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def _ranked(results: dict[int, float | None]) -> list[int]:
    """Configuration ids of reported results, best reward first (failures excluded; ties by id)."""
    done = [(r, i) for i, r in results.items() if isinstance(r, (int, float)) and math.isfinite(r)]
    return [i for r, i in sorted(done, key=lambda t: (-t[0], t[1]))]


def bracket_sizes(n_levels: int, eta: float, s: int) -> list[int]:
    """Hyperband's bracket ``s`` (0 <= s < n_levels): configurations per rung, starting at rung ``n_levels-1-s``.

    ``n = ceil((s_max + 1) / (s + 1) * eta^s)`` configurations at the bracket's first rung, ``floor(n / eta^i)`` at
    its ``i``-th (at least one): with 4 levels and eta=3, bracket 3 runs 27, 9, 3, 1 and bracket 0 runs 4.
    """
    s_max = n_levels - 1
    n = math.ceil((s_max + 1) / (s + 1) * eta ** s - 1e-9)
    return [max(1, math.floor(n / eta ** i + 1e-9)) for i in range(s + 1)]


PENDING = "pending"


class SyncHyperband:
    """Synchronous successive halving in Hyperband's brackets.

    ``brackets``: the bracket indices ``s`` run in turn (cycled): ``[s_max]`` is plain successive halving from the
    lowest level (``algo=sha``); ``[s_max, ..., 0]`` is Hyperband (``algo=hyperband``). A rung is promoted when
    every job of the rung below has reported: its best ``floor(n / eta)`` go on.
    """

    def __init__(self, levels: list[float], eta: float, brackets: list[int]) -> None:
        self.levels, self.eta, self.cycle = list(levels), float(eta), list(brackets)
        self.open: list[dict[str, Any]] = []  # each: {"s", "index", "rungs": [{"id": reward|PENDING}], "sizes"}
        self.started = 0  # brackets opened so far (the next one is cycle[started % len(cycle)])

    def _new_bracket(self) -> dict[str, Any]:
        s = self.cycle[self.started % len(self.cycle)]
        bracket = {"s": s, "index": self.started, "sizes": bracket_sizes(len(self.levels), self.eta, s),
                   "rungs": [{} for _ in range(s + 1)]}
        self.started += 1
        self.open.append(bracket)
        return bracket

    def _job(self, bracket: dict[str, Any], new_id: Callable[[], int]) -> Job | None:
        """The bracket's next job, or None while it waits on running jobs (or is complete)."""
        rungs, sizes, s = bracket["rungs"], bracket["sizes"], bracket["s"]
        first = len(self.levels) - 1 - s
        if len(rungs[0]) < sizes[0]:
            i = new_id()
            rungs[0][i] = PENDING
            return Job(i, first, self.levels[first], bracket["index"], new=True)
        for k in range(1, s + 1):
            below = rungs[k - 1]
            if any(r == PENDING for r in below):
                return None
            ranked = [i for i in _ranked(below)[:sizes[k]] if i not in rungs[k]]
            if ranked:
                rungs[k][ranked[0]] = PENDING
                return Job(ranked[0], first + k, self.levels[first + k], bracket["index"])
            if len(rungs[k]) < min(sizes[k], len(_ranked(below))):
                return None
        return None

    def _complete(self, bracket: dict[str, Any]) -> bool:
        return all(r != PENDING for rung in bracket["rungs"] for r in rung.values()) and all(
            len(bracket["rungs"][k]) >= min(bracket["sizes"][k], len(_ranked(bracket["rungs"][k - 1])))
            for k in range(1, bracket["s"] + 1)) and len(bracket["rungs"][0]) >= bracket["sizes"][0]

    def next_job(self, new_id: Callable[[], int]) -> Job:
        for bracket in self.open:
            job = self._job(bracket, new_id)
            if job is not None:
                return job
        job = self._job(self._new_bracket(), new_id)
        assert job is not None, "a new bracket always starts a configuration"
        return job

    def report(self, job: Job, reward: float | None) -> None:
        for bracket in self.open:
            if bracket["index"] == job.bracket:
                rung = bracket["rungs"][job.rung - (len(self.levels) - 1 - bracket["s"])]
                rung[job.config_id] = reward
                if self._complete(bracket):
                    self.open.remove(bracket)
                return
        raise ValueError(f"no open bracket {job.bracket} for configuration {job.config_id}")

    def adopt(self, job: Job) -> bool:
        """Mark ``job``, running when the state was saved, as running again (see the module doc)."""
        for bracket in self.open:
            if bracket["index"] == job.bracket:
                k = job.rung - (len(self.levels) - 1 - bracket["s"])
                if not 0 <= k <= bracket["s"] or job.config_id in bracket["rungs"][k]:
                    return False
                if k == 0 and len(bracket["rungs"][0]) >= bracket["sizes"][0]:
                    return False
                if k > 0 and job.config_id not in _ranked(bracket["rungs"][k - 1])[:bracket["sizes"][k]]:
                    return False
                bracket["rungs"][k][job.config_id] = PENDING
                return True
        return False

    def state_dict(self) -> dict[str, Any]:
        """Open brackets without their running jobs (a resume asks for them again), as plain JSON."""
        brackets = [{**b, "rungs": [[[i, r] for i, r in rung.items() if r != PENDING] for rung in b["rungs"]]}
                    for b in self.open]
        return {"open": brackets, "started": self.started}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.started = int(state["started"])
        self.open = [{**b, "rungs": [{int(i): r for i, r in rung} for rung in b["rungs"]]} for b in state["open"]]


class ASHA:
    """Asynchronous successive halving (Li et al., 2020, Algorithm 2): a job promotes the best configuration of
    the highest rung that has one in its top ``1/eta`` not yet promoted, and otherwise starts a new configuration
    at the lowest rung. No rung waits for another, so ``k`` workers are always busy."""

    def __init__(self, levels: list[float], eta: float) -> None:
        self.levels, self.eta = list(levels), float(eta)
        self.rungs: list[dict[int, Any]] = [{} for _ in levels]  # rung -> {config id: reward | PENDING}

    def next_job(self, new_id: Callable[[], int]) -> Job:
        for k in range(len(self.levels) - 2, -1, -1):
            ranked = _ranked(self.rungs[k])
            top = ranked[:math.floor(len([r for r in self.rungs[k].values() if r != PENDING]) / self.eta + 1e-9)]
            for i in top:
                if i not in self.rungs[k + 1]:
                    self.rungs[k + 1][i] = PENDING
                    return Job(i, k + 1, self.levels[k + 1])
        i = new_id()
        self.rungs[0][i] = PENDING
        return Job(i, 0, self.levels[0], new=True)

    def report(self, job: Job, reward: float | None) -> None:
        self.rungs[job.rung][job.config_id] = reward

    def adopt(self, job: Job) -> bool:
        """Mark ``job``, running when the state was saved, as running again (see the module doc)."""
        if not 0 <= job.rung < len(self.levels) or job.config_id in self.rungs[job.rung]:
            return False
        if job.rung > 0 and job.config_id not in _ranked(self.rungs[job.rung - 1]):
            return False
        self.rungs[job.rung][job.config_id] = PENDING
        return True

    def state_dict(self) -> dict[str, Any]:
        return {"rungs": [[[i, r] for i, r in rung.items() if r != PENDING] for rung in self.rungs]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rungs = [{int(i): r for i, r in rung} for rung in state["rungs"]]


class RungStopper:
    """ASHA's stopping rule for a training loop that reports as it goes (``Trial.report`` / ``should_stop``): when
    a trial reaches a rung level, its reward joins that rung's; it goes on only while it is among the best
    ``max(1, n // eta)`` of the ``n`` rewards recorded at the rung so far (itself included). This is Optuna's
    ``SuccessiveHalvingPruner`` rule and Syne Tune's stopping-type ASHA; no trial is stopped at the top rung.
    """

    def __init__(self, levels: list[float], eta: float) -> None:
        self.levels, self.eta = list(levels), float(eta)
        self.rungs: list[dict[int, float]] = [{} for _ in levels]  # rung -> {trial: reward at that rung}

    def report(self, trial: int, step: float, reward: float) -> bool:
        """Record ``reward`` of ``trial`` at ``step``; True when the trial should stop now."""
        stop = False
        for k, level in enumerate(self.levels[:-1]):
            if step >= level and trial not in self.rungs[k]:
                if not math.isfinite(reward):
                    return True
                self.rungs[k][trial] = reward
                ranked = sorted(self.rungs[k].values(), reverse=True)
                keep = max(1, math.floor(len(ranked) / self.eta + 1e-9))
                stop = stop or reward < ranked[keep - 1]
        return stop


class StoppingASHA:
    """Stopping-type ASHA (Ray Tune's ``ASHAScheduler``, Syne Tune's ``type="stopping"``): every configuration is
    trained rung by rung and goes on while it is among the best ``max(1, n // eta)`` of the ``n`` results recorded
    at its rung so far (:class:`RungStopper`'s rule); continuations are served before new configurations.

    Against promotion-type :class:`ASHA` it reaches the full fidelity early (the first configuration has no rival
    and runs to the end, as Ray Tune's and Optuna's pruners do), so a full-fidelity incumbent exists after one full
    training instead of after a whole rung ladder; later configurations are stopped at the first rung they lose.
    """

    def __init__(self, levels: list[float], eta: float) -> None:
        self.levels, self.eta = list(levels), float(eta)
        self.rungs: list[dict[int, float]] = [{} for _ in levels]  # rung -> {config id: reward}
        self.queue: list[tuple[int, int]] = []  # (config id, rung) continuations not yet handed out
        self.running: list[tuple[int, int]] = []  # continuations handed out, not reported yet

    def next_job(self, new_id: Callable[[], int]) -> Job:
        if self.queue:
            i, k = self.queue.pop(0)
            self.running.append((i, k))
            return Job(i, k, self.levels[k])
        return Job(new_id(), 0, self.levels[0], new=True)

    def report(self, job: Job, reward: float | None) -> None:
        if (job.config_id, job.rung) in self.running:
            self.running.remove((job.config_id, job.rung))
        if reward is None or not math.isfinite(reward):
            return
        rung = self.rungs[job.rung]
        rung[job.config_id] = reward
        if job.rung + 1 >= len(self.levels):
            return
        ranked = sorted(rung.values(), reverse=True)
        keep = max(1, math.floor(len(ranked) / self.eta + 1e-9))
        if reward >= ranked[keep - 1]:
            self.queue.append((job.config_id, job.rung + 1))

    def adopt(self, job: Job) -> bool:
        """Mark ``job``, running when the state was saved, as running again (see the module doc): a continuation
        leaves the queue, where the saved state put it; a new configuration needs no book."""
        key = (job.config_id, job.rung)
        if key in self.queue:
            self.queue.remove(key)
            self.running.append(key)
            return True
        return job.rung == 0 and all(job.config_id not in rung for rung in self.rungs)

    def state_dict(self) -> dict[str, Any]:
        """Recorded rewards and continuations to run, those running at the checkpoint first (a resume asks for them
        again, like every scheduler's running jobs); new configurations running then are forgotten."""
        return {"rungs": [[[i, r] for i, r in rung.items()] for rung in self.rungs],
                "queue": [[i, k] for i, k in self.running + self.queue]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rungs = [{int(i): float(r) for i, r in rung} for rung in state["rungs"]]
        self.queue = [(int(i), int(k)) for i, k in state["queue"]]


class WarmHyperband:
    """Hyperband after a stopping-type ASHA warm-up: the first ``n0`` new configurations (``n0`` = the size of
    Hyperband's most aggressive bracket, 27 for 4 rungs at eta = 3) run as in :class:`StoppingASHA`, drawn uniformly
    (``Job.uniform``); then :class:`SyncHyperband`'s brackets run, and the searcher's model sees the warm-up's results.

    Why (measured, results/mf_real_check.txt): a Hyperband bracket's first full-fidelity result comes after 8-12% of
    the budget, a stopping-type ASHA's after one full training (3.3% of 30); the anytime curve is flat at the worst
    value until then. The warm-up buys the early incumbent for about one bracket's compute and leaves Hyperband's end
    game (every bracket still runs) as it is. It pays where low fidelities rank configurations poorly (the live
    training tasks: best area under the anytime curve) and costs where they rank well (the multi-fidelity functions:
    far behind mf_gp), so it is an option, not algo=auto's pick (see :mod:`hpoflow.algorithms.auto_rule`).
    """

    def __init__(self, levels: list[float], eta: float) -> None:
        self.levels = list(levels)
        s_max = len(levels) - 1
        self.warmup = StoppingASHA(levels, eta)
        self.hyperband = SyncHyperband(levels, eta, list(range(s_max, -1, -1)))
        self.warm_configs = bracket_sizes(len(levels), eta, s_max)[0]
        self.warm_ids: set[int] = set()  # configurations the warm-up owns (its continuations stay its own)

    @property
    def started(self) -> int:
        """Warm-up configurations handed out so far."""
        return len(self.warm_ids)

    def next_job(self, new_id: Callable[[], int]) -> Job:
        if self.warmup.queue or self.started < self.warm_configs:
            job = self.warmup.next_job(new_id)
            if job.new:
                self.warm_ids.add(job.config_id)
                job.uniform = True
            return job
        return self.hyperband.next_job(new_id)

    def report(self, job: Job, reward: float | None) -> None:
        (self.warmup if job.config_id in self.warm_ids else self.hyperband).report(job, reward)

    def adopt(self, job: Job) -> bool:
        """Mark ``job``, running when the state was saved, as running again, in the phase that owns it."""
        return (self.warmup if job.config_id in self.warm_ids else self.hyperband).adopt(job)

    def state_dict(self) -> dict[str, Any]:
        """Both phases' state (plain JSON); a warm-up configuration running at the checkpoint is forgotten and not
        replaced (the warm-up is then one configuration short)."""
        return {"warmup": self.warmup.state_dict(), "hyperband": self.hyperband.state_dict(),
                "warm_ids": sorted(self.warm_ids)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.warmup.load_state_dict(state["warmup"])
        self.hyperband.load_state_dict(state["hyperband"])
        self.warm_ids = {int(i) for i in state["warm_ids"]}
