"""hpoflow: declarative hyperparameter-optimisation experiments, and the same loop as a Python library.

``minimize(fn, space)`` / ``maximize`` tune a function, ``Study(space)`` gives ask/tell for a training loop
you own, ``make_algorithm(name, space)`` builds any registered algorithm, ``run(task, algorithm, ...)`` is the
common loop itself. Imported on first use, so ``import hpoflow`` (and the CLI's ``--help``) stays fast.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["ConfigError", "Evaluation", "Result", "SearchSpace", "Study", "Trial", "make_algorithm", "maximize",
           "minimize", "run", "run_config"]

_EXPORTS = {"minimize": "hpoflow.api", "maximize": "hpoflow.api", "make_algorithm": "hpoflow.api",
            "run_config": "hpoflow.api", "Result": "hpoflow.api", "Study": "hpoflow.study", "Trial": "hpoflow.study",
            "ConfigError": "hpoflow.app", "Evaluation": "hpoflow.records", "SearchSpace": "hpoflow.space",
            "run": "hpoflow.loop"}

if TYPE_CHECKING:
    from hpoflow.api import Result, make_algorithm, maximize, minimize, run_config
    from hpoflow.app import ConfigError
    from hpoflow.loop import run
    from hpoflow.records import Evaluation
    from hpoflow.space import SearchSpace
    from hpoflow.study import Study, Trial


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hpoflow' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
