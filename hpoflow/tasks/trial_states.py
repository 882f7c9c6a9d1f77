"""What a multi-fidelity task keeps per configuration so that a promotion continues training instead of starting
again: a bounded map ``config id -> state`` (least recently used dropped first; a dropped trial is retrained from
scratch and charged in full, never wrongly continued).

With a folder (``TrialStates.attach``, which the runner calls with ``<checkpoint>.trial_states`` when a run is
checkpointed) the folder holds the states, one pickle per trial, loop round and writing process
(``config_0004_r0000012_l9_<writer>.pkl``), at most ``capacity`` trials: for each trial, the newest state the
checkpoint knows (a round at or before the one it saved: ``commit``) and every newer one. A run resumed after a
crash at round ``k`` so finds, for every trial, the state it had after round ``k`` (continued from there) and the
states of the rounds the crash lost (``Kept``: which level in which round, and what that evaluation returned),
which only the same (level, round) may use: the resumed run replays that evaluation instead of training again, so
every unit is trained and counted once, however far the checkpoint trailed the states (a deferred checkpoint,
``checkpoint_every``, k workers).
``TrialStates.resume`` applies that rule. A state one resumed process did not write and the checkpoint does not
know is never continued. Process workers each hold a copy of the map: the folder is what they share.
Pickles are read back from the run's own folder only: the same trust as loading the run's saved models.
"""
from __future__ import annotations

import os
import pickle
import re
import tempfile
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpoflow.core.records import Evaluation

__all__ = ["Kept", "Resume", "TrialStates", "state_folder"]

DEFAULT_CAPACITY = 256  # trials kept; Hyperband's largest bracket at eta=3 and 5 rungs starts 81
_FILE = re.compile(r"^config_(\d+)_r(\d+)_l([0-9.eE+-]+|nan|inf)_([0-9a-f]{8})\.pkl$")  # trial, round, level, writer
_OLD_FILE = re.compile(r"^config_(\d+)(\.r\d+\.[0-9a-f]{8})?\.pkl$")  # earlier layouts


def state_folder(checkpoint_path: str | os.PathLike[str]) -> Path:
    """Where the trial states of the run checkpointed at ``checkpoint_path`` live (``<stem>.trial_states``)."""
    path = Path(checkpoint_path)
    return path.with_name(path.stem + ".trial_states")


@dataclass
class Kept:
    """A trial's state after the evaluation that reached ``level`` in loop round ``round``.

    ``evaluation`` is what that call returned (replayed if a crash lost the round); ``tentative``: kept only for
    compatibility with states pickled by earlier versions (unused).
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


@dataclass(frozen=True)
class _Version:
    """One state file: the trial's loop round and level, the process that wrote it, its path."""

    round: int
    level: float
    session: str
    path: str


