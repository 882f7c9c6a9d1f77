"""The Tracker contract and the tracker that records nothing."""
from __future__ import annotations

from typing import Any, Protocol

from hpoflow.core.records import Record, RunStatus


class Tracker(Protocol):
    """Receives a run's config, its rounds, and how it ended."""

    def start(self, params: dict[str, Any], tags: dict[str, str]) -> None: ...

    def log(self, record: Record, metrics: dict[str, float]) -> None:
        """Buffer one round's metrics (step = record.round); implementations flush in batches."""

    def finish(self, status: RunStatus, summary: dict[str, Any], error: str | None = None) -> None:
        """Flush everything, write artifacts, and set the run's final status.

        A tracker may also define ``fence() -> None``: the loop calls it before every checkpoint write, and it
        raises if this process may no longer write the run (another process took it over).
        """


class NullTracker:
    """``tracking.enabled=false``: keeps nothing."""

    run_id: str | None = None

    def start(self, params: dict[str, Any], tags: dict[str, str]) -> None:
        pass

    def log(self, record: Record, metrics: dict[str, float]) -> None:
        pass

    def finish(self, status: RunStatus, summary: dict[str, Any], error: str | None = None) -> None:
        pass

    def fence(self) -> None:
        pass
