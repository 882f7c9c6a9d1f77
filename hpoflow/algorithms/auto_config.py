"""Config of ``algo=auto``, the recommended default (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm


@dataclass(frozen=True)
class AutoConfig:
    """Picks one of our algorithms by the space's types, its dimension and the budget
    (``hpoflow.algorithms.auto_rule``, which says what each branch rests on). No settings of its own: its pick
    runs at its defaults plus the rule's settings (``discrete=snap``), so ``algo=<pick>`` reproduces a run."""

    name: str = "auto"


BUILTINS = [
    algorithm("auto", "hpoflow.algorithms.auto:Auto", AutoConfig,
              "the recommended default: picks gp_ei, gp_ei with discrete=snap, or turbo by the space's types and "
              "the budget (tags auto.choice, auto.reason)"),
]
