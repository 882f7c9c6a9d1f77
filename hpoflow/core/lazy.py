"""A module imported on first attribute access: ``torch = LazyModule("torch")`` keeps torch (1-2 s to import)
off the path of a run that needs no tensors, in modules that use it only in some functions."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attr)


def is_tensor(obj: Any) -> bool:
    """``isinstance(obj, torch.Tensor)`` without importing torch (nothing is a tensor before it is loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)
