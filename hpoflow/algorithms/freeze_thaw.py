"""Freeze-thaw multi-fidelity optimisation (``algo=freeze_thaw``): every trial is pausable, and at every job a
learning-curve model decides which paused trial to continue by one level of a ladder, or whether to start a new
configuration at the lowest level.

The model is a power-law ensemble (:class:`hpoflow.surrogates.power_law.PowerLawEnsemble`; Kadra et al., "Scaling
Laws for Hyperparameter Optimization", NeurIPS 2023, DPL), trained online on every observed point of every curve
(the task's ``Evaluation.curve`` gives the values at each unit trained; a task without curves gives one point per
job). The candidates of a decision are the paused trials (not running, not failed, below the full level) and
``pool`` new random configurations (on a task with a finite set: set members not started yet). The acquisition:

- ``ei`` (DPL's): expected improvement of the predicted full-level value over the best value observed so far.
- ``mfpi_random`` (Rakotoarison et al., "In-Context Freeze-Thaw Bayesian Optimization for Hyperparameter
  Optimization", ICML 2024, ifBO): a horizon ``h`` (ladder levels ahead) and a threshold ``best + range * 10^U(-4,
  -1)`` are drawn for each decision; the candidate with the highest probability of beating the threshold ``h``
  levels ahead of where it is wins.

:class:`FreezeThawScheduler` keeps the :class:`hpoflow.algorithms.schedulers.Scheduler` protocol (``next_job``,
``report``, plain-JSON state); a new configuration it chooses travels as ``Job.point``. :class:`FreezeThaw` joins it
to :class:`hpoflow.algorithms.multi_fidelity.MultiFidelity`, so the loop continues a trial through
``Task.evaluate_at(config_id=...)`` (charged only the units added) and ``k`` workers run asynchronously (running
trials are neither continued nor started twice). A resumed run continues from the same weights and random streams
(each decision seeds its own stream from the decision count), so it makes the decisions an uninterrupted run makes.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.freeze_thaw_config import FreezeThawConfig
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.schedulers import Job
from hpoflow.algorithms.searchers import RandomSearcher
from hpoflow.core.fidelity import rung_levels
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.surrogates.power_law import PowerLawEnsemble

__all__ = ["FreezeThaw", "FreezeThawScheduler"]


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """EI of a value to minimise below ``best`` for a normal ``(mean, std)``."""
    s = np.maximum(std, 1e-9)
    z = (best - mean) / s
    return (best - mean) * ndtr(z) + s * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def improvement_probability(mean: np.ndarray, std: np.ndarray, threshold: float) -> np.ndarray:
    """P(value < threshold) for a normal ``(mean, std)``."""
    return ndtr((threshold - mean) / np.maximum(std, 1e-9))


class _Rows:
    """Every observed curve point ``(u, budget, reward)`` in growing float64 arrays (no per-decision rebuild)."""

    def __init__(self, dim: int) -> None:
        self.n = 0
        self.U, self.b, self.r = np.empty((64, dim)), np.empty(64), np.empty(64)

    def append(self, u: list[float], budget: float, reward: float) -> None:
        if self.n == len(self.b):  # full: double the capacity
            self.U = np.concatenate([self.U, np.empty_like(self.U)])
            self.b, self.r = (np.concatenate([a, np.empty_like(a)]) for a in (self.b, self.r))
        self.U[self.n], self.b[self.n], self.r[self.n] = u, budget, reward
        self.n += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Configurations ``n x d``, budgets ``n`` and rewards ``n`` (views of the first ``n`` rows)."""
        return self.U[:self.n], self.b[:self.n], self.r[:self.n]


