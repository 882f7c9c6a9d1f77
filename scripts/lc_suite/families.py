"""The suite's model families: each a search space, a fidelity, and a scrambled Sobol design over the space.

- ``mlp``: LCBench's seven hyperparameters (Zimmer, Lindauer and Hutter 2021), with ``max_units`` scaled down from
  LCBench's 64-1,024 to 16-256 so that 14 datasets x 1,024 networks record on two CPU cores; epochs as the fidelity.
- ``linear``: multinomial logistic regression trained by SGD (the same trainer with no hidden layer); epochs.
- ``gb``: scikit-learn's histogram gradient boosting; boosting rounds as the fidelity.

Batch sizes are powers of two (an ordinal choice), so that the networks of one batch size train together.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

BATCH_SIZES = [16, 32, 64, 128, 256, 512]
CONFIGURATIONS = 1024  # a power of two: the scrambled Sobol design keeps its balance properties
STEPS = 30


@dataclass(frozen=True)
class Family:
    """A model family: its ``space`` (``hpoflow.core.space.parse_space`` form) and fidelity (name, steps)."""

    name: str
    space: dict[str, Any]
    fidelity: str
    steps: int


FAMILIES: dict[str, Family] = {
    "mlp": Family("mlp", {
        "batch_size": BATCH_SIZES,
        "learning_rate": {"type": "log", "low": 1e-4, "high": 1e-1},
        "momentum": {"type": "float", "low": 0.1, "high": 0.99},
        "weight_decay": {"type": "log", "low": 1e-5, "high": 1e-1},
        "num_layers": {"type": "int", "low": 1, "high": 5},
        "max_units": {"type": "logint", "low": 16, "high": 256},
        "max_dropout": {"type": "float", "low": 0.0, "high": 1.0},
    }, "epochs", STEPS),
    "linear": Family("linear", {
        "batch_size": BATCH_SIZES,
        "learning_rate": {"type": "log", "low": 1e-4, "high": 1.0},
        "momentum": {"type": "float", "low": 0.1, "high": 0.99},
        "weight_decay": {"type": "log", "low": 1e-6, "high": 1e-1},
    }, "epochs", STEPS),
    "gb": Family("gb", {
        "learning_rate": {"type": "log", "low": 0.01, "high": 1.0},
        "max_leaf_nodes": {"type": "logint", "low": 4, "high": 128},
        "min_samples_leaf": {"type": "logint", "low": 1, "high": 100},
        "l2_regularization": {"type": "log", "low": 1e-6, "high": 10.0},
        "max_features": {"type": "float", "low": 0.1, "high": 1.0},
    }, "boosting_rounds", STEPS),
}


def task_seed(task: str) -> int:
    """A task's seed: a stable hash of its name (the design, the initialisations and the shuffles derive from it)."""
    return zlib.crc32(task.encode()) % (2**31)


def design(family: Family, task: str, n: int = CONFIGURATIONS) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """``n`` configurations of ``family``: scrambled Sobol points ``[n, d]`` in ``[0, 1]^d`` and their decoded
    configurations (the space's own decoding: log scales, rounded integers, ordinal batch sizes)."""
    import torch
    from scipy.stats import qmc

    from hpoflow.core.space import parse_space

    space = parse_space(family.space)
    u = qmc.Sobol(len(space.parameters), scramble=True, seed=task_seed(task)).random(n)
    configs = [space.decode(torch.as_tensor(row, dtype=torch.float64)) for row in u]
    points = np.stack([space.encode(c, torch.float64).numpy() for c in configs])
    return points.astype(np.float32), configs
