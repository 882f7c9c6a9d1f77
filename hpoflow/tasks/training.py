"""SGD-trained networks as black-box objectives (paper 000's inner level).

Each evaluation trains a fresh network with ``inner_steps`` minibatch SGD steps for the given
hyperparameters and returns the validation cross-entropy (minimise); test loss and accuracy go into
the metrics. The cost of an evaluation is the number of SGD steps, so the loop's ``query_cost`` counts
SGD steps. Initialisation and minibatch order are seeded by ``(seed, round)``: an evaluation is a
deterministic function of (config, seed, round), and the SGD noise varies between rounds like the
paper's observation noise.

Datasets: scikit-learn's bundled digits (8x8, stratified train/val/test split fixed by the seed) and
MNIST from a local folder (torchvision, imported lazily; never downloaded).

``task.fidelity=true`` (opt-in: without it every evaluation is exactly as before) trains in **epochs** instead:
one epoch is a pass over the training set in a shuffled order (minibatches of ``batch_size``), the fidelity is
``epochs`` in ``[min_epochs, epochs]`` and the cost is epochs trained. A trial's network and SGD state (momentum
buffers) are kept per configuration id, so a promotion continues it (:mod:`hpoflow.tasks.continuation`);
initialisation and each epoch's order come from ``(seed, config id)`` (``(seed, round)`` for a full evaluation),
so a continued trial is the one trained straight to that level. The curve is the validation loss per epoch.
"""
from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, Int, Parameter, SearchSpace
from hpoflow.tasks.base import unobserved
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.trial_states import TrialStates

RANGES: dict[str, Parameter] = {
    "lr": Float("lr", 1e-3, 1.0, log=True), "momentum": Float("momentum", 0.0, 0.95),
    "weight_decay": Float("weight_decay", 1e-6, 1e-1, log=True), "width": Int("width", 2, 32, log=True)}


@dataclass(frozen=True)
class Split:
    """Images ``n x 1 x s x s`` (float32) and labels ``n`` (int64) of train, validation and test."""

    x_train: Tensor
    y_train: Tensor
    x_val: Tensor
    y_val: Tensor
    x_test: Tensor
    y_test: Tensor


