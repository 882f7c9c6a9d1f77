"""Local derivative-free trust-region methods through ask/tell: COBYQA (the ``cobyqa`` package, which scipy vendors)
and scipy's COBYLA.

At a budget of a few evaluations per dimension a local model-based method started at the centre of the box beats
global Bayesian optimisation on BBOB (results/bbob_small.txt: NGOpt, which runs COBYLA there, ranked first). scipy
drives its own loop (``minimize(fun, x0)`` calls ``fun``), so the run sits in a greenlet: ``ask`` resumes it until
it calls ``fun`` with the next point, ``tell`` hands the value back on the next resume. Hand-written only in that
inversion of control; the methods are scipy's. When scipy stops (its trust region shrank below its final
radius), it restarts from the best point seen, with the first radius again, until the loop's budget ends.

Points live in the unit cube (``SearchSpace.decode``: log scales warped, integers and categories snapped), bounds
[0, 1]; the value is minimised as a loss (``-sign * value``); a failed evaluation counts as the worst value seen.
Resume replays (deterministic: no random numbers).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from greenlet import greenlet

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.local_dfo_config import LocalDFOConfig
from hpoflow.core.records import Evaluation, Failure, PlainSuggestion, Suggestion

FINAL_RADIUS = 1e-6  # the end radius: COBYQA's default; COBYLA's as NGOpt runs it (tol=0, which scipy raises to 1e-6)


class LocalDFO(AskTellAlgorithm):
    """One scipy trust-region run at a time (``config.name``: cobyqa | cobyla), restarted from the best point."""

    name = "cobyqa"
    pending_refusal = "scipy's trust region proposes each point from the value of the one before"

    def __init__(self, config: LocalDFOConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.name, self.radius, self.rounds = config.name, float(config.radius), ctx.rounds
        self.space = ctx.task.space
        self.dim = self.space.dim
        self.losses: list[float] = []
        self.best_u = np.full(self.dim, 0.5)
        self.best_loss = math.inf
        self.restarts = 0
        self._run = greenlet(self._minimize_forever)
        self._pending: np.ndarray | None = None

    # -- the scipy side (runs inside the greenlet) -------------------------------------------------------
    def _objective(self, u: np.ndarray) -> float:
        loss = self._caller.switch(np.array(u, dtype=float))  # hand the point to ask(); resumed by the next ask
        return float(loss)

    def _minimize_forever(self) -> None:
        import cobyqa  # the reference package: scipy's copy runs under a process-wide lock that a paused run holds
        from scipy.optimize import minimize

        x0 = np.full(self.dim, 0.5)
        bounds = [(0.0, 1.0)] * self.dim
        while True:
            left = max(self.rounds - len(self.losses), 2 * self.dim + 3)  # scipy wants a few more than d + 2
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # scipy's notes on its own radius/evaluation limits
                if self.name == "cobyla":
                    minimize(self._objective, x0, method="COBYLA", bounds=bounds, tol=FINAL_RADIUS,
                             options={"maxiter": left, "rhobeg": self.radius})
                else:
                    cobyqa.minimize(self._objective, x0, bounds=bounds,
                                    options={"maxfev": left, "radius_init": self.radius, "radius_final": FINAL_RADIUS})
            self.restarts += 1
            x0 = self.best_u.copy()

    # -- the loop's side ----------------------------------------------------------------------------------
    def _next_point(self, loss: float | None) -> np.ndarray:
        self._caller = greenlet.getcurrent()
        self._run.parent = self._caller
        u = self._run.switch() if loss is None else self._run.switch(loss)
        return np.clip(np.asarray(u, dtype=float), 0.0, 1.0)

    def ask(self, round: int) -> Suggestion:
        if self._pending is None:  # the first ask starts scipy; later ones were prepared by tell
            self._pending = self._next_point(None)
        u = self._pending
        return PlainSuggestion(self.space.decode(u.tolist()), u.tolist(), info={"restarts": float(self.restarts)})

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        u = np.asarray(getattr(suggestion, "u", None) or suggestion.x.tolist(), dtype=float)
        if isinstance(outcome, Failure):
            loss = max(self.losses) if self.losses else 1e10  # as bad as the worst seen
        else:
            loss = -self.task.direction.sign * float(outcome.value)
        self.losses.append(loss)
        if loss < self.best_loss:
            self.best_loss, self.best_u = loss, u
        if self._pending is not None and np.allclose(u, self._pending):
            self._pending = self._next_point(loss)  # scipy takes the value and proposes the next point
        # a point it did not propose (Study.tell of a foreign trial) only moves the restart point
