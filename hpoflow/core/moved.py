"""Old import paths keep working: ``hpoflow.records`` (before the layer folders) is ``hpoflow.core.records`` now.

A meta-path finder maps each old module name to its new module, the same module object (so classes stay
identical), with a ``DeprecationWarning`` naming the new path; ``python -m hpoflow.runs`` runs the new module.
Written by hand because the standard library has no module-alias mechanism and 36 shim files would fill the
top-level folder the move emptied.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

MOVED: dict[str, str] = {  # old name -> new name (hpoflow. prefix implied)
    "space": "core.space", "records": "core.records", "loop": "runner.loop", "signals": "core.signals",
    "identity": "config.identity", "threads": "core.threads", "hardware": "core.hardware",
    "config_values": "core.config_values", "checkpoint": "core.checkpoint", "tracking": "store",
    "tracking.base": "core.tracker", "acquisition_config": "acquisition.config", "schema": "config.schema",
    "registry": "config.registry", "validation": "config.validation",
    "compose": "config.compose", "app": "config.settings", "tracking.store": "store.backend",
    "tracking.params": "store.params", "tracking.lease": "store.lease", "tracking.health": "store.health",
    "tracking.mlflow_tracker": "store.mlflow_tracker", "tracking.callbacks": "store.callbacks",
    "resume": "store.resume", "resume_guard": "store.resume_guard", "runs": "store.runs", "sweeps": "store.sweeps",
    "build": "runner.build", "progress": "runner.progress", "surrogate_plot": "surrogates.plot",
    "cli_errors": "cli.errors", "cli_help": "cli.help", "cli_outputs": "cli.outputs", "docs": "cli.docs",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finder and loader for the names in :data:`MOVED`."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = _new_name(fullname)
        if new is None:
            return None
        found = importlib.util.find_spec(new)
        if found is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, origin=found.origin,  # sys.argv[0] under -m
                                               is_package=found.submodule_search_locations is not None)
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = _new_name(spec.name)
        assert new is not None
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:  # the new module is already executed
        return None

    def get_code(self, fullname: str) -> CodeType | None:  # python -m <old name>
        new = _new_name(fullname)
        spec = importlib.util.find_spec(new) if new else None
        loader = getattr(spec, "loader", None)
        return loader.get_code(new) if loader is not None and new is not None else None  # type: ignore[attr-defined]


def _new_name(fullname: str) -> str | None:
    if not fullname.startswith("hpoflow."):
        return None
    new = MOVED.get(fullname.removeprefix("hpoflow."))
    return None if new is None else f"hpoflow.{new}"


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModules())
