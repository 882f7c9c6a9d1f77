"""Adam / SGD steps through ``torch.optim``'s own functional kernels, without a ``torch.optim.Optimizer``.

Why not ``torch.optim.Adam``: the ``Optimizer`` constructor (``add_param_group``, wrapped in
``torch._disable_dynamo``) imports ``torch._dynamo`` on its first call in a process, ~1.1 s of CPU that
made GO-UCB's first Phase II round 10x slower than the rest (issue 20). The functional kernels
``torch.optim.adam.adam`` / ``torch.optim.sgd.sgd`` are the same maths (and are tested equal to the
``Optimizer`` classes in tests/surrogates/test_steppers.py) and import nothing.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor
from torch.optim.adam import adam
from torch.optim.sgd import sgd

KINDS = ("adam", "sgd")


class Stepper:
    """Plain SGD or Adam (default betas 0.9 / 0.999, eps 1e-8) on leaf tensors, each with its own step size.

    Use as an optimiser: ``zero_grad()``, ``loss.backward()``, ``step()``; or pass the gradients: ``step(grads)``.
    """

    def __init__(self, kind: str, groups: list[tuple[Tensor, float]]) -> None:
        if kind not in KINDS:
            raise ValueError(f"optimizer '{kind}' is unknown; allowed: {', '.join(KINDS)}")
        self.kind, self.groups = kind, list(groups)
        self.state = [(torch.zeros_like(p), torch.zeros_like(p), torch.tensor(0.0)) for p, _ in self.groups]

    def zero_grad(self) -> None:
        for p, _ in self.groups:
            p.grad = None

    @torch.no_grad()
    def step(self, grads: Sequence[Tensor | None] | None = None) -> None:
        """One step on every tensor with a gradient: ``grads`` (one per tensor, in order), else each ``.grad``."""
        grads = grads if grads is not None else [p.grad for p, _ in self.groups]
        for (p, lr), grad, (exp_avg, exp_avg_sq, step) in zip(self.groups, grads, self.state):
            if grad is None:
                continue
            if self.kind == "adam":
                adam([p], [grad], [exp_avg], [exp_avg_sq], [], [step], foreach=False, amsgrad=False,
                     beta1=0.9, beta2=0.999, lr=lr, weight_decay=0.0, eps=1e-8, maximize=False)
            else:
                sgd([p], [grad], [None], foreach=False, weight_decay=0.0, momentum=0.0, lr=lr, dampening=0.0,
                    nesterov=False, maximize=False)
