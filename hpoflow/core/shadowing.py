"""A folder named ``hpoflow`` in the working folder (typically the clone itself, run from its parent) shadows the
installed package: ``import hpoflow`` finds the folder, which has no ``__init__.py``, as an empty namespace
package, and a script then fails with ``AttributeError: module 'hpoflow' has no attribute 'minimize'``.

The command-line entry points run anyway (an editable install still finds their modules), so they are where the
case is caught: :func:`shadowing_hint` is the one line they print."""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType


def shadowing_hint(module: ModuleType | None = None) -> str | None:
    """One line naming the folder that shadows the package, or None when ``hpoflow`` is the package itself.

    Args:
        module: what ``import hpoflow`` gave (default: ``sys.modules["hpoflow"]``).
    """
    module = sys.modules.get("hpoflow") if module is None else module
    if module is None or getattr(module, "__file__", None) is not None:
        return None  # the package (its __init__.py ran) or not imported
    folders = [str(p) for p in getattr(module, "__path__", [])]
    if not folders:
        return None
    folder = Path(folders[0])
    inner = " (the clone: its package is hpoflow/hpoflow)" if (folder / "hpoflow" / "__init__.py").is_file() else ""
    return (f"note: 'import hpoflow' in {folder.parent} finds the folder {folder}{inner}, not the package (no "
            f"__init__.py), so a script run there fails with \"module 'hpoflow' has no attribute ...\"; run scripts "
            f"from another folder (cd {folder}) or rename that folder")
