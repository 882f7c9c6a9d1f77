"""hpoflow: declarative hyperparameter-optimisation experiments. ``hpoflow.run(task, algorithm, tracker, budget)``."""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def run(*args: Any, **kwargs: Any) -> Any:
    """The common loop as a library call; see :func:`hpoflow.loop.run`."""
    from hpoflow.loop import run as _run

    return _run(*args, **kwargs)
