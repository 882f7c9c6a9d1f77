"""hpoflow: declarative hyperparameter-optimisation experiments, and the same loop as a Python library.

``minimize(fn, space)`` / ``maximize`` tune a function, ``Study(space)`` gives ask/tell for a training loop
you own, ``make_algorithm(name, space)`` builds any registered algorithm (``make_components(overrides)`` a job's
task and algorithm), ``run(task, algorithm, ...)`` is the common loop itself. Imported on first use, so
``import hpoflow`` (and the CLI's ``--help``) stays fast.

Plug-ins find the pieces they subclass here too: ``hpoflow.Task``, ``hpoflow.AskTellAlgorithm``,
``hpoflow.Suggestion``, ``hpoflow.Float`` ... and ``hpoflow.register``. The package is layered, one folder a layer
(see ``docs/architecture.md``): ``core`` < ``tasks | surrogates | acquisition`` < ``algorithms`` < ``config`` <
``store`` < ``runner`` < ``cli | report`` < this API. Import paths from before the layer folders
(``hpoflow.records``, ``hpoflow.registry`` ...) still work, with a ``DeprecationWarning``.
"""
from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING, Any

from hpoflow.core import moved as _moved

# MLflow 3 sends usage telemetry to config.mlflow-telemetry.io from every process that uses it (the driver, each
# Ray or joblib worker): hpoflow's runs send nothing off the machine unless the user sets it back to false.
_os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# Ray's usage statistics likewise (a Ray that hpoflow starts, and its workers, inherit this environment): they
# also probe the cloud metadata addresses (169.254.169.254, metadata.google.internal) to name the provider.
_os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

__version__ = "0.1.0"

_moved.install()

__all__ = ["Algorithm", "AskTellAlgorithm", "Bool", "Budget", "BuildContext", "Categorical", "ConfigError", "Direction",
           "Evaluation", "Failure", "Float", "Int", "ObjectiveFailed", "Result", "SearchSpace", "Study", "Suggestion",
           "Task", "Trial", "make_algorithm", "make_components", "maximize", "minimize", "register",
           "register_algorithm", "register_task", "run", "run_config"]

_EXPORTS = {
    "Budget": "hpoflow.core.budget",
    "minimize": "hpoflow.api",
    "maximize": "hpoflow.api",
    "make_algorithm": "hpoflow.api",
    "run_config": "hpoflow.api",
    "make_components": "hpoflow.api",
    "Result": "hpoflow.api",
    "Study": "hpoflow.study",
    "Trial": "hpoflow.study",
    "ConfigError": "hpoflow.config.settings",
    "Evaluation": "hpoflow.core.records",
    "SearchSpace": "hpoflow.core.space",
    "run": "hpoflow.runner.loop",
    "Task": "hpoflow.tasks.base",
    "Algorithm": "hpoflow.algorithms.base",
    "AskTellAlgorithm": "hpoflow.algorithms.base",
    "BuildContext": "hpoflow.algorithms.base",
    "Suggestion": "hpoflow.core.records",
    "Failure": "hpoflow.core.records",
    "Direction": "hpoflow.core.records",
    "ObjectiveFailed": "hpoflow.core.records",
    "Float": "hpoflow.core.space",
    "Int": "hpoflow.core.space",
    "Categorical": "hpoflow.core.space",
    "Bool": "hpoflow.core.space",
    "register": "hpoflow.config.registry",
    "register_algorithm": "hpoflow.config.registry",
    "register_task": "hpoflow.config.registry",
}

if TYPE_CHECKING:
    from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm, BuildContext
    from hpoflow.api import Result, make_algorithm, make_components, maximize, minimize, run_config
    from hpoflow.config.registry import register, register_algorithm, register_task
    from hpoflow.config.settings import ConfigError
    from hpoflow.core.budget import Budget
    from hpoflow.core.records import Direction, Evaluation, Failure, ObjectiveFailed, Suggestion
    from hpoflow.core.space import Bool, Categorical, Float, Int, SearchSpace
    from hpoflow.runner.loop import run
    from hpoflow.study import Study, Trial
    from hpoflow.tasks.base import Task


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hpoflow' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
