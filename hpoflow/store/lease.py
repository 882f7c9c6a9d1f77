"""Run lease: one writer per MLflow run, proven alive by a heartbeat.

The process that writes a run holds its lease: tags on the run naming the owner (a random id), its host
and pid, and a heartbeat time that a background thread (:class:`Heartbeat`) refreshes every
``heartbeat_s`` seconds. Anyone else (``resume=``, a sweep re-run, ``python -m hpoflow.store.runs stale``) reads
it with :func:`read_lease` and may take the run over with :func:`acquire` only when the lease is dead:
its heartbeat is older than the grace period, or its owner ran on this host and that pid is gone
(a SIGKILLed writer is then detected at once). A FINISHED run is never re-opened.

MLflow has no compare-and-set, so taking over is *check, claim, settle, verify*: on a SQLite store the
check and the claim run under an exclusive file lock beside the database (one machine: exact); on a
server the claimant waits ``settle_s`` and reads its claim back (of two racing claimants, the one whose
write landed last wins; the other raises :class:`LeaseHeld`). A writer whose lease was taken over anyway
notices it at its next heartbeat and stops writing (:class:`LeaseLost`).

Fencing: every claim increments the run's lease *epoch* (tag ``hpoflow.lease.epoch``, kept when the lease is
released), and the writer checks its (owner, epoch) with :meth:`Heartbeat.fence` before every metric flush and
every checkpoint write. A writer that was paused (``kill -STOP``) while another process took the run over
therefore finds the new epoch at its first write after ``kill -CONT`` and raises :class:`LeaseLost` instead of
writing. The check reads the store only when the writer's own last heartbeat is older than half the grace
period (before that no one can have taken the run over), so a healthy writer pays nothing for it. What no
lease on MLflow can close: a writer paused *between* the check and the write (one store call) may still land
that single write, since MLflow has no conditional write.

Written by hand because MLflow has no run lease; the design follows Optuna's heartbeat
(``heartbeat_interval``, ``grace_period``, ``fail_stale_trials``).

Example (the sweep re-run of a study)::

    lease = read_lease(client, run_id)
    if run.info.status != "FINISHED" and (lease is None or not lease.alive()):
        acquire(client, run_id)        # raises LeaseHeld naming the owner if someone took it meanwhile
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

PREFIX = "hpoflow.lease."
OWNER, HOST, PID, HEARTBEAT, INTERVAL = (PREFIX + k for k in ("owner", "host", "pid", "heartbeat", "interval_s"))
TAGS = (OWNER, HOST, PID, HEARTBEAT, INTERVAL)  # dropped on release
EPOCH = PREFIX + "epoch"  # the fencing token: +1 at every claim, kept on release
DEFAULT_HEARTBEAT_S = 10.0
MIN_GRACE_S = 30.0  # a loaded machine may delay a heartbeat by seconds: never call a writer dead sooner
SERVER_SETTLE_S = 2.0  # claim-then-verify wait on a server store (a SQLite store uses a file lock instead)
FAILURES_BEFORE_LOST = 3  # consecutive failed heartbeats before the writer gives up (a flaky server is tolerated)


class LeaseError(RuntimeError):
    """A run cannot be written by this process; the message is one line naming the run and why."""


class LeaseHeld(LeaseError):
    """Another live process holds the run's lease (the message names it)."""


class RunFinished(LeaseError):
    """The run is FINISHED: it is never re-opened."""


class LeaseLost(LeaseError):
    """While this process was writing, another process took the run over; this one must stop writing."""


def grace_for(interval_s: float) -> float:
    """Seconds without a heartbeat after which a writer is presumed dead: ``max(3 * interval, 30 s)``."""
    return max(3.0 * interval_s, MIN_GRACE_S)


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


