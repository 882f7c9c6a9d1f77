"""Acquisition functions (EI, UCB, PI) and their maximiser over the unit cube; ``config`` holds the optimiser's
settings. Imports only :mod:`hpoflow.core`; models come in through their posterior, as in BoTorch."""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:  # hpoflow.acquisition.<function> from before the package split
    from hpoflow.acquisition import functions

    return getattr(functions, name)
