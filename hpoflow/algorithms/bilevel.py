"""Gradient-based bilevel HPO of paper 001: local SHO (Appendix B) and MY-HPO (Algorithms 1 and 3).

Both run one outer iteration per loop round on a differentiable :class:`BilevelTask` and charge the
gradient computations they spend as the round's cost (two per iteration for SHO and Algorithm 1).
λ stays in the task's range [lambda_low, lambda_high] (the range λ* and the black-box methods use): every
λ-step is shortened to end at the nearer bound (projected gradient descent; the full variant solves its
λ sub-problem with those bounds). Without this, the 1/L steps walk λ off to -1e16 (SHO) or -1e81 (MY-HPO)
where λ* lies at the lower bound, since e^λ → 0 leaves the losses finite and the hypergradient one-signed.
A non-finite λ or loss raises ``FloatingPointError`` (the loop then ends the run FAILED, with every
earlier round kept).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from hpoflow.algorithms.base import Algorithm, BuildContext
from hpoflow.algorithms.bilevel_config import MYHPOConfig, SHOConfig
from hpoflow.core.records import Record
from hpoflow.tasks.base import Task
from hpoflow.tasks.bilevel import LAMBDA, BilevelTask

# MY-HPO's solver internals (no study varies them, so they are not config settings): backtracking line search
# (Beck, ch. 4) and the full variant's exact sub-problems (L-BFGS).
SHRINK, ARMIJO, MAX_HALVINGS = 0.5, 1e-4, 30  # step factor, sufficient decrease, halvings before giving up
INNER_TOL, INNER_MAX_ITER = 1e-10, 500        # gradient tolerance and iterations of each sub-problem


def require_bilevel(task: Task, algo: str) -> BilevelTask:
    """The task as a BilevelTask, or a one-line ValueError naming the compatible tasks."""
    if not isinstance(task, BilevelTask):
        message = (f"algo '{algo}' needs a differentiable bilevel task (task=ridge or task=logreg), "
                   f"got task '{getattr(task, 'name', type(task).__name__)}'")
        raise ValueError(message)  # noqa: TRY004 - a bad config: one line, exit 2
    return task


def inverse_lipschitz(step: float | None, lipschitz: float) -> float:
    """``step`` if the user set one, else (None) ``1/lipschitz``: the gradient step that cannot overshoot on
    an L-smooth objective (descent lemma), whatever the data's conditioning."""
    if step is not None:
        return step
    return 1.0 / lipschitz if lipschitz > 0 and math.isfinite(lipschitz) else 0.0


def backtrack(fn: Callable[[Tensor], Tensor], x: Tensor, direction: Tensor, step: float, shrink: float,
              armijo: float, max_halvings: int) -> tuple[float, int]:
    """Largest ``t = step * shrink^j`` with ``fn(x - t d) <= fn(x) - armijo t ||d||²`` (Beck, ch. 4).

    Returns ``(t, function evaluations)``; ``t = 0`` when no trial satisfies the test (the variable then
    stays put), so an ascent step is never accepted even if ``d`` is not an exact gradient.
    """
    with torch.no_grad():
        f0 = float(fn(x))
        dd = float(torch.sum(direction * direction))
        negligible = 1e-13 * (1.0 + float(torch.linalg.vector_norm(x))) / max(math.sqrt(dd), 1e-300)
        t = step
        for j in range(max_halvings):
            if t < negligible:  # the move would vanish in round-off: stop early, stay put
                return 0.0, j + 1
            f = float(fn(x - t * direction))
            if math.isfinite(f) and f <= f0 - armijo * t * dd:
                return t, j + 2
            t *= shrink
    return 0.0, max_halvings + 1


def box_step(x: Tensor, direction: Tensor, step: float, low: float, high: float) -> float:
    """``step`` shortened so that the scalar ``x - t * direction`` stays in ``[low, high]`` (``t >= 0``).

    In one dimension this is the projection of the gradient step onto the box: the capped step ends at the
    bound the unconstrained one would cross, and a step pushing out of a bound already reached is 0.
    """
    d, x_f = float(direction), float(x)
    if d > 0:
        return max(0.0, min(step, (x_f - low) / d))
    if d < 0:
        return max(0.0, min(step, (x_f - high) / d))
    return step


