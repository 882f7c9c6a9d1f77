"""Online HPO during one training run (paper 002 §2.1, App. C): a small MLP on scikit-learn digits.

The run is split into rounds of ``steps_per_round`` SGD steps. The tuned hyperparameter is the
**learning-rate multiplier** of the next round's steps (lr = base_lr * multiplier, log scale). Paying
for a round means one validation pass (cost 1); its reward is the validation-accuracy gain in
percentage points since the previous pass, divided by the rounds elapsed since then, clipped to [-2, 2].
An initial validation pass before round 1 is free. Test accuracy is reported every round as a metric
(never as the reward), so runs can be compared on final test accuracy.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task


def _digits_split() -> tuple[torch.Tensor, ...]:
    from sklearn.datasets import load_digits  # bundled with scikit-learn, no download

    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))  # a fixed split, shared by every seed
    X = torch.tensor(X[perm] / 16.0, dtype=torch.float32)
    y = torch.tensor(y[perm], dtype=torch.long)
    return X[:1097], y[:1097], X[1097:1447], y[1097:1447], X[1447:], y[1447:]


class OnlineDigits(Task):
    """Tune the learning-rate multiplier round by round; maximise the clipped validation gain."""

    name = "online_digits"
    direction = Direction.MAXIMIZE

    def __init__(self, steps_per_round: int = 20, batch_size: int = 32, base_lr: float = 0.05,
                 lr_mult_low: float = 0.05, lr_mult_high: float = 20.0, hidden: int = 32, n_multipliers: int = 0,
                 seed: int = 0) -> None:
        self.steps, self.batch_size, self.base_lr = steps_per_round, batch_size, base_lr
        self.space = SearchSpace.of(Float("lr_mult", lr_mult_low, lr_mult_high, log=True))
        if n_multipliers:
            self.candidates = torch.linspace(0, 1, n_multipliers, dtype=torch.float64).reshape(-1, 1)
        self.Xtr, self.ytr, self.Xva, self.yva, self.Xte, self.yte = _digits_split()
        self.generator = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=base_lr)
        self.last_acc, self.last_round = self.accuracy(self.Xva, self.yva), 0
        self.validation_passes = 0

    @torch.no_grad()
    def accuracy(self, X: torch.Tensor, y: torch.Tensor) -> float:
        return float((self.net(X).argmax(-1) == y).float().mean())

    def _train(self, lr: float) -> float:
        for group in self.opt.param_groups:
            group["lr"] = lr
        loss_sum = 0.0
        for _ in range(self.steps):
            idx = torch.randint(self.Xtr.shape[0], (self.batch_size,), generator=self.generator)
            loss = nn.functional.cross_entropy(self.net(self.Xtr[idx]), self.ytr[idx])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            loss_sum += float(loss.detach())
        return loss_sum / self.steps

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        train_loss = self._train(self.base_lr * float(config["lr_mult"]))
        metrics = {"train_loss": train_loss if math.isfinite(train_loss) else 1e6,
                   "test_acc": self.accuracy(self.Xte, self.yte)}
        if not observe:
            return Evaluation(value=math.nan, cost=0.0, metrics=metrics)
        acc = self.accuracy(self.Xva, self.yva)
        self.validation_passes += 1
        gain = 100.0 * (acc - self.last_acc) / max(round - self.last_round, 1)
        self.last_acc, self.last_round = acc, round
        metrics["val_acc"] = acc
        return Evaluation(value=float(np.clip(gain, -2.0, 2.0)), cost=1.0, metrics=metrics)


def make_online_digits(seed: int = 0, **config: Any) -> OnlineDigits:
    config.pop("name", None)
    return OnlineDigits(**config, seed=seed)
