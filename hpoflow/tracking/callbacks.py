"""Hydra callbacks: create the MLflow store once before multirun jobs fan out."""
from __future__ import annotations

from typing import Any

from hydra.experimental.callback import Callback


class InitStoreCallback(Callback):
    """Create the SQLite schema before the first job, so parallel jobs never race to create it."""

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        tracking = config.get("tracking") or {}
        if not tracking.get("enabled", True):
            return
        from hpoflow.tracking.store import default_uri, init_store

        init_store(tracking.get("uri") or default_uri())