@dataclass(frozen=True)
class Lease:
    """Who writes a run, and when it last said so (``heartbeat``: Unix time, seconds)."""

    owner: str
    host: str
    pid: int
    heartbeat: float
    interval_s: float = DEFAULT_HEARTBEAT_S
    epoch: int = 1

    @classmethod
    def mine(cls, interval_s: float = DEFAULT_HEARTBEAT_S, owner: str | None = None, epoch: int = 1) -> Lease:
        """A fresh lease for this process (a new random owner id unless ``owner`` is given)."""
        return cls(owner or uuid.uuid4().hex, socket.gethostname(), os.getpid(), time.time(), float(interval_s),
                   epoch)

    @classmethod
    def from_tags(cls, tags: dict[str, str]) -> Lease | None:
        """The lease recorded in a run's tags, or None (never leased, released, or unreadable tags)."""
        if not tags.get(OWNER):
            return None
        try:
            return cls(tags[OWNER], tags.get(HOST, ""), int(tags.get(PID, "0")), float(tags.get(HEARTBEAT, "0")),
                       float(tags.get(INTERVAL, DEFAULT_HEARTBEAT_S)), epoch_of(tags))
        except ValueError:
            return None

    def tags(self) -> dict[str, str]:
        return {OWNER: self.owner, HOST: self.host, PID: str(self.pid), HEARTBEAT: f"{self.heartbeat:.3f}",
                INTERVAL: repr(self.interval_s), EPOCH: str(self.epoch)}

    def age(self, now: float | None = None) -> float:
        """Seconds since the last heartbeat."""
        return (time.time() if now is None else now) - self.heartbeat

    def alive(self, now: float | None = None, grace_s: float | None = None) -> bool:
        """True while the owner may still be writing.

        Dead when the heartbeat is older than ``grace_s`` (default :func:`grace_for` of its interval), or at
        once when the owner ran on this host and its pid no longer exists.
        """
        if self.host == socket.gethostname() and not _pid_running(self.pid):
            return False
        return self.age(now) <= (grace_for(self.interval_s) if grace_s is None else grace_s)

    def describe(self, now: float | None = None) -> str:
        return f"owner {self.owner[:8]} (pid {self.pid} on {self.host}, last heartbeat {self.age(now):.0f} s ago)"


def epoch_of(tags: dict[str, str]) -> int:
    """The run's lease epoch (0: never claimed by an epoch-aware writer; an unreadable tag counts as 0)."""
    try:
        return int(tags.get(EPOCH, "0"))
    except ValueError:
        return 0


def read_lease(client: Any, run_id: str) -> Lease | None:
    """The run's current lease (None if it has none)."""
    from hpoflow.store.backend import retry

    return Lease.from_tags(retry(lambda: client.get_run(run_id)).data.tags)


@contextlib.contextmanager
def _store_lock(client: Any) -> Iterator[None]:
    """An exclusive lock for a SQLite store's lease claims (no-op for servers)."""
    from hpoflow.store.backend import file_lock, sqlite_path

    db = sqlite_path(str(client.tracking_uri))
    if db is None:
        yield
        return
    with file_lock(db.with_name(db.name + ".lease.lock")):
        yield


def acquire(client: Any, run_id: str, interval_s: float = DEFAULT_HEARTBEAT_S, grace_s: float | None = None,
            owner: str | None = None, settle_s: float | None = None) -> Lease:
    """Take the run's lease for this process and return it.

    Raises:
        RunFinished: the run is FINISHED (it is never re-opened).
        LeaseHeld: another live process holds the lease, or won a concurrent claim (the message names it).
    """
    from hpoflow.store.backend import retry, sqlite_path

    with _store_lock(client):
        run = retry(lambda: client.get_run(run_id))
        if run.info.status == "FINISHED":
            raise RunFinished(f"run {run_id} is FINISHED; a finished run is never re-opened (start a new run)")
        mine = Lease.mine(interval_s, owner, epoch_of(run.data.tags) + 1)
        held = Lease.from_tags(run.data.tags)
        if held is not None and held.owner != mine.owner and held.alive(grace_s=grace_s):
            raise LeaseHeld(f"run {run_id} is being written by {held.describe()}; wait for it to end, or stop it "
                            "(a writer is presumed dead once its heartbeat is older than "
                            f"{grace_for(held.interval_s):.0f} s)")
        _write(client, run_id, mine)
    settle = (0.0 if sqlite_path(str(client.tracking_uri)) else SERVER_SETTLE_S) if settle_s is None else settle_s
    if settle > 0:
        time.sleep(settle)
        now = read_lease(client, run_id)
        if now is None or (now.owner, now.epoch) != (mine.owner, mine.epoch):
            raise LeaseHeld(f"run {run_id} was taken over at the same moment by "
                            f"{now.describe() if now else 'another process'}")
    return mine


