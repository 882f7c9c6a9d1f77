"""Arithmetic the YAML configs may need: ``${hpoflow.times:20,${task.dim}}`` is 20 x the task's dimension.

COCO-style budgets are stated per dimension (``20 x d`` evaluations); OmegaConf has no arithmetic of its own, and
``oc.eval``-style resolvers would run arbitrary code from a config, so this one multiplies integers and nothing else.
"""
from __future__ import annotations

TIMES = "hpoflow.times"


def times(*factors: object) -> int:
    """The product of integer factors (``"20"`` and ``20`` alike).

    Raises:
        ValueError: a factor that is not an integer (one line, naming it).
    """
    out = 1
    for f in factors:
        if isinstance(f, bool) or not str(f).strip().lstrip("-").isdigit():
            raise ValueError(f"${{{TIMES}:...}} multiplies integers; got {f!r}")
        out *= int(str(f).strip())
    return out


def register() -> None:
    """Register ``${hpoflow.times:a,b,...}`` with OmegaConf."""
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver(TIMES, times, replace=True)
