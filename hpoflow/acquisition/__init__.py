"""Acquisition functions (EI, UCB, PI) and their maximiser over the unit cube; ``config`` holds the optimiser's
settings. Models come in through their posterior, as in BoTorch.

May import: :mod:`hpoflow.core` only."""
from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:  # hpoflow.acquisition.<function> from before the package split
    if name.startswith("__") or name in ("functions", "config"):
        raise AttributeError(name)
    return getattr(importlib.import_module("hpoflow.acquisition.functions"), name)
