"""Resumable loop state: what a run needs to continue after a crash, saved every round and written atomically.

The file is JSON (plain values; tensors as ``{"__tensor__": dtype, "shape", "data"}``), so loading a
checkpoint can never run code, and writing it is cheap (one C-speed ``json.dumps``: a few ms per round for
hundreds of rounds, where ``torch.save`` of the same data took tens). It contains, after round ``k``:

* every completed round: its Record, its logged metrics, and for ask/tell algorithms the Suggestion's
  ``x`` and the outcome that was told (Evaluation or Failure);
* the trials asked and not told yet (``pending``: trial number, configuration, point, ``observe``, info, fidelity,
  config id, the cost it was admitted with), which a resumed run with workers evaluates again, once each;
* the regret book, the elapsed wall time, and the RNG states of Python, NumPy, torch and the task;
* the algorithm's own ``state_dict()`` if it implements one (see ``hpoflow.algorithms.base``);
* ``meta``: the resolved config (secrets redacted), the MLflow run id and store, and how the run ended.

Integrity: the file starts with ``{"sha256": <hex>, ...`` the SHA-256 of the rest of the document; ``load``
verifies it and that ``round`` is the number of recorded rounds, so a hand-edited, truncated or mixed-up
checkpoint is refused (``CheckpointError``) instead of silently continuing a different trajectory.

Resume contract (see :func:`hpoflow.runner.loop.run`): a fresh algorithm is built from the same config and seed;
if the checkpoint holds an algorithm state it is loaded, otherwise the rounds are *replayed* (``ask`` again,
``tell`` the recorded outcome; objectives are not re-evaluated), which restores any deterministic
algorithm exactly. Then the RNG states are restored and the loop continues with round ``k + 1``.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpoflow.core.lazy import LazyModule, is_tensor
from hpoflow.core.records import Evaluation, Failure, Record

if TYPE_CHECKING:
    import torch
else:
    torch = LazyModule("torch")  # imported when a tensor or torch's RNG is first needed

VERSION = 3  # 2: content hash; 3: bound to its run folder (meta.folder). Version 1 (no hash) is refused.
READABLE_VERSIONS = (2, 3)
FILENAME = "checkpoint.json"


class CheckpointError(ValueError):
    """A checkpoint cannot be found, read, or used to resume."""


# -- plain values -----------------------------------------------------------------------------------
def to_plain(obj: Any) -> Any:
    """Convert NumPy scalars/arrays, tuples, enums and dataclasses into plain values and tensors."""
    if isinstance(obj, enum.Enum):
        return to_plain(obj.value)
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return float(obj)
    if is_tensor(obj):
        return obj.detach().cpu().clone()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj)).clone() if obj.dtype != object else obj.tolist()
    if isinstance(obj, dict):
        return {to_plain(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_plain(dataclasses.asdict(obj))
    raise CheckpointError(f"cannot checkpoint a value of type {type(obj).__name__}: state_dict() must hold "
                          "tensors and plain Python values only")


# -- random number generators ---------------------------------------------------------------------------
def _rng_get(rng: Any) -> Any:
    loaded = sys.modules.get("torch")  # no torch.Generator exists before torch is imported: never import it here
    if loaded is not None and isinstance(rng, loaded.Generator):
        return {"kind": "torch", "state": rng.get_state()}
    if isinstance(rng, np.random.Generator):
        return {"kind": "numpy", "state": to_plain(rng.bit_generator.state)}
    if isinstance(rng, np.random.RandomState):
        return {"kind": "numpy_legacy", "state": to_plain(rng.get_state(legacy=False))}
    if isinstance(rng, random.Random):
        return {"kind": "python", "state": to_plain(rng.getstate())}
    return None


def _rng_set(rng: Any, saved: dict[str, Any]) -> None:
    state = saved["state"]
    if saved["kind"] == "torch":
        rng.set_state(state)
    elif saved["kind"] == "numpy":
        rng.bit_generator.state = _numpy_state(state)
    elif saved["kind"] == "numpy_legacy":
        rng.set_state(_numpy_state(state))
    else:
        rng.setstate((state[0], tuple(state[1]), state[2]))


def _numpy_state(state: Any) -> Any:
    if isinstance(state, dict):
        return {k: _numpy_state(v) for k, v in state.items()}
    if is_tensor(state):
        return state.numpy()
    return state


def rng_states(obj: Any) -> dict[str, Any]:
    """The states of the RNGs held as attributes of ``obj`` (a task, typically): generic, no per-class code."""
    out = {}
    for name, value in sorted(vars(obj).items()):
        saved = _rng_get(value)
        if saved is not None:
            out[name] = saved
    return out


def load_rng_states(obj: Any, states: dict[str, Any]) -> None:
    for name, saved in states.items():
        rng = getattr(obj, name, None)
        if rng is not None:
            _rng_set(rng, saved)


_GLOBAL_RNG: list[Any] = [None, None]  # (the raw states last converted, their plain form)


def global_rng_state() -> dict[str, Any]:
    """Python's, NumPy's and torch's global RNG states (what ``seed_everything`` seeds).

    While none of them moved since the last call (an algorithm with its own generators), the same dict is
    returned again, so that saving it every round converts and serialises it once (:func:`save`); callers
    must not change it. torch's state only once torch is loaded: before that it has not moved, and
    ``seed_everything`` seeds torch when it is first imported, in the resumed process as in the first one (a
    checkpoint never imports torch; NumPy's key is kept as a list of ints for the same reason).
    """
    loaded = sys.modules.get("torch")
    py, npy = random.getstate(), np.random.get_state(legacy=False)
    th = loaded.get_rng_state() if loaded is not None else None
    key = (py, npy["state"]["key"].tobytes(), npy["state"]["pos"], npy.get("has_gauss"), npy.get("gauss"),
           None if th is None else th.numpy().tobytes())
    if _GLOBAL_RNG[0] != key:
        plain = {"python": to_plain(py), "numpy": _numpy_plain(npy)}
        if th is not None:
            plain["torch"] = th
        _GLOBAL_RNG[:] = [key, plain]
    return _GLOBAL_RNG[1]


def _numpy_plain(state: dict[str, Any]) -> dict[str, Any]:
    """NumPy's RNG state with its arrays as lists (``to_plain`` would make them tensors, importing torch)."""
    return {k: _numpy_plain(v) if isinstance(v, dict) else v.tolist() if isinstance(v, np.ndarray) else to_plain(v)
            for k, v in state.items()}


def set_global_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`global_rng_state` saved (torch's state where it was saved: see there)."""
    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    np.random.set_state(_numpy_state(state["numpy"]))
    if state.get("torch") is not None:
        torch.set_rng_state(state["torch"])


# -- the loop state -----------------------------------------------------------------------------------
@dataclass
class LoopState:
    """Everything the loop needs to continue after round ``round``.

    Each round is converted to plain values once, when it is added (``rounds``), so that saving the state
    every round costs a pickle of plain data, not a re-conversion of the whole history.
    """

    round: int = 0
    records: list[Record] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)
    xs: list[list[float] | None] = field(default_factory=list)
    outcomes: list[Evaluation | Failure | None] = field(default_factory=list)
    book: dict[str, Any] = field(default_factory=dict)
    wall_time: float = 0.0
    algorithm: dict[str, Any] | None = None
    task_rng: dict[str, Any] = field(default_factory=dict)
    global_rng: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    plain: bool = True  # keep ``rounds`` (only needed when checkpointing)
    rounds_json: list[str] = field(default_factory=list, repr=False)
    version: int = VERSION  # of the file it was read from
    pending: list[dict[str, Any]] = field(default_factory=list)  # trials running at the save (plain: pending_trial)

    def add(self, record: Record, metrics: dict[str, float], x: torch.Tensor | list[float] | None = None,
            outcome: Evaluation | Failure | None = None) -> None:
        self.round = record.round
        self.records.append(record)
        self.metrics.append(metrics)
        self.xs.append(None if x is None else x if isinstance(x, list) else x.detach().cpu().double().tolist())
        self.outcomes.append(outcome)
        if self.plain:  # converted and serialised once: saving every round stays cheap as the history grows
            self.rounds.append(_to_json({"record": to_plain(dataclasses.asdict(record)), "metrics": to_plain(metrics),
                                         "x": self.xs[-1], "outcome": _outcome_plain(outcome)}))
            self.rounds_json.append(json.dumps(self.rounds[-1], separators=(",", ":")))


def pending_trial(trial: int, config: dict[str, Any], x: list[float], observe: bool, info: dict[str, float],
                  fidelity: float | None, config_id: int | None, cost: float | None) -> dict[str, Any]:
    """A trial asked and not told at a save, as the plain dict ``LoopState.pending`` holds."""
    return {"trial": int(trial), "config": to_plain(config), "x": [float(v) for v in x], "observe": bool(observe),
            "info": to_plain(info), "fidelity": None if fidelity is None else to_plain(fidelity),
            "config_id": None if config_id is None else int(config_id), "cost": None if cost is None else float(cost)}


def _outcome_plain(outcome: Evaluation | Failure | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    kind = "failure" if isinstance(outcome, Failure) else "evaluation"
    return {"kind": kind, **to_plain(dataclasses.asdict(outcome))}


def _outcome_from(d: dict[str, Any] | None) -> Evaluation | Failure | None:
    if d is None:
        return None
    d = dict(d)
    kind = d.pop("kind")
    return Failure(**d) if kind == "failure" else Evaluation(**d)


def encode(state: LoopState) -> dict[str, Any]:
    """LoopState -> a dict of plain values and tensors (without the rounds: see ``save``)."""
    return {**_encode_head(state), "global_rng": state.global_rng, "meta": to_plain(state.meta)}


def _encode_head(state: LoopState) -> dict[str, Any]:
    """What ``encode`` gives, before the global RNG state and the meta."""
    return {
        "version": VERSION, "round": state.round,
        "book": to_plain(state.book), "wall_time": float(state.wall_time),
        "algorithm": None if state.algorithm is None else to_plain(state.algorithm),
        "task_rng": state.task_rng, "pending": state.pending,
    }


def decode(d: dict[str, Any]) -> LoopState:
    if d.get("version") not in READABLE_VERSIONS:
        raise CheckpointError(f"checkpoint version {d.get('version')!r} is not supported (expected {VERSION})")
    rounds = d["rounds"]
    if d["round"] != len(rounds) or [r["record"]["round"] for r in rounds] != list(range(1, len(rounds) + 1)):
        raise CheckpointError(f"the checkpoint says round {d['round']!r} but holds {len(rounds)} rounds "
                              f"(numbered {_span([r['record']['round'] for r in rounds])}): it is inconsistent")
    return LoopState(round=d["round"], records=[Record(**r["record"]) for r in rounds],
                     metrics=[r["metrics"] for r in rounds], xs=[r["x"] for r in rounds],
                     outcomes=[_outcome_from(r["outcome"]) for r in rounds], book=d["book"],
                     wall_time=d["wall_time"], algorithm=d["algorithm"], task_rng=d["task_rng"],
                     global_rng=d["global_rng"], meta=d["meta"], rounds=list(rounds),
                     rounds_json=[json.dumps(r, separators=(",", ":")) for r in rounds], version=d["version"],
                     pending=list(d.get("pending") or []))  # a file written before pending trials were saved: none


def _span(rounds: list[Any]) -> str:
    return "none" if not rounds else f"{rounds[0]}..{rounds[-1]}" if len(rounds) > 2 else str(rounds)


_TENSOR = "__tensor__"
_HASH_HEAD = '{"sha256":"'
_HASH_LEN = 64
FSYNC_SECONDS = 2.0  # a killed process loses nothing (the rename is atomic); fsync bounds a power cut's loss
_LAST_FSYNC: dict[Path, float] = {}
DEFER_S = 0.25  # a run's checkpoint file is written at most this often while its rounds are cheap (Checkpointer)


def _to_json(obj: Any) -> Any:
    if is_tensor(obj):
        t = obj.detach().cpu()
        return {_TENSOR: str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "data": t.reshape(-1).tolist()}
    if isinstance(obj, dict):
        return {str(k): _to_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_json(v) for v in obj]
    return obj


def _from_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        if _TENSOR in obj:
            dtype = getattr(torch, obj[_TENSOR], None)
            if not isinstance(dtype, torch.dtype):
                raise CheckpointError(f"unknown tensor dtype {obj[_TENSOR]!r} in checkpoint")
            return torch.tensor(obj["data"], dtype=dtype).reshape(obj["shape"])
        return {k: _from_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_json(v) for v in obj]
    return obj


_FIELD_JSON: dict[str, tuple[Any, str]] = {}  # field -> (the object the last save serialised, its JSON text)


def _field_json(name: str, value: Any) -> str:
    """The JSON text of a top-level field; the very object the last save wrote (the global RNG state while it
    does not move, a checkpointer's meta) is not converted and serialised again."""
    memo = _FIELD_JSON.get(name)
    if memo is None or memo[0] is not value:
        memo = (value, json.dumps(_to_json(to_plain(value)), separators=(",", ":")))
        _FIELD_JSON[name] = memo
    return memo[1]


def save(path: str | Path, state: LoopState) -> None:
    """Write atomically: a temporary file in the same folder, fsync, then rename over the old one."""
    write_text(path, dumps(state))


def dumps(state: LoopState) -> str:
    """The checkpoint file's text for ``state`` (its content hash first)."""
    head = json.dumps(_to_json(_encode_head(state)), separators=(",", ":"))  # the fields of encode(), in order
    head = head[:-1] + "".join(f',"{key}":{_field_json(key, getattr(state, key))}' for key in ("global_rng", "meta"))
    head += "}"
    body = f'{head[1:-1]},"rounds":[{",".join(state.rounds_json)}]}}'
    return f'{_HASH_HEAD}{hashlib.sha256(body.encode()).hexdigest()}",{body}'


def write_text(path: str | Path, text: str) -> None:
    """Write a checkpoint's ``text`` atomically (temporary file, fsync at most every ``FSYNC_SECONDS``, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            if time.monotonic() - _LAST_FSYNC.get(path, -math.inf) >= FSYNC_SECONDS:
                fh.flush()
                os.fsync(fh.fileno())
                _LAST_FSYNC[path] = time.monotonic()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path) -> LoopState:
    """Read a checkpoint (JSON: nothing in it can run code)."""
    try:
        with open(path) as fh:
            text = fh.read()
        _verify_hash(text, path)
        return decode(_from_json(json.loads(text)))
    except FileNotFoundError:
        raise CheckpointError(f"resume={str(path)!r}: no checkpoint there") from None
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file is a user-facing error
        raise CheckpointError(f"resume={str(path)!r}: not a readable hpoflow checkpoint "
                              f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})") from None


def _verify_hash(text: str, path: str | Path) -> None:
    if not text.startswith(_HASH_HEAD):
        raise CheckpointError(f"resume={str(path)!r}: the checkpoint carries no content hash (edited or "
                              "not written by hpoflow); refusing to resume from it")
    expected = text[len(_HASH_HEAD):len(_HASH_HEAD) + _HASH_LEN]
    body = text[len(_HASH_HEAD) + _HASH_LEN + 2:]
    if hashlib.sha256(body.encode()).hexdigest() != expected:
        raise CheckpointError(f"resume={str(path)!r}: the checkpoint's content does not match its SHA-256 "
                              "(edited or corrupted); refusing to resume from it")


class Checkpointer:
    """Saves the loop state after every ``every``-th round (and the final one) to ``path``.

    ``defer_s``: a save within ``defer_s`` seconds of the last file write is serialised at once (the state and
    RNGs exactly as they are after that round) but kept in memory, and written by the next save that is due
    or by :meth:`write_pending`, which the loop calls before the store receives any metric (the tracker's
    ``before_flush``) and before the run ends. Cheap rounds then cost no file write each (an atomic rename
    is milliseconds on ext4), while the file is never behind the store by more than the round being flushed,
    so a crashed run resumes with every stored step exactly once (:mod:`hpoflow.store.resume_guard`); a
    crash loses at most ``defer_s`` seconds of rounds, which the resumed run computes again. None: every
    save is written.
    """

    def __init__(self, path: str | Path, meta: dict[str, Any] | None = None, every: int = 1,
                 defer_s: float | None = None) -> None:
        self.path, self.meta, self.every, self.defer_s = Path(path), dict(meta or {}), every, defer_s
        self.mirror: Any = None  # has ``upload(path)``: each save also goes into the tracking store (a server)
        self.on_write: Callable[[int], None] | None = None  # called with the round of each state the file receives
        self._meta: tuple[Any, dict[str, Any]] | None = None  # ((status, folder, meta items), the meta written)
        self._pending: str | None = None  # a deferred save's text
        self._pending_round = 0  # its round
        self._written_at: float | None = None  # time.monotonic() of the last file write
        self.writes = 0
        self._mirrored = 0  # the write the store's copy holds (its number)

    def due(self, round: int) -> bool:
        return self.every >= 1 and round % self.every == 0

    def save(self, state: LoopState, status: str = "RUNNING", now: bool = False) -> None:
        """Save ``state`` (deferred as the class says unless ``now`` or the status is not RUNNING)."""
        key = (status, folder_identity(self.path), list(self.meta.items()))
        if self._meta is None or self._meta[0] != key:  # the same meta object while nothing changed: written
            self._meta = (key, {**self.meta, "status": status, "folder": key[1]})  # once (see _field_json)
        state.meta = self._meta[1]
        text = dumps(state)
        if (not now and status == "RUNNING" and self.defer_s is not None and self._written_at is not None
                and time.monotonic() - self._written_at < self.defer_s):
            self._pending, self._pending_round = text, state.round
            return
        self._pending_round = state.round
        self._write(text, status)

    @property
    def pending(self) -> bool:
        """A save is held in memory, not yet in the file."""
        return self._pending is not None

    def write_pending(self) -> None:
        """Write the deferred save, if any."""
        if self._pending is not None:
            self._write(self._pending, "RUNNING")

    def sync(self) -> None:
        """Before the store is written (the tracker's ``before_flush``): the deferred save goes to the file, and
        the file to the store's copy (``mirror``) if its latest write is not there yet (a throttled upload), so
        that neither trails the store by more than the round being flushed."""
        self.write_pending()
        if self.mirror is not None and self._mirrored < self.writes:
            self._upload(now=True)

    def _write(self, text: str, status: str) -> None:
        write_text(self.path, text)
        self._pending = None
        self._written_at = time.monotonic()
        self.writes += 1
        if self.on_write is not None:
            self.on_write(self._pending_round)
        if self.mirror is not None and status != "FINISHED":  # a finished run is never resumed
            self._upload(now=False)

    def _upload(self, now: bool) -> None:
        before = self.mirror.uploads
        self.mirror.upload_now(self.path) if now else self.mirror.upload(self.path)
        if self.mirror.uploads > before:  # uploaded (a failed upload warns once and is tried again next time)
            self._mirrored = self.writes


def folder_identity(path: str | Path) -> str:
    """``<parent>/<folder>`` of a checkpoint file: its run folder's name with the one above (a run's date, a
    sweep's unique folder), which is what binds a checkpoint to its run folder (moving the folder keeps it)."""
    folder = Path(path).resolve().parent
    return f"{folder.parent.name}/{folder.name}"


def check_folder(state: LoopState, path: str | Path) -> None:
    """Refuse a checkpoint that lies in another run's folder (copied or swapped in).

    Raises:
        CheckpointError: the checkpoint names another folder, or (version 3) names none.
    """
    recorded = state.meta.get("folder")
    here = folder_identity(path)
    if recorded is None:
        if state.version >= 3:
            raise CheckpointError(f"resume={str(path)!r}: the checkpoint names no run folder; refusing to resume")
        return
    if recorded != here:
        raise CheckpointError(f"resume={str(path)!r}: this checkpoint belongs to the run folder {recorded!r} "
                              f"(run {state.meta.get('run_id')}), not to {here!r}: it was copied or swapped in; "
                              "resume the run from its own folder")
