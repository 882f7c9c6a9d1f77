"""Store health: notice a SQLite store that vanished, was replaced or became read-only while a run writes.

SQLite keeps writing into a deleted database file (the open handle still points at the unlinked inode), so
without a check a run whose store was removed ends with exit 0 and nothing saved. :class:`StoreHealth`
holds a descriptor on the database file from the start and, before each write batch and heartbeat, checks
that the path still names that same file and that it is writable. Server stores report their own errors; for them the
check is a no-op.
"""
from __future__ import annotations

import os
from pathlib import Path

from hpoflow.store.backend import held_descriptor, sqlite_path


class StoreLost(RuntimeError):
    """The tracking store vanished, was replaced, or became read-only during the run."""


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the disk is full: SQLite's "database or disk is
    full", an OSError ENOSPC (a checkpoint, an artifact)."""
    import errno

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "database or disk is full" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


class StoreHealth:
    """Checks that a SQLite store is the file it was at the start, and writable (no-op for servers)."""

    def __init__(self, uri: str) -> None:
        self.db: Path | None = sqlite_path(uri)
        self.fd = held_descriptor(self.db) if self.db is not None else None

    def check(self) -> None:
        """Raise StoreLost (one line naming the file) unless the store is still there and writable."""
        if self.db is None:
            return
        try:
            now = os.stat(self.db)
        except OSError:
            raise StoreLost(f"the MLflow store {self.db} vanished during the run") from None
        if self.fd is not None:
            held = os.fstat(self.fd)
            if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
                raise StoreLost(f"the MLflow store {self.db} was replaced by another file during the run")
        if not os.access(self.db, os.W_OK) or not os.access(self.db.parent, os.W_OK | os.X_OK):
            raise StoreLost(f"the MLflow store {self.db} became read-only during the run")