class TrialStates:
    """A least-recently-used map of trial states, at most ``capacity`` trials (``None`` ids are never kept), held in
    a folder once ``attach`` gave one (see the module doc). Thread-safe (thread workers share a task)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, folder: str | os.PathLike[str] | None = None,
                 resumed_round: int = 0) -> None:
        if capacity < 1:
            raise ValueError(f"capacity={capacity} must be >= 1")
        self.capacity = capacity
        self.folder: Path | None = None
        self.resumed_round = 0
        self.committed = 0  # the newest round the checkpoint file holds (older states of a trial are not needed)
        self.session = ""  # who wrote a state: this process (and its process workers), since attach
        self._states: OrderedDict[int, Any] = OrderedDict()  # without a folder: id -> state
        self._held = False  # this map has held a state (it is the copy that evaluates, not a process worker's driver)
        self._told: set[tuple[int, float]] | None = None  # (config id, level) the resumed checkpoint recorded
        self._committed_told: set[tuple[int, float]] | None = None  # ... and the one written last
        self._volatile: dict[int, Kept] = {}  # in a folder: the states pickle could not write (this process only)
        self._lock = threading.RLock()
        if folder is not None:
            self.attach(folder, resumed_round)

    def __getstate__(self) -> dict[str, Any]:  # a process worker gets a copy of the task: without the lock
        return {k: v for k, v in vars(self).items() if k not in ("_lock", "_volatile")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.RLock()
        self._volatile = {}

    # -- the folder ---------------------------------------------------------------------------------------------
    def attach(self, folder: str | os.PathLike[str], resumed_round: int = 0,
               told: set[tuple[int, float]] | None = None) -> None:
        """Keep the states in ``folder``. ``resumed_round`` 0 (a fresh run) empties it; a run resumed after round
        ``k`` adopts the states there: those the checkpoint knows to continue (``told``: the (config id, level)
        pairs of its recorded rounds; without it, the states of rounds up to ``k``), the others only to replay
        the same evaluation."""
        with self._lock:
            self.folder, self.resumed_round = Path(folder), int(resumed_round)
            self.committed, self.session = self.resumed_round, uuid.uuid4().hex[:8]
            self._told = None if told is None else set(told)
            self._committed_told = self._told
            self.folder.mkdir(parents=True, exist_ok=True)
            for entry in os.scandir(self.folder):
                if _OLD_FILE.match(entry.name) or (self.resumed_round <= 0 and _FILE.match(entry.name)):
                    Path(entry.path).unlink(missing_ok=True)
            held, self._states = self._states, OrderedDict()
            for config_id, state in held.items():  # what this process held before: into the folder
                self._write(config_id, state)
            self._trim()

    def commit(self, round: int, told: set[tuple[int, float]] | None = None) -> None:
        """The checkpoint file now holds round ``round`` (and ``told``, its recorded (config id, level) pairs):
        each trial's states older than the newest one it knows go (no resume starts before it)."""
        with self._lock:
            self.committed = max(self.committed, int(round))
            if told is not None:
                self._committed_told = set(told)
            if self.folder is not None:
                for config_id in self._scan():
                    self._prune(config_id)

    def _path(self, config_id: int, round: int, level: float, session: str | None = None) -> Path:
        assert self.folder is not None
        return self.folder / f"config_{int(config_id):04d}_r{int(round):07d}_l{float(level):.17g}_" \
                             f"{session or self.session}.pkl"

    def _scan(self) -> dict[int, list[_Version]]:
        """``config id -> its versions`` in the folder, oldest round first."""
        assert self.folder is not None
        found: dict[int, list[_Version]] = {}
        for entry in os.scandir(self.folder):
            if m := _FILE.match(entry.name):
                found.setdefault(int(m.group(1)), []).append(
                    _Version(int(m.group(2)), float(m.group(3)), m.group(4), entry.path))
        return {k: sorted(v, key=lambda x: x.round) for k, v in found.items()}

    def _versions(self, config_id: int) -> list[_Version]:
        assert self.folder is not None
        prefix = f"config_{int(config_id):04d}_r"
        out = [_Version(int(m.group(2)), float(m.group(3)), m.group(4), entry.path)
               for entry in os.scandir(self.folder) if entry.name.startswith(prefix) and (m := _FILE.match(entry.name))]
        return sorted(out, key=lambda x: x.round)

    def _write(self, config_id: int, state: Any) -> _Version:
        """Atomically (a crash mid-write leaves the previous state or none, never a torn file)."""
        round, level = (int(state.round), float(state.level)) if isinstance(state, Kept) else (0, 0.0)
        path = self._path(config_id, round, level)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".pkl")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        for v in self._versions(config_id):  # one file per (trial, round): another writer's goes
            if v.round == round and v.path != str(path):
                Path(v.path).unlink(missing_ok=True)
        return _Version(round, level, self.session, str(path))

    @staticmethod
    def _read(version: _Version) -> Any:
        """The state of a file, or None (gone or unreadable: the trial is retrained from scratch)."""
        try:
            with open(version.path, "rb") as fh:
                return pickle.load(fh)  # noqa: S301 - the run's own folder (see the module's docstring)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            return None

    def _known(self, config_id: int, v: _Version) -> bool:
        """A state this process may continue: it wrote (or replayed) it, or the checkpoint it resumed from knows it."""
        if v.session == self.session:
            return True
        return (config_id, v.level) in self._told if self._told is not None else v.round <= self.resumed_round

    def _committed(self, config_id: int, v: _Version) -> bool:
        """A state the checkpoint file now holds (what a resume from it continues)."""
        told = self._committed_told
        return (config_id, v.level) in told if told is not None else v.round <= self.committed

    def _prune(self, config_id: int, keep: str | None = None) -> None:
        """Drop the states no resume needs: below the newest one the checkpoint file holds."""
        versions = self._versions(config_id)
        held = [v for v in versions if self._committed(config_id, v)]
        if not held:
            return
        base = max(held, key=lambda v: (v.level, v.round))
        for v in versions:
            if v.level < base.level and v.path != keep and self._known(config_id, v):
                Path(v.path).unlink(missing_ok=True)

    def _trim(self) -> None:
        if self.folder is None:
            while len(self._states) > self.capacity:
                self._states.popitem(last=False)
            return
        found = self._scan()
        if len(found) <= self.capacity:
            return

        def newest(config_id: int) -> int:
            try:
                return max(Path(v.path).stat().st_mtime_ns for v in found[config_id])
            except OSError:
                return 0

        for config_id in sorted(found, key=lambda c: (newest(c), c))[:len(found) - self.capacity]:
            self.drop(config_id)

    # -- the map --------------------------------------------------------------------------------------------------
    def get(self, config_id: int | None) -> Any:
        """The newest state kept for ``config_id`` that this process may continue, or None."""
        with self._lock:
            if config_id is None:
                return None
            if self.folder is None:
                if config_id not in self._states:
                    return None
                self._states.move_to_end(config_id)
                return self._states[config_id]
            known = [v for v in self._versions(config_id) if self._known(config_id, v)]
            for v in sorted(known, key=lambda v: (v.level, v.round), reverse=True):
                if (state := self._read(v)) is not None:
                    held = self._volatile.get(config_id)
                    if isinstance(state, Kept) and state.state is None and held is not None \
                            and (held.level, held.round) == (state.level, state.round):
                        return held
                    return state
            return None

    def put(self, config_id: int | None, state: Any) -> None:
        """Keep ``state`` as ``config_id``'s newest; in a folder, the states of rounds this process did not write
        and the checkpoint does not know go (the resumed run took another way)."""
        if config_id is None:
            return
        with self._lock:
            self._held = True
            if self.folder is None:
                self._states[config_id] = state
                self._states.move_to_end(config_id)
            else:
                self._volatile.pop(config_id, None)
                try:
                    written = self._write(config_id, state)
                except (pickle.PicklingError, TypeError, AttributeError):  # a state pickle cannot write
                    if not isinstance(state, Kept):
                        raise
                    # on disk with its evaluation only (a resume retrains the trial from scratch); in memory here
                    written = self._write(config_id, Kept(state.level, state.round, None, state.evaluation))
                    self._volatile[config_id] = state
                    while len(self._volatile) > self.capacity:
                        self._volatile.pop(next(iter(self._volatile)))
                for v in self._versions(config_id):  # what the resumed run did not take up: it went another way
                    if not self._known(config_id, v):
                        Path(v.path).unlink(missing_ok=True)
                self._prune(config_id, keep=written.path)
            self._trim()

    def take(self, config_id: int | None) -> Any:
        """The state kept for ``config_id`` (or None), no longer held in memory: the caller may change it in place
        (in a folder, the copy there stays: a crash mid-training resumes from it)."""
        with self._lock:
            state = self.get(config_id)
            if state is not None and self.folder is None:
                del self._states[config_id]  # type: ignore[arg-type]
            return state

    def drop(self, config_id: int | None) -> None:
        with self._lock:
            if config_id is None:
                return
            self._states.pop(config_id, None)
            self._volatile.pop(config_id, None)
            if self.folder is not None:
                for v in self._versions(config_id):
                    Path(v.path).unlink(missing_ok=True)

    def may_continue(self, config_id: int) -> bool | None:
        """Whether an evaluation of ``config_id`` could continue a kept state (what it will cost): False when none
        is kept (never trained, evicted by ``capacity``, lost with a failed evaluation), None when this map cannot
        tell (a process workers' driver without a folder: the workers hold the states)."""
        with self._lock:
            if self.folder is not None:
                return bool(self._versions(config_id))
            if not getattr(self, "_held", False):
                return None
            return config_id in self._states

    def __len__(self) -> int:
        return len(self._states) if self.folder is None else len(self._scan())

    def __contains__(self, config_id: object) -> bool:
        if self.folder is None or not isinstance(config_id, int):
            return config_id in self._states
        return bool(self._versions(config_id))

    # -- the continuation rule ---------------------------------------------------------------------------------
    def resume(self, config_id: int | None, level: float, round: int) -> Resume:
        """Where an evaluation of ``config_id`` at ``level`` in loop round ``round`` starts (see ``Resume``).

        Replay a kept evaluation of this very (level, round): the resumed run asks again for a round a crash
        lost. Otherwise continue from the newest state this process may continue (see the module doc), if it is
        at a lower level and older than ``round``; otherwise train from scratch."""
        with self._lock:
            if config_id is None:
                return Resume()
            if self.folder is None:
                return self._resume_in_memory(config_id, level, round)
            versions = self._versions(config_id)
            for v in versions:  # this very evaluation, kept: its own (level, round), or lost with a crash
                if v.level != level or (v.round != round and self._known(config_id, v)):
                    continue
                kept = self._read(v)
                if isinstance(kept, Kept) and kept.evaluation is not None:
                    if v.session != self.session:  # adopted: this process may continue it from now on
                        os.replace(v.path, self._path(config_id, v.round, v.level))
                    return Resume(level=level, state=kept.state, replay=kept.evaluation)
            known = [v for v in versions if self._known(config_id, v)]
            if known:
                top = max(known, key=lambda v: (v.level, v.round))
                kept = self._read(top)
                if isinstance(kept, Kept) and kept.state is None:  # pickle could not write it: held in memory?
                    held = self._volatile.get(config_id)
                    if held is not None and (held.level, held.round) == (kept.level, kept.round):
                        kept = held
                if isinstance(kept, Kept) and kept.level < level and kept.state is not None:
                    return Resume(level=kept.level, state=kept.state)
            return Resume()

    def _resume_in_memory(self, config_id: int, level: float, round: int) -> Resume:
        kept = self.take(config_id)
        if not isinstance(kept, Kept):
            return Resume()
        if kept.level == level and kept.round == round and kept.evaluation is not None:
            self.put(config_id, kept)
            return Resume(level=level, state=kept.state, replay=kept.evaluation)
        if not kept.level < level:
            return Resume()
        return Resume(level=kept.level, state=kept.state)
