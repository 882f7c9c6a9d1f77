"""A power-law ensemble of learning curves (Kadra et al., "Scaling Laws for Hyperparameter Optimization", NeurIPS
2023, DPL): ``K`` small networks each map a configuration ``u`` in ``[0, 1]^d`` to ``(alpha, beta, gamma)`` of the
curve ``y(b) = alpha + beta * b^(-gamma)`` (``beta, gamma >= 0`` through a softplus: the curve falls with the
budget ``b`` in ``(0, 1]``, a loss to minimise, and ``y(1) = alpha + beta`` is the full-budget value).

The members are trained at once: their weights are stacked on a leading ``K`` axis, one batched matmul evaluates
all of them, and the gradient is written out by hand (numpy), as is Adam: a freeze-thaw scheduler fits the model
at every decision, and torch's per-step dispatch (and its optimiser's first import of ``torch._dynamo``) cost
more than the arithmetic here. ``fit`` runs a fixed number of full-batch Adam steps from the current weights and
moments (warm start): the first fit runs ``init_steps``, later ones ``steps``. The loss is the L1 error (DPL's).
The ensemble's spread (the standard deviation across members) is the model's uncertainty.

The state is one flat float64 vector of weights plus Adam's moments; ``state_dict`` is plain JSON that reloads it
bit for bit, so a resumed run continues from the same weights.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["PowerLawEnsemble"]

_BETAS = (0.9, 0.999)
_EPS = 1e-8
_SLOPE = 0.01  # leaky ReLU
_MAX_EXPONENT = 50.0  # b^(-gamma) is capped at e^50 (a member that drifts to a huge gamma stays finite)

Array = NDArray[np.float64]


def _softplus(x: Array) -> Array:
    return np.logaddexp(0.0, x)


def _t(x: Array) -> Array:
    """The batched transpose, contiguous (numpy's stacked matmul is far slower on strided views)."""
    return np.ascontiguousarray(x.transpose(0, 2, 1))


def _sigmoid(x: Array) -> Array:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class PowerLawEnsemble:
    """``members`` networks ``u -> (alpha, beta, gamma)`` with two hidden layers of ``hidden`` units (module doc).

    Args:
        dim: the configuration's dimension ``d``.
        members: ensemble size ``K``.
        hidden: units per hidden layer.
        seed: seeds the members' initial weights (uniform in ``+-1/sqrt(fan_in)``, torch's default).
        lr: Adam's step size.
        init_steps: Adam steps of the first fit.
        steps: Adam steps of every later fit (warm-started from the last weights and moments).
    """

    def __init__(self, dim: int, members: int = 5, hidden: int = 32, seed: int = 0, lr: float = 0.01,
                 init_steps: int = 300, steps: int = 20) -> None:
        self.dim, self.members, self.hidden = dim, members, hidden
        self.lr, self.init_steps, self.steps = lr, init_steps, steps
        self.fits, self.t = 0, 0  # fits run, Adam steps taken
        k, h = members, hidden
        self.shapes = [(k, dim, h), (k, 1, h), (k, h, h), (k, 1, h), (k, h, 3), (k, 1, 3)]
        self.sizes = [math.prod(s) for s in self.shapes]
        rng = np.random.default_rng(seed)
        fan_in = [dim, dim, h, h, h, h]
        self._theta = np.concatenate([rng.uniform(-1, 1, n) / math.sqrt(f) for n, f in zip(self.sizes, fan_in)])
        self._views = self._split(self._theta)  # views into the flat vector, which is only ever updated in place
        self.m = np.zeros_like(self._theta)
        self.v = np.zeros_like(self._theta)

    @property
    def theta(self) -> Array:
        """The flat weights (``members x`` each layer's weights and biases, in order)."""
        return self._theta

    @theta.setter
    def theta(self, value: ArrayLike) -> None:
        self._theta[...] = value  # in place: the layer views stay valid

    def __getstate__(self) -> dict[str, Any]:  # a copy or a pickle rebuilds the views into its own vector
        return {k: v for k, v in self.__dict__.items() if k != "_views"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._views = self._split(self._theta)

    def _split(self, theta: Array) -> list[Array]:
        out, start = [], 0
        for shape, n in zip(self.shapes, self.sizes):
            out.append(theta[start:start + n].reshape(shape))
            start += n
        return out

    def _weights(self, theta: Array) -> list[Array]:
        return self._views if theta is self._theta else self._split(theta)

    def curve_parameters(self, U: ArrayLike) -> tuple[Array, Array, Array]:
        """``(alpha, beta, gamma)`` of every member at the rows of ``U`` (``n x d``): three ``K x n`` arrays."""
        out = self._forward(np.asarray(U, dtype=np.float64))[-1]
        return out[..., 0], _softplus(out[..., 1]), _softplus(out[..., 2])

    def _forward(self, X: Array) -> tuple[Array, Array, Array, Array, Array]:
        w1, b1, w2, b2, w3, b3 = self._weights(self.theta)
        z1 = np.matmul(X[None], w1) + b1
        a1 = np.maximum(z1, _SLOPE * z1)
        z2 = np.matmul(a1, w2) + b2
        a2 = np.maximum(z2, _SLOPE * z2)
        return z1, a1, z2, a2, np.matmul(a2, w3) + b3

    @staticmethod
    def _power(gamma: Array, log_b: Array) -> Array:
        return np.exp(np.minimum(-gamma * log_b[None], _MAX_EXPONENT))

    def members_at(self, U: ArrayLike, b: ArrayLike) -> Array:
        """Every member's curve value at configuration ``U[i]`` and budget ``b[i]`` in ``(0, 1]``: ``K x n``."""
        alpha, beta, gamma = self.curve_parameters(U)
        return alpha + beta * self._power(gamma, np.log(np.asarray(b, dtype=np.float64)))

    def loss_and_gradient(self, U: ArrayLike, b: ArrayLike, y: ArrayLike) -> tuple[float, Array]:
        """The L1 loss (mean over points, summed over members) and its gradient in the flat weights."""
        X = np.asarray(U, dtype=np.float64)
        log_b, y = np.log(np.asarray(b, dtype=np.float64)), np.asarray(y, dtype=np.float64)
        w1, _, w2, _, w3, _ = self._weights(self.theta)
        z1, a1, z2, a2, out = self._forward(X)
        beta, gamma = _softplus(out[..., 1]), _softplus(out[..., 2])
        power = self._power(gamma, log_b)
        residual = out[..., 0] + beta * power - y[None]
        n = len(y)
        g = np.sign(residual) / n  # K x n: d loss / d prediction
        d_out = np.stack([g, g * power * _sigmoid(out[..., 1]),
                          -g * beta * power * log_b[None] * _sigmoid(out[..., 2])], axis=-1)
        d_w3, d_b3 = np.matmul(_t(a2), d_out), d_out.sum(1, keepdims=True)
        d_z2 = np.matmul(d_out, _t(w3)) * np.where(z2 > 0, 1.0, _SLOPE)
        d_w2, d_b2 = np.matmul(_t(a1), d_z2), d_z2.sum(1, keepdims=True)
        d_z1 = np.matmul(d_z2, _t(w2)) * np.where(z1 > 0, 1.0, _SLOPE)
        d_w1, d_b1 = np.matmul(np.ascontiguousarray(X.T)[None], d_z1), d_z1.sum(1, keepdims=True)
        grad = np.concatenate([a.reshape(-1) for a in (d_w1, d_b1, d_w2, d_b2, d_w3, d_b3)])
        return float(np.abs(residual).mean(1).sum()), grad

    def fit(self, U: ArrayLike, b: ArrayLike, y: ArrayLike, steps: int | None = None, batch: int | None = None,
            seed: int = 0) -> float:
        """Adam steps on the L1 error over the points ``(U[i], b[i], y[i])``, from the current weights.

        ``steps``: None runs ``init_steps`` on the first fit and ``steps`` after it. ``batch``: each step's
        minibatch size (drawn without replacement with a generator seeded by ``seed``; None: every point). Returns
        the loss before the last step (the members' mean absolute error, averaged over members).
        """
        n = self.init_steps if self.fits == 0 else self.steps
        n = n if steps is None else steps
        self.fits += 1
        U, b, y = (np.asarray(a, dtype=np.float64) for a in (U, b, y))
        rng = np.random.default_rng(seed)
        loss = float("nan")
        b1, b2 = _BETAS
        for _ in range(n):
            if batch is not None and batch < len(y):
                rows = rng.choice(len(y), batch, replace=False)
                loss, grad = self.loss_and_gradient(U[rows], b[rows], y[rows])
            else:
                loss, grad = self.loss_and_gradient(U, b, y)
            self.t += 1
            self.m = b1 * self.m + (1 - b1) * grad
            self.v = b2 * self.v + (1 - b2) * grad * grad
            m_hat, v_hat = self.m / (1 - b1 ** self.t), self.v / (1 - b2 ** self.t)
            self._theta -= self.lr * m_hat / (np.sqrt(v_hat) + _EPS)
        return loss / self.members

    def predict(self, U: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
        """The ensemble's mean and standard deviation (across members) at ``(U[i], b[i])``: two ``n`` arrays."""
        values = self.members_at(U, b)
        return values.mean(0), values.std(0)

    def state_dict(self) -> dict[str, Any]:
        """The weights, Adam's moments and step count, and the fit count, as plain JSON (floats repr-exact)."""
        return {"fits": self.fits, "t": self.t, "theta": self.theta.tolist(), "m": self.m.tolist(),
                "v": self.v.tolist()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.fits, self.t = int(state["fits"]), int(state["t"])
        for key in ("theta", "m", "v"):
            value = np.asarray(state[key], dtype=np.float64)
            if value.shape != self._theta.shape:
                raise ValueError(f"power-law ensemble state '{key}' has {value.size} weights; this model has "
                                 f"{self._theta.size} (members, hidden or dim differ)")
            setattr(self, key, value)  # theta: copied into the flat vector (its setter)
