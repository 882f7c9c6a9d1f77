"""What a multi-fidelity task keeps per configuration so that a promotion continues training instead of starting
again: a bounded map ``config id -> state`` (least recently used dropped first; a dropped trial is retrained from
scratch and charged in full, never wrongly continued)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["TrialStates"]

DEFAULT_CAPACITY = 256  # trials kept; Hyperband's largest bracket at eta=3 and 5 rungs starts 81


class TrialStates:
    """A least-recently-used map of trial states, at most ``capacity`` entries (``None`` ids are never kept)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"capacity={capacity} must be >= 1")
        self.capacity = capacity
        self._states: OrderedDict[int, Any] = OrderedDict()

    def get(self, config_id: int | None) -> Any:
        """The state kept for ``config_id``, or None."""
        if config_id is None or config_id not in self._states:
            return None
        self._states.move_to_end(config_id)
        return self._states[config_id]

    def put(self, config_id: int | None, state: Any) -> None:
        if config_id is None:
            return
        self._states[config_id] = state
        self._states.move_to_end(config_id)
        while len(self._states) > self.capacity:
            self._states.popitem(last=False)

    def __len__(self) -> int:
        return len(self._states)
