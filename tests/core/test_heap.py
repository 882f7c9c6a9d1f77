"""The CLI's gc.freeze of its imports (issue 42): frozen only when modules were imported since the last call."""
from __future__ import annotations

import gc
import sys
import types

from hpoflow.core import heap


def test_freeze_imports_freezes_once_per_batch_of_new_modules(monkeypatch):
    try:
        monkeypatch.setattr(heap, "_FROZEN_AT", [0])
        heap.freeze_imports()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        garbage = [[] for _ in range(1000)]  # new objects, no new module: nothing is frozen
        heap.freeze_imports()
        assert gc.get_freeze_count() == frozen
        monkeypatch.setitem(sys.modules, "hpoflow_test_new_module", types.ModuleType("hpoflow_test_new_module"))
        heap.freeze_imports()  # a module was imported: what is alive now is frozen too
        assert gc.get_freeze_count() >= frozen + len(garbage)
    finally:
        gc.unfreeze()