def _write(client: Any, run_id: str, lease: Lease) -> None:
    from mlflow.entities import RunTag

    from hpoflow.store.backend import retry

    retry(lambda: client.log_batch(run_id, tags=[RunTag(k, v) for k, v in lease.tags().items()]))


def release(client: Any, run_id: str, lease: Lease) -> None:
    """Drop the lease tags if this process still holds them (called once the run has its final status)."""
    from hpoflow.store.backend import retry

    held = read_lease(client, run_id)
    if held is None or held.owner != lease.owner:
        return
    for key in TAGS:
        retry(partial(client.delete_tag, run_id, key))


class Heartbeat:
    """Refresh a held lease every ``lease.interval_s`` seconds from a daemon thread.

    Each beat first runs ``check`` (e.g. a store-health check), then verifies that the lease is still ours
    and writes the new heartbeat time. A beat that finds another owner records :class:`LeaseLost`; one that
    fails ``FAILURES_BEFORE_LOST`` times in a row records its last exception. The writer calls
    :meth:`raise_if_failed` before each write, so a lost lease stops it within one beat.
    """

    def __init__(self, client: Any, run_id: str, lease: Lease, check: Callable[[], None] | None = None) -> None:
        self.client, self.run_id, self.lease, self.check = client, run_id, lease, check
        self.error: BaseException | None = None
        self.beat_at = time.monotonic()  # when the heartbeat time now in the store was taken (Lease.mine/beat)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hpoflow-heartbeat-{run_id[:8]}", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise self.error

    def beat(self) -> None:
        """One heartbeat (also callable directly, e.g. from a test)."""
        if self.check is not None:
            self.check()
        self._verify()
        started = time.monotonic()
        self.lease = Lease(self.lease.owner, self.lease.host, self.lease.pid, time.time(), self.lease.interval_s,
                           self.lease.epoch)
        from hpoflow.store.backend import retry

        retry(lambda: self.client.set_tag(self.run_id, HEARTBEAT, f"{self.lease.heartbeat:.3f}"))
        self.beat_at = started

    def _verify(self) -> None:
        held = read_lease(self.client, self.run_id)
        if held is None or (held.owner, held.epoch) != (self.lease.owner, self.lease.epoch):
            self.error = LeaseLost(f"run {self.run_id} was taken over by "
                                   f"{held.describe() if held else 'another process (lease removed)'} (lease epoch "
                                   f"{held.epoch if held else '?'}, this process held {self.lease.epoch}); this "
                                   "process stopped writing to it")
            raise self.error

    def fence(self) -> None:
        """Raise :class:`LeaseLost` unless this process still holds the lease: called before every write.

        Reads the store only when the last heartbeat written is older than half the grace period: until
        then the lease cannot have been taken over (a claimant needs a heartbeat older than the grace).
        """
        self.raise_if_failed()
        if time.monotonic() - self.beat_at < grace_for(self.lease.interval_s) / 2:
            return
        self._verify()

    def _run(self) -> None:
        failures = 0
        while not self._stop.wait(self.lease.interval_s):
            try:
                self.beat()
                failures = 0
            except LeaseError as exc:
                self.error = exc
                return
            except Exception as exc:  # noqa: BLE001 - kept and re-raised in the writer's thread
                failures += 1
                if failures >= FAILURES_BEFORE_LOST or _is_store_loss(exc):
                    self.error = exc
                    return


def _is_store_loss(exc: BaseException) -> bool:
    from hpoflow.store.health import StoreLost

    return isinstance(exc, StoreLost)
