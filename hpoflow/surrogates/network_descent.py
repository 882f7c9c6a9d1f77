"""The network's least-squares oracle as full-batch Adam / SGD in numpy, with the gradient by hand-written backprop.

Written by hand because nothing else is cheap at this size: for GO-UCB's 25-unit net on at most a few dozen
points, torch's autograd + optimizer dispatch took 0.21 ms a step against 0.03 ms of arithmetic, and the
oracle runs hundreds of steps every round (issue 20). The maths is torch's: the loss is
``ParametricModel.values``' squared error (tested equal to autograd's gradient), the updates are
``torch.optim.adam`` / ``sgd``'s formulas (default betas 0.9 / 0.999, eps 1e-8).

Shapes: ``W`` is ``r x d_w`` (``r`` starts fitted at once, each row its own problem), ``X`` is ``m x d``,
``y`` is ``m``; a layer's weight is stored ``out x in`` then its bias, as ``nn.Linear`` flattens.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import expit

_SOFTPLUS_THRESHOLD = 20.0  # torch.nn.Softplus's default: linear above it


def _activate(name: str, pre: np.ndarray) -> np.ndarray:
    if name == "sigmoid":
        return expit(pre)
    if name == "tanh":
        return np.tanh(pre)
    if name == "relu":
        return np.maximum(pre, 0.0)
    return np.where(pre > _SOFTPLUS_THRESHOLD, pre, np.log1p(np.exp(np.minimum(pre, _SOFTPLUS_THRESHOLD))))


def _derivative(name: str, pre: np.ndarray, out: np.ndarray) -> np.ndarray:
    """d act / d pre, from the pre-activation and the activation (as torch's backward kernels compute it)."""
    if name == "sigmoid":
        return out * (1.0 - out)
    if name == "tanh":
        return 1.0 - out * out
    if name == "relu":
        return (pre > 0).astype(pre.dtype)
    return np.where(pre > _SOFTPLUS_THRESHOLD, 1.0, expit(pre))


class NetworkLoss:
    """Per-row loss ``mean_j (f_{W[r]}(x_j) - y_j)^2 + weight_decay ||W[r]||^2`` and its gradient in ``W``.

    Args:
        layers: ``(out, in)`` of each Linear layer, first to last (the last has ``out = 1``).
        activation: the hidden layers' activation (sigmoid | tanh | relu | softplus).
        weight_decay: the L2 penalty.
    """

    def __init__(self, layers: Sequence[tuple[int, int]], activation: str, weight_decay: float = 0.0) -> None:
        self.layers, self.activation, self.weight_decay = list(layers), activation, weight_decay
        self.bounds: list[tuple[int, int, int]] = []  # (start of the weight, start of the bias, end of the bias)
        at = 0
        for out, inp in self.layers:
            self.bounds.append((at, at + out * inp, at + out * inp + out))
            at += out * inp + out
        self.d_w = at

    def __call__(self, W: np.ndarray, X: np.ndarray, y: np.ndarray,
                 with_loss: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
        """Losses (``r``; None unless ``with_loss``) and their gradients (``r x d_w``) at the rows of ``W``."""
        r, m = W.shape[0], X.shape[0]
        weights = [W[:, a:b].reshape(r, out, inp) for (a, b, _), (out, inp) in zip(self.bounds, self.layers)]
        biases = [W[:, b:c] for a, b, c in self.bounds]
        hidden, pres = [np.broadcast_to(X, (r, *X.shape))], []
        for weight, bias in zip(weights[:-1], biases[:-1]):
            pre = hidden[-1] @ weight.transpose(0, 2, 1) + bias[:, None, :]  # r x m x out
            pres.append(pre)
            hidden.append(_activate(self.activation, pre))
        f = (hidden[-1] @ weights[-1].transpose(0, 2, 1))[..., 0] + biases[-1]  # r x m
        residual = f - y
        loss = (residual * residual).mean(1) if with_loss else None
        upstream = (2.0 / m) * residual[:, :, None]  # d loss / d f, r x m x 1
        grad = np.empty_like(W)
        for k in range(len(self.layers) - 1, -1, -1):
            a, b, c = self.bounds[k]
            grad[:, a:b] = (upstream.transpose(0, 2, 1) @ hidden[k]).reshape(r, -1)
            grad[:, b:c] = upstream.sum(1)
            if k:
                upstream = (upstream @ weights[k]) * _derivative(self.activation, pres[k - 1], hidden[k])
        if self.weight_decay:
            if loss is not None:
                loss = loss + self.weight_decay * (W * W).sum(1)
            grad += (2.0 * self.weight_decay) * W
        return loss, grad


def descend(loss_fn: NetworkLoss, W: np.ndarray, X: np.ndarray, y: np.ndarray, optimizer: str, lr: float,
            iterations: int, target: float | None = None, stall: float = 0.0) -> np.ndarray:
    """Full-batch ``adam`` / ``sgd`` on every row of ``W`` (``r x d_w``; a copy is returned) for ``iterations`` steps.

    Every 50 steps (from step 0) it stops once the best row's loss is ``<= target`` (unless ``target`` is None) or,
    with ``stall > 0``, fell by less than that fraction since the last check.
    """
    W = np.array(W, copy=True)
    first, second = np.zeros_like(W), np.zeros_like(W)
    previous = math.inf
    for step in range(iterations):
        check = step % 50 == 0  # the loss is only read at the checks
        loss, grad = loss_fn(W, X, y, with_loss=check)
        if optimizer == "adam":  # torch.optim.adam's single-tensor update
            first += 0.1 * (grad - first)
            second *= 0.999
            second += 0.001 * grad * grad
            n = step + 1
            denom = np.sqrt(second) / math.sqrt(1.0 - 0.999**n) + 1e-8
            W += (-lr / (1.0 - 0.9**n)) * (first / denom)
        else:
            W += -lr * grad
        if check and loss is not None:
            best = float(loss.min())
            if target is not None and best <= target:
                break  # converged: the best start already fits to within the target
            if stall > 0 and best > (1 - stall) * previous:
                break  # stalled: less than `stall` of the loss gained over the last 50 steps
            previous = best
    return W
