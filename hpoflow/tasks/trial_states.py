"""What a multi-fidelity task keeps per configuration so that a promotion continues training instead of starting
again: a bounded map ``config id -> state`` (least recently used dropped first; a dropped trial is retrained from
scratch and charged in full, never wrongly continued).

With a folder (:meth:`TrialStates.attach`, which the runner calls with ``<checkpoint>.trial_states`` when a run is
checkpointed) every state is also written there, one pickle per trial, and dropped from there with the same bound,
so a run resumed after a crash continues its trials. A :class:`Kept` entry says which level it reached in which
loop round; :meth:`TrialStates.resume` then decides, for a requested level in a round, between continuing,
replaying the round that reached it (the round was lost with the crash: its training is counted once, by the
replay) and training from scratch (a state the resumed run does not know about is never continued).
Pickles are read back from the run's own folder only: the same trust as loading the run's saved models.
"""
from __future__ import annotations

import os
import pickle
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpoflow.core.records import Evaluation

__all__ = ["Kept", "Resume", "TrialStates", "state_folder"]

DEFAULT_CAPACITY = 256  # trials kept; Hyperband's largest bracket at eta=3 and 5 rungs starts 81
_FILE = re.compile(r"^config_(\d+)\.pkl$")


def state_folder(checkpoint_path: str | os.PathLike[str]) -> Path:
    """Where the trial states of the run checkpointed at ``checkpoint_path`` live (``<stem>.trial_states``)."""
    path = Path(checkpoint_path)
    return path.with_name(path.stem + ".trial_states")


@dataclass
class Kept:
    """A trial's state after the evaluation that reached ``level`` in loop round ``round``.

    ``evaluation`` is what that call returned (replayed if a crash lost the round); ``tentative``: read back from
    a folder and newer than the round the run resumed from, so only an exact replay may use it.
    """

    level: float
    round: int
    state: Any
    evaluation: Evaluation | None = None
    tentative: bool = False


@dataclass(frozen=True)
class Resume:
    """Where an evaluation at a requested level starts: ``level`` 0 and ``state`` None (from scratch), the state
    kept at ``level`` (continue), or ``replay`` (return that Evaluation; nothing is trained)."""

    level: float = 0.0
    state: Any = None
    replay: Evaluation | None = None


