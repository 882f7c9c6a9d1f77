"""Config of the SGD-training tasks digits_cnn, digits_mlp, mnist_cnn (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List  # noqa: UP035 - OmegaConf reads these annotations

from hpoflow.core.component import task

TUNABLE = ("lr", "momentum", "weight_decay", "width")


@dataclass(frozen=True)
class TrainingConfig:
    """Train a small network with ``inner_steps`` SGD steps; the objective is the validation loss.

    ``tune`` lists the hyperparameters searched (``'task.tune=[lr,momentum]'``); the others stay at the
    fixed values below. Ranges: lr in [1e-3, 1] (log), momentum in [0, 0.95], weight_decay in
    [1e-6, 1e-1] (log), width in [2, 32] (log; conv channels or hidden units).
    ``inner_steps=auto`` lets a bbo algorithm set N = algo.steps_per_round * budget.rounds.
    ``fidelity=true`` trains in epochs instead (passes over the training set; ``inner_steps`` is then not read):
    the fidelity ``epochs`` in [min_epochs, epochs], continued per trial by multi-fidelity methods.
    """

    name: str = "digits_cnn"
    inner_steps: Any = 500            # SGD steps per evaluation (int), or "auto"
    batch_size: int = 32
    tune: List[str] = field(default_factory=lambda: ["lr"])  # noqa: UP006
    lr: float = 0.1
    momentum: float = 0.0
    weight_decay: float = 0.0
    width: int = 0                    # conv channels (cnn) or hidden units (mlp); 0: 8 for cnn, 32 for mlp
    val_fraction: float = 0.2
    test_fraction: float = 0.2
    max_loss: float = 10.0            # a diverged run (non-finite or larger loss) reports this value
    path: str = ""                    # mnist_cnn: folder holding torchvision's MNIST/raw files
    steps_scale: float = 1.0          # N = round(inner_steps * steps_scale): a study's shrink of the paper's N
    fidelity: bool = False            # opt-in: epochs as the fidelity (without it, evaluations are as before)
    epochs: int = 27                  # full fidelity (with fidelity=true): 27 = 3^3, four rungs at eta = 3
    min_epochs: int = 1               # lowest fidelity (with fidelity=true)
    device: str = "cpu"               # cpu | cuda | auto (cuda where torch sees a GPU): where the network trains

    def __post_init__(self) -> None:
        if self.device not in ("cpu", "cuda", "auto"):
            raise ValueError(f"task.device='{self.device}' is unknown; allowed: cpu, cuda, auto")
        if self.inner_steps != "auto" and (isinstance(self.inner_steps, bool) or not isinstance(self.inner_steps, int)
                                           or self.inner_steps < 1):
            raise ValueError(f"task.inner_steps={self.inner_steps!r} must be a positive integer or auto")
        if self.batch_size < 1:
            raise ValueError(f"task.batch_size={self.batch_size} must be >= 1")
        unknown = [k for k in self.tune if k not in TUNABLE]
        if unknown or not self.tune or len(set(self.tune)) != len(self.tune):
            raise ValueError(f"task.tune={list(self.tune)} must be a non-empty list of distinct names from "
                             f"{', '.join(TUNABLE)}")
        if self.lr <= 0 or not 0 <= self.momentum < 1 or self.weight_decay < 0:
            raise ValueError(f"task.lr={self.lr}, task.momentum={self.momentum}, task.weight_decay="
                             f"{self.weight_decay} must satisfy lr > 0, 0 <= momentum < 1, weight_decay >= 0")
        if self.width < 0:
            raise ValueError(f"task.width={self.width} must be >= 1 (or 0 for the architecture's default)")
        if not (
            0 < self.val_fraction < 1 and 0 < self.test_fraction < 1 and self.val_fraction + self.test_fraction < 1
        ):
            raise ValueError(f"task.val_fraction={self.val_fraction} and task.test_fraction={self.test_fraction} "
                             "must be in (0, 1) with a sum below 1")
        if not 0 < self.steps_scale <= 1e6:
            raise ValueError(f"task.steps_scale={self.steps_scale} must be in (0, 1e6]")
        if self.max_loss <= 0:
            raise ValueError(f"task.max_loss={self.max_loss} must be > 0")
        if not isinstance(self.fidelity, bool):
            raise ValueError(f"task.fidelity={self.fidelity!r} must be true or false")
        for key in ("epochs", "min_epochs"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"task.{key}={value!r} must be a whole number >= 1")
        if self.min_epochs > self.epochs:
            raise ValueError(f"task.min_epochs={self.min_epochs} > task.epochs={self.epochs}; allowed: "
                             "1 <= min_epochs <= epochs")


_TRAIN = "hpoflow.tasks.training"
BUILTINS = [
    task("digits_cnn", f"{_TRAIN}:make_digits_task", TrainingConfig,
         "train a 2-conv + 1-FC net with task.inner_steps SGD steps on sklearn digits; minimise val loss; "
         "task.fidelity=true: epochs as a fidelity",
         smoke=("task.inner_steps=20",)),
    task("digits_mlp", f"{_TRAIN}:make_digits_task", TrainingConfig,
         "train a one-hidden-layer MLP with task.inner_steps SGD steps on sklearn digits; minimise val loss; "
         "task.fidelity=true: epochs as a fidelity",
         smoke=("task.inner_steps=20",)),
    task("mnist_cnn", f"{_TRAIN}:make_mnist_task", TrainingConfig,
         "the digits_cnn task on MNIST read from task.path (torchvision; never downloads); task.fidelity=true: epochs",
         smoke=("task.inner_steps=20", "task.path=data/mnist")),
]
