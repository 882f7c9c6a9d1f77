"""A suite task trained for real: the replay's check against reality.

``LiveSuiteTask("breast_cancer-gb")`` is ``task=lc_replay task.benchmark=breast_cancer-gb`` with two differences:
its domain is the family's whole search space (the unit cube, not the 1,024 recorded configurations), and every
configuration a method proposes is trained by the recorder's own trainer (``scripts/lc_suite``: the same split,
fidelity and schedule) with a seed of its own. A configuration is trained to the full fidelity the first time it is
asked for (the cosine learning-rate schedule spans all epochs, so a shorter training is the same curve's prefix);
a method sees, and is charged, only the units it asked for, exactly as on the replay. So a study of live runs ranks
methods on real training, which ``scripts/mf_rank_agreement.py`` sets beside the replay's ranking.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from hpoflow.tasks.multi_fidelity import Reached
from hpoflow.tasks.replay import ReplayTask
from scripts.lc_suite import datasets
from scripts.lc_suite.families import FAMILIES, task_seed


class LiveSuiteTask(ReplayTask):
    """A suite task (``<dataset>-<family>``) trained live over its continuous space (module doc)."""

    def __init__(self, benchmark: str, seed: int = 0) -> None:
        super().__init__(benchmark, seed)
        self.name = "lc_live"
        self.dataset, family = benchmark.rsplit("-", 1)
        self.family = FAMILIES[family]
        self.candidates = None  # the whole space: methods draw anywhere, not among the recorded points
        self.optimum = None  # unknown: regret is measured against the best any run found
        self.splits = datasets.load(self.dataset)
        self._trained: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}

    def _key(self, config: dict[str, Any]) -> tuple[Any, ...]:
        return tuple((k, round(float(v), 12)) for k, v in sorted(config.items()))

    def trained(self, config: dict[str, Any]) -> dict[str, np.ndarray]:
        """``config``'s curves (``val_error``, ``test_error``, ``seconds``, each ``[steps]``), trained once."""
        key = self._key(config)
        if key not in self._trained:
            seed = (task_seed(self.benchmark) + 7919 * self.seed + zlib.crc32(repr(key).encode())) % 2**31
            self._trained[key] = train(self.family.name, config, self.splits, self.family.steps, seed)
        return self._trained[key]

    def advance(self, state: Reached, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """The trained values after units ``start + 1 .. stop``."""
        values = self.trained(config)["val_error"]
        state.level = stop
        return [[float(r), float(values[r - 1])] for r in range(int(start) + 1, int(stop) + 1)]

    def score(self, state: Reached, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        c = self.trained(config)
        last = int(curve[-1][0])
        return curve[-1][1], {"elapsed": float(sum(c["seconds"][int(r) - 1] for r, _ in curve)),
                              "test_value": float(c["test_error"][last - 1])}


def train(family: str, config: dict[str, Any], sp: datasets.Splits, steps: int, seed: int) -> dict[str, np.ndarray]:
    """One configuration of ``family`` trained for ``steps`` steps, as ``scripts/record_suite.py`` records it."""
    if family == "gb":
        from scripts.lc_suite.boosting import curves

        return curves(config, sp.x_train, sp.y_train, sp.x_val, sp.y_val, sp.x_test, sp.y_test, sp.classes, steps,
                      seed)
    import torch

    from scripts.lc_suite.batched_mlp import MLPConfig
    from scripts.lc_suite.batched_mlp import train as train_mlp

    net = MLPConfig(int(config["batch_size"]), config["learning_rate"], config["momentum"], config["weight_decay"],
                    int(config.get("num_layers", 0)), int(config.get("max_units", 1)), config.get("max_dropout", 0.0))
    t = torch.from_numpy
    cv = train_mlp([net], t(sp.x_train), t(sp.y_train), t(sp.x_val), t(sp.y_val), t(sp.x_test), t(sp.y_test),
                   sp.classes, steps, seed)
    return {"val_error": cv.val_error[0].numpy(), "test_error": cv.test_error[0].numpy(),
            "seconds": cv.seconds[0].numpy()}