def stratified_split(X: np.ndarray, y: np.ndarray, val_fraction: float, test_fraction: float,
                     seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of a stratified train/validation/test split, fixed by ``seed``."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    rest, test = train_test_split(idx, test_size=test_fraction, stratify=y, random_state=seed)
    train, val = train_test_split(rest, test_size=val_fraction / (1 - test_fraction), stratify=y[rest],
                                  random_state=seed + 1)
    return train, val, test


def _tensors(X: np.ndarray, y: np.ndarray, side: int) -> tuple[Tensor, Tensor]:
    return torch.tensor(X, dtype=torch.float32).reshape(-1, 1, side, side), torch.tensor(y, dtype=torch.long)


def load_digits_split(seed: int, val_fraction: float = 0.2, test_fraction: float = 0.2) -> Split:
    """scikit-learn's digits (1797 images, 8x8, scaled to [0, 1]), split stratified by ``seed``."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    tr, va, te = stratified_split(X, y, val_fraction, test_fraction, seed)
    return Split(*_tensors(X[tr], y[tr], 8), *_tensors(X[va], y[va], 8), *_tensors(X[te], y[te], 8))


def load_mnist_split(path: str, seed: int, val_fraction: float = 0.2) -> Split:
    """MNIST from ``path`` (torchvision's ``MNIST/raw`` layout): train split stratified into train/val
    by ``seed``, the official test set as test. Never downloads.

    Raises:
        FileNotFoundError: ``path`` is empty or does not exist.
        ValueError: torchvision cannot be imported, or the files are not there.
    """
    if not path or not os.path.isdir(path):
        raise FileNotFoundError(f"task.path='{path}' is not a folder; mnist_cnn reads MNIST from a local folder "
                                "(torchvision layout <path>/MNIST/raw) and never downloads")
    try:
        from torchvision.datasets import MNIST
    except Exception as exc:  # noqa: BLE001 - a broken CUDA build raises more than ImportError
        raise ValueError(f"mnist_cnn needs torchvision (pip install 'hpoflow[vision]'); importing it failed: "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    try:
        train, test = MNIST(path, train=True, download=False), MNIST(path, train=False, download=False)
    except RuntimeError as exc:
        raise ValueError(f"task.path='{path}': no MNIST files found ({exc}); download them yourself") from None
    X, y = train.data.numpy().reshape(len(train.data), -1) / 255.0, train.targets.numpy()
    from sklearn.model_selection import train_test_split

    tr, va = train_test_split(np.arange(len(y)), test_size=val_fraction, stratify=y, random_state=seed)
    Xt, yt = test.data.numpy().reshape(len(test.data), -1) / 255.0, test.targets.numpy()
    return Split(*_tensors(X[tr], y[tr], 28), *_tensors(X[va], y[va], 28), *_tensors(Xt, yt, 28))


def resolve_device(device: str) -> str:
    """``cpu``, ``cuda`` (refused in one line where torch sees no GPU) or ``auto`` (cuda where there is one)."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("task.device=cuda: torch sees no CUDA GPU here; allowed: cpu, auto")
    return device


def make_cnn(side: int, width: int, classes: int = 10) -> nn.Module:
    """The paper's shape: two 3x3 conv layers (each ReLU + 2x2 max-pool) and one fully connected layer."""
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(width * (side // 4) ** 2, classes))


def make_mlp(side: int, width: int, classes: int = 10) -> nn.Module:
    """One hidden ReLU layer."""
    return nn.Sequential(nn.Flatten(), nn.Linear(side * side, width), nn.ReLU(), nn.Linear(width, classes))


ARCHITECTURES = {"cnn": make_cnn, "mlp": make_mlp}
DEFAULT_WIDTH = {"cnn": 8, "mlp": 32}


class TrainingTask(Continuable):
    """Minimise the validation loss of a network trained with ``inner_steps`` SGD steps (or, with a fidelity,
    ``epochs`` passes over the training set).

    Attributes:
        inner_steps: N, the SGD steps per evaluation; None until resolved when built with ``auto``.
        batch_size: minibatch size of SGD.
    """

    direction = Direction.MINIMIZE
    optimum = None
    bound = None

    def __init__(self, name: str, split: Split, arch: str, inner_steps: int | None, batch_size: int = 32,
                 tune: tuple[str, ...] = ("lr",), fixed: dict[str, float] | None = None, max_loss: float = 10.0,
                 seed: int = 0, epochs: tuple[int, int] | None = None, capacity: int = 256,
                 device: str = "cpu") -> None:
        if arch not in ARCHITECTURES:
            raise ValueError(f"architecture '{arch}' is unknown; allowed: {', '.join(ARCHITECTURES)}")
        self.name, self.split, self.arch, self.seed = name, split, arch, seed
        self.inner_steps = inner_steps
        self.batch_size, self.max_loss = batch_size, max_loss
        self.tune = tuple(tune)
        self.space = SearchSpace(tuple(RANGES[k] for k in self.tune))
        self.fixed = {"lr": 0.1, "momentum": 0.0, "weight_decay": 0.0, **(fixed or {})}
        if not self.fixed.get("width"):
            self.fixed["width"] = DEFAULT_WIDTH[arch]
        self.device = torch.device(resolve_device(device))
        if self.device.type != "cpu":  # the data lives where the network trains (the split is small)
            split = Split(*(getattr(split, f.name).to(self.device) for f in dataclasses.fields(split)))
            self.split = split
        self.side = int(split.x_train.shape[-1])
        self.fidelity = None if epochs is None else Fidelity("epochs", epochs[0], epochs[1], integer=True)
        self.states = TrialStates(capacity)

    def resolve_inner_steps(self, steps: int) -> None:
        """Set N for a task built with ``inner_steps=auto`` (called by the bbo algorithms)."""
        if steps < 1:
            raise ValueError(f"inner steps must be >= 1, got {steps}")
        self.inner_steps = int(steps)

    def hyperparameters(self, config: dict[str, Any]) -> dict[str, float]:
        """The full set (tuned values from ``config``, the rest fixed)."""
        return {**self.fixed, **{k: config[k] for k in self.tune}}

    def train(self, hp: dict[str, float], round: int) -> nn.Module:
        """Run ``inner_steps`` SGD steps from an initialisation seeded by ``(seed, round)``."""
        if self.inner_steps is None:
            raise ValueError(f"task '{self.name}' has inner_steps=auto, which only algo=bbo_ei|bbo_ucb resolve "
                             "(N = algo.steps_per_round * budget.rounds); set task.inner_steps=<int> otherwise")
        seed = self.seed * 1_000_003 + round
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = ARCHITECTURES[self.arch](self.side, int(hp["width"])).to(self.device)
        opt = torch.optim.SGD(net.parameters(), lr=hp["lr"], momentum=hp["momentum"],
                              weight_decay=hp["weight_decay"])
        g = torch.Generator().manual_seed(seed)
        n = self.split.x_train.shape[0]
        batches = torch.randint(0, n, (self.inner_steps, self.batch_size), generator=g).to(self.device)
        net.train()
        for b in batches:
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(self.split.x_train[b]), self.split.y_train[b]).backward()
            opt.step()
        return net

    def _loss_acc(self, net: nn.Module, X: Tensor, y: Tensor) -> tuple[float, float]:
        with torch.no_grad():
            out = net(X)
            return float(F.cross_entropy(out, y)), float((out.argmax(1) == y).double().mean())

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if self.fidelity is not None:
            return self.evaluate_full(config, round=round, observe=observe)
        if not observe:
            return unobserved()
        hp = self.hyperparameters(config)
        net = self.train(hp, round)
        net.eval()
        val_loss, val_acc = self._loss_acc(net, self.split.x_val, self.split.y_val)
        test_loss, test_acc = self._loss_acc(net, self.split.x_test, self.split.y_test)
        diverged = not math.isfinite(val_loss) or val_loss > self.max_loss
        def clip(v: float) -> float:
            return self.max_loss if not math.isfinite(v) or v > self.max_loss else v

        return Evaluation(value=clip(val_loss), cost=float(self.inner_steps),  # type: ignore[arg-type]
                          metrics={"val_accuracy": val_acc, "test_loss": clip(test_loss), "test_accuracy": test_acc,
                                   "diverged": float(diverged), "inner_steps": float(self.inner_steps)})  # type: ignore[arg-type]


    # -- the fidelity: epochs, continued (hpoflow.tasks.continuation) --------------------------------------------
    def _clip(self, v: float) -> float:
        return self.max_loss if not math.isfinite(v) or v > self.max_loss else v

    def fresh_state(self, config: dict[str, Any], seed: int) -> dict[str, Any]:
        """A network initialised from ``seed`` and its SGD optimiser (momentum buffers are state too)."""
        hp = self.hyperparameters(config)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = ARCHITECTURES[self.arch](self.side, int(hp["width"])).to(self.device)
        opt = torch.optim.SGD(net.parameters(), lr=hp["lr"], momentum=hp["momentum"],
                              weight_decay=hp["weight_decay"])
        return {"net": net, "opt": opt, "seed": seed}

    def advance(self, state: Any, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """Epochs ``start + 1 .. stop``, each a pass in the order seeded by (trial seed, epoch); the validation
        loss (clipped at ``max_loss``) after each."""
        net, opt = state["net"], state["opt"]
        n = self.split.x_train.shape[0]
        curve = []
        for epoch in range(int(start), int(stop)):
            g = torch.Generator().manual_seed(state["seed"] * 1_000_003 + epoch)
            net.train()
            for b in torch.randperm(n, generator=g).to(self.device).split(self.batch_size):
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(net(self.split.x_train[b]), self.split.y_train[b]).backward()
                opt.step()
            net.eval()
            curve.append([float(epoch + 1), self._clip(self._loss_acc(net, self.split.x_val, self.split.y_val)[0])])
        return curve

    def score(self, state: Any, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        net = state["net"]
        val_loss, val_acc = self._loss_acc(net, self.split.x_val, self.split.y_val)
        test_loss, test_acc = self._loss_acc(net, self.split.x_test, self.split.y_test)
        diverged = not math.isfinite(val_loss) or val_loss > self.max_loss
        return self._clip(val_loss), {"val_accuracy": val_acc, "test_loss": self._clip(test_loss),
                                      "test_accuracy": test_acc, "diverged": float(diverged)}


def _inner(inner_steps: Any, steps_scale: float = 1.0) -> int | None:
    """N for the task: ``inner_steps`` times a study's shrink factor (at least 1); None for ``auto``."""
    return None if inner_steps == "auto" else max(1, round(int(inner_steps) * steps_scale))


def _fixed(lr: float, momentum: float, weight_decay: float, width: int) -> dict[str, float]:
    return {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "width": width}


def make_digits_task(name: str, inner_steps: Any = 500, batch_size: int = 32, tune: Any = ("lr",),
                     lr: float = 0.1, momentum: float = 0.0, weight_decay: float = 0.0, width: int = 0,
                     val_fraction: float = 0.2, test_fraction: float = 0.2, max_loss: float = 10.0,
                     path: str = "", steps_scale: float = 1.0, fidelity: bool = False, epochs: int = 27,
                     min_epochs: int = 1, device: str = "cpu", seed: int = 0) -> TrainingTask:
    """Registry factory of digits_cnn / digits_mlp (the architecture is the name's suffix)."""
    if path:
        raise ValueError(f"task.path={path!r} is not read by {name}: it trains on scikit-learn's bundled digits "
                         "(leave task.path empty; mnist_cnn is the task that reads a local folder)")
    split = load_digits_split(seed, val_fraction, test_fraction)
    return TrainingTask(name, split, name.rsplit("_", 1)[1], _inner(inner_steps, steps_scale), batch_size, tuple(tune),
                        _fixed(lr, momentum, weight_decay, width), max_loss, seed,
                        epochs=(min_epochs, epochs) if fidelity else None, device=device)


def make_mnist_task(name: str, inner_steps: Any = 500, batch_size: int = 32, tune: Any = ("lr",),
                    lr: float = 0.1, momentum: float = 0.0, weight_decay: float = 0.0, width: int = 0,
                    val_fraction: float = 0.2, test_fraction: float = 0.2, max_loss: float = 10.0,
                    path: str = "", steps_scale: float = 1.0, fidelity: bool = False, epochs: int = 27,
                    min_epochs: int = 1, device: str = "cpu", seed: int = 0) -> TrainingTask:
    """Registry factory of mnist_cnn (reads ``path``; test_fraction is unused: MNIST has its own test set)."""
    split = load_mnist_split(path, seed, val_fraction)
    return TrainingTask(name, split, "cnn", _inner(inner_steps, steps_scale), batch_size, tuple(tune),
                        _fixed(lr, momentum, weight_decay, width), max_loss, seed,
                        epochs=(min_epochs, epochs) if fidelity else None, device=device)
