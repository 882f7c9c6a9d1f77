"""Store health: notice a SQLite store that vanished, was replaced or became read-only while a run writes.

SQLite keeps writing into a deleted database file (the open handle still points at the unlinked inode), so
without a check a run whose store was removed ends with exit 0 and nothing saved. :class:`StoreHealth`
remembers the database's inode when the run starts and, before each write batch, checks that the same file
is still there and writable. Server stores report their own errors; for them the check is a no-op.
"""
from __future__ import annotations

import os
from pathlib import Path

from hpoflow.tracking.store import sqlite_path


class StoreLost(RuntimeError):
    """The tracking store vanished, was replaced, or became read-only during the run."""


class StoreHealth:
    """Checks that a SQLite store is the file it was at the start, and writable (no-op for servers)."""

    def __init__(self, uri: str) -> None:
        self.db: Path | None = sqlite_path(uri)
        self.inode = self._inode()

    def _inode(self) -> tuple[int, int] | None:
        if self.db is None:
            return None
        try:
            st = os.stat(self.db)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def check(self) -> None:
        """Raise StoreLost (one line naming the file) unless the store is still there and writable."""
        if self.db is None:
            return
        now = self._inode()
        if now is None:
            raise StoreLost(f"the MLflow store {self.db} vanished during the run")
        if self.inode is not None and now != self.inode:
            raise StoreLost(f"the MLflow store {self.db} was replaced by another file during the run")
        if not os.access(self.db, os.W_OK) or not os.access(self.db.parent, os.W_OK | os.X_OK):
            raise StoreLost(f"the MLflow store {self.db} became read-only during the run")