def value_and_grad(fn: Callable[[Tensor], Tensor], x: Tensor) -> tuple[Tensor, Tensor]:
    """``(fn(x), ∇fn(x))`` by autograd: one gradient computation."""
    x = x.detach().requires_grad_(True)
    value = fn(x)
    (grad,) = torch.autograd.grad(value, x)
    return value.detach(), grad


def argmin(fn: Callable[[Tensor], Tensor], x0: Tensor, tol: float, max_iter: int,
           bounds: tuple[float, float] | None = None) -> tuple[Tensor, int]:
    """Minimise a smooth ``fn`` by L-BFGS-B (scipy) from ``x0``, every coordinate within ``bounds`` if given;
    returns ``(x, gradient computations)``."""
    shape, dtype = x0.shape, x0.dtype

    def f(z: np.ndarray) -> tuple[float, np.ndarray]:
        v, g = value_and_grad(fn, torch.as_tensor(z, dtype=dtype).reshape(shape))
        return float(v), g.reshape(-1).numpy().astype(float)

    box = None if bounds is None else [bounds] * x0.numel()
    res = minimize(f, x0.detach().reshape(-1).numpy().astype(float), jac=True, method="L-BFGS-B", bounds=box,
                   options={"gtol": tol, "ftol": 0.0, "maxiter": max_iter, "maxcor": 20})
    return torch.as_tensor(res.x, dtype=dtype).reshape(shape), int(res.nfev)


class _BilevelAlgorithm(Algorithm):
    """Shared book-keeping: the per-iteration Record and the divergence check."""

    def __init__(self, name: str, task: Task, init_lambda: float) -> None:
        self.name = name
        self.task = require_bilevel(task, name)
        self.bounds = (self.task.lambda_low, self.task.lambda_high)
        if not self.bounds[0] <= init_lambda <= self.bounds[1]:
            raise ValueError(f"algo.init_lambda={init_lambda} is outside the task's λ range "
                             f"[{self.bounds[0]}, {self.bounds[1]}] (task.lambda_low, task.lambda_high)")
        self.lam = torch.tensor(init_lambda, dtype=self.task.dtype)

    def lambda_step(self, direction: Tensor, step: float) -> float:
        """``step`` capped so that ``λ - step * direction`` stays in the task's λ range."""
        return box_step(self.lam, direction, step, *self.bounds)

    def train_lipschitz(self, lam: Tensor | float) -> float:
        """Largest Hessian eigenvalue of ``L_T(·, λ)``: the data curvature plus ``2 e^(λ+c)``."""
        return self.task.curvature.train + 2.0 * float(self.task.penalty(lam))

    def _record(self, round: int, lam: Tensor, w: Tensor, cost: float, extra: dict[str, float]) -> Record:
        lam_f = float(lam)
        losses = self.task.losses(w)
        bad = [k for k, v in {"lambda": lam_f, **losses, **extra}.items() if not math.isfinite(v)]
        if bad:
            raise FloatingPointError(f"{self.name} diverged at iteration {round}: non-finite {', '.join(bad)} "
                                     f"(λ={lam_f:.4g}); try smaller step sizes (algo.alpha/beta/delta)")
        metrics = {"lambda": lam_f, **losses, **extra, "grad_evals": cost}
        return Record(round=round, config={LAMBDA: lam_f}, value=losses["val_loss"], cost=cost, metrics=metrics)