class FreezeThawScheduler:
    """Freeze-thaw decisions over a ladder of ``levels`` (module doc); rewards are larger-is-better.

    Args:
        levels: the ladder, lowest first; the last is the full level.
        dim: the configuration's dimension.
        seed: seeds the model and every decision's random stream.
        candidates: a task's finite set of points (``m x d``), or None for the unit cube.
        config: the method's settings (acquisition, pool, model size and steps).
        workers: the run's workers (above 1: the first trials jump to the full level, ``config.first_jumps``).
    """

    def __init__(self, levels: list[float], dim: int, seed: int, candidates: list[list[float]] | None,
                 config: FreezeThawConfig, workers: int = 1) -> None:
        self.levels, self.dim, self.seed, self.candidates = list(levels), dim, seed, candidates
        self.workers = workers
        self.config = config
        self.top = len(self.levels) - 1
        self.model = PowerLawEnsemble(dim, config.members, config.hidden, seed, config.lr, config.init_steps,
                                      config.steps)
        self.trials: dict[int, dict[str, Any]] = {}  # id -> {"u", "index", "rung" (-1: none yet), "curve", "failed"}
        self.running: dict[int, int] = {}  # config id -> the rung it was asked for (not in the state)
        self._order: list[int] = []  # the config id of each curve point: the points in the order they were observed
        self._rows = _Rows(dim)  # (u, budget, reward) of every curve point, as arrays the model reads
        self.decisions = 0
        self.last: dict[str, Any] = {}  # what the last decision saw (for tests and the decision log)

    # -- the data -----------------------------------------------------------------------------------
    def _budget(self, level: float) -> float:
        return float(level) / float(self.levels[-1])

    def observe_curve(self, config_id: int, points: list[tuple[float, float]]) -> None:
        """The rewards ``(level, reward)`` a job trained through (before its ``report``)."""
        for level, r in points:
            if math.isfinite(r):
                self._add(config_id, self._budget(level), float(r))

    def report(self, job: Job, reward: float | None) -> None:
        self.running.pop(job.config_id, None)
        trial = self.trials[job.config_id]
        if reward is None or not math.isfinite(reward):
            trial["failed"] = True
            return
        trial["rung"] = job.rung
        b = self._budget(job.level)
        if not trial["curve"] or trial["curve"][-1][0] != b:
            self._add(job.config_id, b, float(reward))

    def _add(self, config_id: int, budget: float, reward: float) -> None:
        """One observed point of a curve, kept in the trial and in the model's data arrays."""
        trial = self.trials[config_id]
        trial["curve"].append([budget, reward])
        self._rows.append(trial["u"], budget, reward)
        self._order.append(config_id)

    def _data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every observed point: configurations, budgets and standardised losses (rewards negated)."""
        U, b, rewards = self._rows.arrays()
        if self.config.clip is None:
            sd = float(rewards.std())
            return U, b, -(rewards - rewards.mean()) / (sd if sd > 1e-12 else 1.0)
        low, mid, high = np.quantile(rewards, [0.25, 0.5, 0.75])  # robust: a diverged run does not set the scale
        scale = float(high - low) / 1.349 or float(rewards.std()) or 1.0
        return U, b, np.minimum(-(rewards - mid) / scale, self.config.clip)  # bad values clipped

    # -- the decision -------------------------------------------------------------------------------
    def _pool(self, rng: random.Random, n: int) -> list[tuple[list[float], int | None]]:
        """``n`` new points (on a finite set: members not started, drawn without replacement)."""
        if self.candidates is None:
            return [([rng.random() for _ in range(self.dim)], None) for _ in range(n)]
        taken = {t["index"] for t in self.trials.values()}
        fresh = [i for i in range(len(self.candidates)) if i not in taken]
        return [(list(self.candidates[i]), i) for i in rng.sample(fresh, min(n, len(fresh)))]

    def _start(self, new_id: Callable[[], int], point: tuple[list[float], int | None]) -> Job:
        i = new_id()
        self.trials[i] = {"u": list(point[0]), "index": point[1], "rung": -1, "curve": [], "failed": False}
        self.running[i] = 0
        return Job(i, 0, self.levels[0], new=True, point=list(point[0]))

    def next_job(self, new_id: Callable[[], int]) -> Job:
        self.decisions += 1
        rng = random.Random(self.seed * 1_000_003 + self.decisions)
        paused = [i for i, t in self.trials.items()
                  if i not in self.running and not t["failed"] and 0 <= t["rung"] < self.top]
        observed = sum(1 for t in self.trials.values() if t["curve"])
        pool = self._pool(rng, 1 if len(self.trials) < self.config.init_configs or observed == 0 else
                          self.config.pool)
        if not pool and not paused:  # a finite set, all started and none to continue: repeat a member
            assert self.candidates is not None
            j = rng.randrange(len(self.candidates))
            pool = [(list(self.candidates[j]), j)]
        jump = self.workers > 1 and self.config.first_jumps > 0
        if (paused and not any(t["rung"] == self.top for t in self.trials.values())
                and (not jump or sum(r == self.top for r in self.running.values()) < self.config.first_jumps)):
            # no full-level value yet: the best paused trial goes on, so that an incumbent exists after one training;
            # one worker: one level a job; k workers: up to first_jumps trials, each the rest of the way in one job
            i = max(paused, key=lambda j: (self.trials[j]["curve"][-1][1], -j))
            rung = self.top if jump else self.trials[i]["rung"] + 1
            self.running[i] = rung
            self.last = {"kind": "first"}
            return Job(i, rung, self.levels[rung])
        if len(self.trials) < self.config.init_configs or observed == 0 or not paused and len(pool) == 1:
            self.last = {"kind": "warm-up" if pool else "repeat"}
            return self._start(new_id, pool[0])
        scores = self._scores(paused, pool, rng)
        k = int(np.argmax(scores))
        self.last = {"kind": "continue" if k < len(paused) else "new", "scores": scores.tolist(),
                     "paused": list(paused)}
        if k < len(paused):
            i = paused[k]
            rung = self.trials[i]["rung"] + 1
            self.running[i] = rung
            return Job(i, rung, self.levels[rung])
        return self._start(new_id, pool[k - len(paused)])

    def _scores(self, paused: list[int], pool: list[tuple[list[float], int | None]],
                rng: random.Random) -> np.ndarray:
        """The acquisition of each paused trial (continued one level), then of each new point."""
        U, b, y = self._data()
        self.model.fit(U, b, y, batch=self.config.batch, seed=self.seed * 1_000_003 + self.decisions)
        X = np.asarray([self.trials[i]["u"] for i in paused] + [u for u, _ in pool], dtype=np.float64)
        at = [self.trials[i]["rung"] for i in paused] + [-1] * len(pool)  # the rung each one has reached
        full = b >= 1.0 - 1e-12
        best = float(y[full].min()) if full.any() else float(y.min())  # the incumbent: best full-level value
        if self.config.acquisition == "ei":
            mean, std = self.model.predict(X, np.ones(len(X)))
            return expected_improvement(mean, std, best)
        horizon = rng.randint(1, self.top + 1)  # ladder levels ahead
        threshold = best - float(y.max() - y.min()) * 10 ** rng.uniform(-4, -1)
        target = np.asarray([self._budget(self.levels[min(k + horizon, self.top)]) for k in at])
        mean, std = self.model.predict(X, target)
        return improvement_probability(mean, std, threshold)

    # -- state --------------------------------------------------------------------------------------
    def adopt(self, job: Job) -> bool:
        """Mark ``job``, running when the state was saved (the loop saved it), as running again: a continuation
        of a paused trial above its level, or a new configuration (``job.point``) the state forgot. False: neither."""
        i, trial = job.config_id, self.trials.get(job.config_id)
        if i in self.running or not 0 <= job.rung <= self.top:
            return False
        if trial is None:
            if job.rung != 0 or job.point is None:
                return False
            index = None if self.candidates is None else next(
                (k for k, c in enumerate(self.candidates) if list(c) == list(job.point)), None)
            self.trials[i] = {"u": list(job.point), "index": index, "rung": -1, "curve": [], "failed": False}
        elif trial["failed"] or trial["rung"] >= job.rung:
            return False
        self.running[i] = job.rung
        return True

    def state_dict(self) -> dict[str, Any]:
        """Trials, the decision count and the model (plain JSON); a new configuration running when the state is
        taken is forgotten and a running continuation is paused again at its last level, until :meth:`adopt` puts
        them back (else a resume asks again)."""
        trials = [[i, t] for i, t in self.trials.items() if not (i in self.running and t["rung"] < 0)]
        return {"trials": trials, "decisions": self.decisions, "model": self.model.state_dict(),
                "order": list(self._order)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.trials = {int(i): {**t, "u": list(t["u"]), "curve": [list(p) for p in t["curve"]]}
                       for i, t in state["trials"]}
        # the model's rows in the order they were observed (its minibatches index them); a state saved without
        # that order gives them trial by trial
        order = state.get("order") or [i for i, t in self.trials.items() for _ in t["curve"]]
        seen: dict[int, int] = {}
        self._rows, self._order = _Rows(self.dim), []
        for i in map(int, order):
            v, r = self.trials[i]["curve"][seen.get(i, 0)]
            seen[i] = seen.get(i, 0) + 1
            self._rows.append(self.trials[i]["u"], float(v), float(r))
            self._order.append(i)
        self.running = {}
        self.decisions = int(state["decisions"])
        self.model.load_state_dict(state["model"])


class FreezeThaw(MultiFidelity):
    """``algo=freeze_thaw``: :class:`FreezeThawScheduler` on the ladder ``min * eta^k`` up to the full level."""

    name = "freeze_thaw"

    def __init__(self, config: FreezeThawConfig, ctx: BuildContext) -> None:
        AskTellAlgorithm.__init__(self, ctx.task)  # not MultiFidelity's: it builds a Hyperband-family scheduler
        fidelity = ctx.task.fidelity
        if fidelity is None:
            raise ValueError(f"algo={config.name} needs a task with a fidelity (epochs, boosting rounds, ...); "
                             f"task '{ctx.task.name}' declares none: pick e.g. task=branin_mf, or a full-fidelity "
                             "algorithm")
        if config.min_fidelity is not None and not fidelity.min <= config.min_fidelity <= fidelity.max:
            raise ValueError(f"algo.min_fidelity={config.min_fidelity} is outside the task's fidelity "
                             f"{fidelity.name} in [{fidelity.min}, {fidelity.max}]")
        self.config, self.name, self.ctx = config, config.name, ctx  # type: ignore[assignment]
        self.levels = rung_levels(fidelity, config.eta, config.min_fidelity)
        dim, seed = ctx.task.space.dim, ctx.generator_seed(29)
        candidates = None if ctx.task.candidates is None else ctx.task.candidates.double().tolist()
        self.scheduler: FreezeThawScheduler = FreezeThawScheduler(self.levels, dim, seed, candidates, config,
                                                                  ctx.workers)
        self.searcher = RandomSearcher(dim, seed, candidates)  # asked only if a job came without a point
        self.points: dict[int, list[float]] = {}
        self.jobs: dict[int, Job] = {}
        self.next_id = 0

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        job = self.jobs.get(id(suggestion))
        if job is not None and isinstance(outcome, Evaluation) and outcome.curve:
            sign = self.task.direction.sign
            self.scheduler.observe_curve(job.config_id, [(step, sign * value) for step, value in outcome.curve])
        super().tell(suggestion, outcome)
