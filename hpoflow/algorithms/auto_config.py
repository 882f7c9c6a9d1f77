"""Config of ``algo=auto``, the recommended default (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm

NOISE = ("auto", "noisy", "noiseless")


@dataclass(frozen=True)
class AutoConfig:
    """Picks one of our algorithms by the space, the budget and the noise (``hpoflow.algorithms.auto_rule``)."""

    name: str = "auto"
    noise: str = "auto"              # auto (the task's declared noise, e.g. task.noise_std > 0) | noisy | noiseless

    def __post_init__(self) -> None:
        if self.noise not in NOISE:
            raise ValueError(f"algo.noise='{self.noise}' is unknown; allowed: {', '.join(NOISE)}")


BUILTINS = [
    algorithm("auto", "hpoflow.algorithms.auto:Auto", AutoConfig,
              "the recommended default: picks one of our algorithms by the space's types, dimension, budget and "
              "noise (tags auto.choice, auto.reason)"),
]