class SHO(_BilevelAlgorithm):
    """Local SHO: hypernetwork ``w = λφ1 + φ0``; a φ-step on ``L_T`` at ``λ̂ ~ N(λ, σ²)``, then a λ-step on ``L_V``."""

    def __init__(self, config: SHOConfig, ctx: BuildContext) -> None:
        super().__init__(config.name, ctx.task, config.init_lambda)
        self.config = config
        self.phi1, self.phi0 = self.task.init_w(), self.task.init_w()
        self.generator = ctx.generator(23)

    def step(self, round: int) -> Record:
        c, task = self.config, self.task
        lam_hat = self.lam + c.sigma * torch.randn((), generator=self.generator, dtype=self.lam.dtype)
        phi = torch.stack([self.phi1, self.phi0]).requires_grad_(True)
        (g,) = torch.autograd.grad(task.train_loss(lam_hat * phi[0] + phi[1], lam_hat), phi)
        # Hessian in (φ1, φ0) of L_T(λ̂φ1 + φ0) is [λ̂², λ̂; λ̂, 1] ⊗ H_w: largest eigenvalue (1 + λ̂²) L_T
        a = inverse_lipschitz(c.alpha, (1 + float(lam_hat) ** 2) * self.train_lipschitz(lam_hat))
        with torch.no_grad():
            self.phi1, self.phi0 = self.phi1 - a * g[0], self.phi0 - a * g[1]
        lam = self.lam.detach().requires_grad_(True)
        (g_lam,) = torch.autograd.grad(task.val_loss(lam * self.phi1 + self.phi0), lam)
        lip_lam = task.curvature.val * float(torch.sum(self.phi1 * self.phi1))
        b = self.lambda_step(g_lam, inverse_lipschitz(c.beta, lip_lam))
        self.lam = (self.lam - b * g_lam).detach().clamp(*self.bounds)  # clamp: round-off at a bound
        w = self.lam * self.phi1 + self.phi0
        return self._record(round, self.lam, w, 2.0, {"hypergrad": float(g_lam), "lambda_hat": float(lam_hat),
                                                      "alpha_step": a, "beta_step": b})

    def state_dict(self) -> dict[str, Any]:
        return {"phi1": self.phi1, "phi0": self.phi0, "lam": self.lam, "rng": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.phi1, self.phi0, self.lam = state["phi1"], state["phi0"], state["lam"]
        self.generator.set_state(state["rng"])


class MYHPO(_BilevelAlgorithm):
    """MY-HPO: ADMM-like steps on the Moreau-Yosida regularised training and validation losses.

    Per iteration k (Algorithm 1): a v-step on ``L_T(v, λ)`` gives ``φ0 = mean(v)``, ``φ1 = (v - φ0)/λ``
    (so ``Λ^kφ = v``); a w-step on ``L_T(w, λ) + uᵀ(w - Λ^kφ) + ρ/2||w - Λ^kφ||²``; a λ-step on
    ``L_V(λφ1 + φ0) + uᵀ(w - λφ1 - φ0) + ρ/2||w - λφ1 - φ0||²``; then ``u += ρ(w - Λ^{k+1}φ)``.
    ``variant=backtracking`` halves each step until its objective decreases; ``variant=full``
    (Algorithm 3) solves the three sub-problems to optimality by L-BFGS. A step size of null (default)
    is 1/L of that step's objective at the current iterate (``train_lipschitz``; ``(L_V + ρ)||φ1||²``
    for λ).

    Since ``G_φ(λ') = (λ'/λ)(v - v̄) + v̄``, a λ-step rescales the centred weights; at a fixed point
    ``(v - v̄)ᵀ∇L_V(v) = 0``, which is λ* only when ``w*(λ)`` moves along ``v - v̄`` (tested on such a
    problem). The model's slope ``(v - v̄)/λ`` has the right sign (more penalty, smaller weights) only
    for λ < 0, and λ = 0 is a singularity (``φ1 = (v - v̄)/λ`` blows up, the λ-step's curvature
    ``||φ1||²`` with it), so from the paper's start λ = -1 the iterates approach but do not cross λ = 0:
    MY-HPO finds λ* only where λ* < 0. Where it is not (e.g. ``task=ridge`` on NIR, λ* ≈ 3-5), it stalls
    near 0; ``task.lambda_offset`` moves λ* (``task.lambda_star`` gives it exactly).
    """

    def __init__(self, config: MYHPOConfig, ctx: BuildContext) -> None:
        super().__init__(config.name, ctx.task, config.init_lambda)
        self.config = config
        self.v, self.w, self.u = self.task.init_w(), self.task.init_w(), self.task.init_w()
        self.phi1, self.phi0 = self.task.init_w(), torch.zeros((), dtype=self.task.dtype)
        # the w-step's gradient: Algorithm 1 reuses ∇_v L_T from the v-step (two gradients per iteration, as the
        # paper counts); True evaluates ∇_w L_T(w, λ) anew (a third): an ablation, not a config setting
        self.fresh_w_gradient = False

    # -- the three objectives ---------------------------------------------------------------------
    def _w_objective(self, target: Tensor) -> Callable[[Tensor], Tensor]:
        lam, u, rho = self.lam, self.u, self.config.rho
        return lambda x: (self.task.train_loss(x, lam) + torch.dot(u, x - target)
                          + 0.5 * rho * torch.sum((x - target) ** 2))

    def _lambda_objective(self, w: Tensor) -> Callable[[Tensor], Tensor]:
        phi1, phi0, u, rho = self.phi1, self.phi0, self.u, self.config.rho

        def fn(lam: Tensor) -> Tensor:
            g = lam * phi1 + phi0
            return self.task.val_loss(g) + torch.dot(u, w - g) + 0.5 * rho * torch.sum((w - g) ** 2)

        return fn

    def _step_size(self, fn: Callable[[Tensor], Tensor], x: Tensor, d: Tensor, base: float) -> tuple[float, int]:
        if self.config.variant == "constant":
            return base, 0
        return backtrack(fn, x, d, base, SHRINK, ARMIJO, MAX_HALVINGS)

    # -- one iteration ---------------------------------------------------------------------------
    def step(self, round: int) -> Record:
        c, task = self.config, self.task
        lam_k = self.lam
        grads, fevals = 0.0, 0

        def train_k(x: Tensor) -> Tensor:
            return task.train_loss(x, lam_k)

        # Step 1: v (one gradient step, or argmin L_T(·, λ^k))
        if c.variant == "full":
            self.v, n = argmin(train_k, self.v, INNER_TOL, INNER_MAX_ITER)
            grads += n
            a, g_v = float("nan"), None
        else:
            _, g_v = task.train_grad(self.v, lam_k)
            grads += 1
            lip_t = self.train_lipschitz(lam_k)
            a, n = self._step_size(train_k, self.v, g_v, inverse_lipschitz(c.alpha, lip_t))
            fevals += n
            self.v = self.v - a * g_v
        self.phi0 = self.v.mean()
        self.phi1 = (self.v - self.phi0) / lam_k
        target_k = lam_k * self.phi1 + self.phi0
        # Step 2: w on the MY-regularised training loss
        w_obj = self._w_objective(target_k)
        if c.variant == "full":
            self.w, n = argmin(w_obj, self.w, INNER_TOL, INNER_MAX_ITER)
            grads += n
            b = float("nan")
        else:
            if self.fresh_w_gradient or g_v is None:
                _, g_w = task.train_grad(self.w, lam_k)
                grads += 1
            else:  # Algorithm 1 as written: reuse ∇_v L_T from step 1
                g_w = g_v
            d_w = g_w + self.u + c.rho * (self.w - target_k)
            lip_w = self.train_lipschitz(lam_k) + c.rho
            b, n = self._step_size(w_obj, self.w, d_w, inverse_lipschitz(c.beta, lip_w))
            fevals += n
            self.w = (self.w - b * d_w).detach()
        # Step 3: λ on the MY-regularised validation loss
        lam_obj = self._lambda_objective(self.w)
        if c.variant == "full":
            lam_new, n = argmin(lam_obj, lam_k, INNER_TOL, INNER_MAX_ITER, self.bounds)
            grads += n
            dlt = float("nan")
        else:
            _, g_lam = value_and_grad(lam_obj, lam_k)
            grads += 1
            lip_lam = (task.curvature.val + c.rho) * float(torch.sum(self.phi1 * self.phi1))
            first = self.lambda_step(g_lam, inverse_lipschitz(c.delta, lip_lam))  # ends inside the λ range
            dlt, n = self._step_size(lam_obj, lam_k, g_lam, first)
            fevals += n
            lam_new = (lam_k - dlt * g_lam).detach().clamp(*self.bounds)  # clamp: round-off at a bound
        # Step 4: consensus
        target_new = lam_new * self.phi1 + self.phi0
        self.u = self.u + c.rho * (self.w - target_new)
        self.lam = lam_new
        extra = {"r_norm": float(torch.linalg.vector_norm(self.w - target_new)),
                 "s_norm": float(c.rho * torch.linalg.vector_norm(target_new - target_k)),
                 "func_evals": float(fevals)}
        if c.variant != "full":
            extra.update(alpha_step=a, beta_step=b, delta_step=dlt)
        return self._record(round, self.lam, self.w, grads, extra)

    def state_dict(self) -> dict[str, Any]:
        return {"v": self.v, "w": self.w, "u": self.u, "lam": self.lam, "phi1": self.phi1, "phi0": self.phi0}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            setattr(self, key, value)