class TrialStates:
    """A least-recently-used map of trial states, at most ``capacity`` entries (``None`` ids are never kept),
    mirrored in a folder once :meth:`attach` gave one. Thread-safe (thread workers share a task)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, folder: str | os.PathLike[str] | None = None,
                 resumed_round: int = 0) -> None:
        if capacity < 1:
            raise ValueError(f"capacity={capacity} must be >= 1")
        self.capacity = capacity
        self.folder: Path | None = None
        self.resumed_round = 0
        self._states: OrderedDict[int, Any] = OrderedDict()  # id -> state; _DISK when only in the folder
        self._lock = threading.RLock()
        if folder is not None:
            self.attach(folder, resumed_round)

    def __getstate__(self) -> dict[str, Any]:  # a process worker gets a copy of the task: without the lock
        return {k: v for k, v in vars(self).items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.RLock()

    # -- the folder ---------------------------------------------------------------------------------------------
    def attach(self, folder: str | os.PathLike[str], resumed_round: int = 0) -> None:
        """Mirror the states in ``folder``. ``resumed_round`` 0 (a fresh run) empties it; a run resumed after round
        ``k`` adopts the states there (least recently written dropped first), those of rounds after ``k`` only for
        replaying their own round."""
        with self._lock:
            self.folder, self.resumed_round = Path(folder), int(resumed_round)
            self.folder.mkdir(parents=True, exist_ok=True)
            files = sorted(((p.stat().st_mtime_ns, int(m.group(1)), p) for p in self.folder.iterdir()
                            if (m := _FILE.match(p.name))), key=lambda t: (t[0], t[1]))
            for _, config_id, path in files:
                if self.resumed_round <= 0:
                    path.unlink(missing_ok=True)
                elif config_id not in self._states:
                    self._states[config_id] = _DISK
            for config_id, state in list(self._states.items()):  # what this process held before: into the folder
                if state is not _DISK:
                    self._write(config_id, state)
            self._trim()

    def _path(self, config_id: int) -> Path:
        assert self.folder is not None
        return self.folder / f"config_{int(config_id):04d}.pkl"

    def _write(self, config_id: int, state: Any) -> None:
        """Atomically: a crash mid-write leaves the previous state (or none), never a torn file."""
        path = self._path(config_id)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".pkl")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _read(self, config_id: int) -> Any:
        try:
            with self._path(config_id).open("rb") as fh:
                state = pickle.load(fh)  # noqa: S301 - the run's own folder (see the module's docstring)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None  # gone or unreadable: the trial is retrained from scratch
        if isinstance(state, Kept) and state.round > self.resumed_round:
            state.tentative = True
        return state

    def _trim(self) -> None:
        while len(self._states) > self.capacity:
            config_id, _ = self._states.popitem(last=False)
            if self.folder is not None:
                self._path(config_id).unlink(missing_ok=True)

    # -- the map --------------------------------------------------------------------------------------------------
    def get(self, config_id: int | None) -> Any:
        """The state kept for ``config_id``, or None."""
        with self._lock:
            if config_id is None or config_id not in self._states:
                return None
            self._states.move_to_end(config_id)
            state = self._states[config_id]
            if state is _DISK:
                state = self._read(config_id)
                if state is None:
                    del self._states[config_id]
                    return None
                self._states[config_id] = state
            return state

    def put(self, config_id: int | None, state: Any) -> None:
        if config_id is None:
            return
        with self._lock:
            self._states[config_id] = state
            self._states.move_to_end(config_id)
            if self.folder is not None:
                self._write(config_id, state)
            self._trim()

    def take(self, config_id: int | None) -> Any:
        """The state kept for ``config_id`` (or None), no longer held in memory: the caller may change it in place;
        a copy in the folder stays until :meth:`put` or :meth:`drop` (a crash mid-training resumes from it)."""
        with self._lock:
            state = self.get(config_id)
            if state is not None and self.folder is not None:
                self._states[config_id] = _DISK  # type: ignore[index]
            elif state is not None:
                del self._states[config_id]  # type: ignore[arg-type]
            return state

    def drop(self, config_id: int | None) -> None:
        with self._lock:
            if config_id is None:
                return
            self._states.pop(config_id, None)
            if self.folder is not None:
                self._path(config_id).unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, config_id: object) -> bool:
        return config_id in self._states

    # -- the continuation rule ---------------------------------------------------------------------------------
    def resume(self, config_id: int | None, level: float, round: int) -> Resume:
        """Where an evaluation of ``config_id`` at ``level`` in loop round ``round`` starts (see :class:`Resume`).

        Continue only from a state at a lower level that the run knows about; replay a kept evaluation of this very
        (level, round) — the resumed run asks again for the round a crash lost; otherwise train from scratch (and
        forget the state, which a from-scratch evaluation replaces)."""
        with self._lock:
            kept = self.take(config_id)
            if not isinstance(kept, Kept):
                return Resume()
            if kept.level == level and kept.round == round and kept.evaluation is not None:
                kept.tentative = False
                self.put(config_id, kept)
                return Resume(level=level, state=kept.state, replay=kept.evaluation)
            if kept.tentative or not kept.level < level:
                self.drop(config_id)
                return Resume()
            return Resume(level=kept.level, state=kept.state)


class _Disk:
    """Marks an entry held only in the folder (read back on first use)."""

    def __repr__(self) -> str:
        return "<on disk>"

    def __reduce__(self) -> str:
        return "_DISK"  # one marker, also in a process worker's copy


_DISK: Any = _Disk()
