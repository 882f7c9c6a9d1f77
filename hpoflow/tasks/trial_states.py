"""What a multi-fidelity task keeps per configuration so that a promotion continues training instead of starting
again: a bounded map ``config id -> state`` (least recently used dropped first; a dropped trial is retrained from
scratch and charged in full, never wrongly continued).

With a folder (``TrialStates.attach``, which the runner calls with ``<checkpoint>.trial_states`` when a run is
checkpointed) the folder holds the states, one pickle per trial, loop round and writing process
(``config_0004.r0000012.<writer>.pkl``), at most ``capacity`` trials: for each trial, the newest state the
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
_FILE = re.compile(r"^config_(\d+)\.r(\d+)\.([0-9a-f]{8})\.pkl$")  # trial, round, writer
_OLD_FILE = re.compile(r"^config_(\d+)\.pkl$")  # one file per trial (before the rounds were kept apart)


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
        """Keep the states in ``folder``. ``resumed_round`` 0 (a fresh run) empties it; a run resumed after round
        ``k`` adopts the states there: those of rounds up to ``k`` to continue, newer ones only to replay their
        own round."""
        with self._lock:
            self.folder, self.resumed_round = Path(folder), int(resumed_round)
            self.committed, self.session = self.resumed_round, uuid.uuid4().hex[:8]
            self.folder.mkdir(parents=True, exist_ok=True)
            for entry in os.scandir(self.folder):
                if _OLD_FILE.match(entry.name) or (self.resumed_round <= 0 and _FILE.match(entry.name)):
                    Path(entry.path).unlink(missing_ok=True)
            held, self._states = self._states, OrderedDict()
            for config_id, state in held.items():  # what this process held before: into the folder
                self._write(config_id, state)
            self._trim()

    def commit(self, round: int) -> None:
        """The checkpoint file now holds round ``round``: each trial's states older than its newest state at or
        before that round go (no resume starts before it), and so do the states of the rounds up to it that this
        process neither wrote nor replayed (the run took another way there)."""
        with self._lock:
            self.committed = max(self.committed, int(round))
            if self.folder is not None:
                for config_id, rounds in self._scan().items():
                    for r, session in rounds.items():
                        if self.resumed_round < r <= self.committed and session != self.session:
                            self._path(config_id, r, session).unlink(missing_ok=True)
                    self._prune(config_id)

    def _path(self, config_id: int, round: int, session: str | None = None) -> Path:
        assert self.folder is not None
        return self.folder / f"config_{int(config_id):04d}.r{int(round):07d}.{session or self.session}.pkl"

    def _scan(self) -> dict[int, dict[int, str]]:
        """``config id -> {round: session}`` of the states in the folder."""
        assert self.folder is not None
        found: dict[int, dict[int, str]] = {}
        for entry in os.scandir(self.folder):
            if m := _FILE.match(entry.name):
                found.setdefault(int(m.group(1)), {})[int(m.group(2))] = m.group(3)
        return found

    def _rounds(self, config_id: int) -> dict[int, str]:
        """``{round: session}`` of ``config_id``'s states, oldest first."""
        assert self.folder is not None
        prefix = f"config_{int(config_id):04d}.r"
        found = {int(m.group(2)): m.group(3) for entry in os.scandir(self.folder)
                 if entry.name.startswith(prefix) and (m := _FILE.match(entry.name))}
        return dict(sorted(found.items()))

    def _write(self, config_id: int, state: Any) -> int:
        """Atomically (a crash mid-write leaves the previous state or none, never a torn file); returns its round."""
        round = int(state.round) if isinstance(state, Kept) else 0
        path = self._path(config_id, round)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".pkl")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        prefix = path.name[:path.name.rindex(".", 0, -4) + 1]
        for entry in os.scandir(path.parent):  # one file per (trial, round): the other writer's goes
            if entry.name.startswith(prefix) and entry.name != path.name and _FILE.match(entry.name):
                Path(entry.path).unlink(missing_ok=True)
        return round

    def _read(self, config_id: int, round: int, session: str) -> Any:
        """The state of a file, or None (gone or unreadable: the trial is retrained from scratch)."""
        try:
            with self._path(config_id, round, session).open("rb") as fh:
                return pickle.load(fh)  # noqa: S301 - the run's own folder (see the module's docstring)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            return None

    def _known(self, session: str, round: int) -> bool:
        """A state this process may continue: the checkpoint it resumed from knows its round, or it wrote it."""
        return round <= self.resumed_round or session == self.session

    def _prune(self, config_id: int, keep: int | None = None) -> None:
        """Drop the states no resume needs: older than the newest known one at or before the committed round."""
        rounds = self._rounds(config_id)
        base = max((r for r, s in rounds.items() if r <= self.committed and self._known(s, r)), default=None)
        for r, session in rounds.items():
            if base is not None and r < base and r != keep:
                self._path(config_id, r, session).unlink(missing_ok=True)

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
                return max(self._path(config_id, r, s).stat().st_mtime_ns for r, s in found[config_id].items())
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
            for r, session in reversed(self._rounds(config_id).items()):
                if self._known(session, r) and (state := self._read(config_id, r, session)) is not None:
                    return state
            return None

    def put(self, config_id: int | None, state: Any) -> None:
        """Keep ``state`` as ``config_id``'s newest; in a folder, the states of rounds this process did not write
        and the checkpoint does not know go (the resumed run took another way)."""
        if config_id is None:
            return
        with self._lock:
            if self.folder is None:
                self._states[config_id] = state
                self._states.move_to_end(config_id)
            else:
                round = self._write(config_id, state)
                for r, session in self._rounds(config_id).items():
                    if not self._known(session, r):
                        self._path(config_id, r, session).unlink(missing_ok=True)
                self._prune(config_id, keep=round)
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
            if self.folder is not None:
                for r, session in self._rounds(config_id).items():
                    self._path(config_id, r, session).unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._states) if self.folder is None else len(self._scan())

    def __contains__(self, config_id: object) -> bool:
        if self.folder is None or not isinstance(config_id, int):
            return config_id in self._states
        return bool(self._rounds(config_id))

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
            rounds = self._rounds(config_id)
            if round in rounds and (kept := self._read(config_id, round, rounds[round])) is not None:
                if isinstance(kept, Kept) and kept.level == level and kept.round == round \
                        and kept.evaluation is not None:
                    if rounds[round] != self.session:  # adopted: this process may continue it from now on
                        os.replace(self._path(config_id, round, rounds[round]), self._path(config_id, round))
                    return Resume(level=level, state=kept.state, replay=kept.evaluation)
            for r, session in reversed(rounds.items()):
                if r >= round or not self._known(session, r):
                    continue
                kept = self._read(config_id, r, session)
                if isinstance(kept, Kept) and kept.level < level and kept.state is not None:
                    return Resume(level=kept.level, state=kept.state)
                break
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
