"""SIGTERM/SIGINT to a sweep whose launcher runs the jobs in other processes (joblib's loky workers, submitit_local).

The signal reaches only the launching process, whose default is to die at once: its workers were orphaned and
went on running (and starting) jobs, and the study's parent run stayed RUNNING. :func:`install` (called by the
study callback in the launching process) makes that process stop its workers first: it forwards SIGTERM to every
process below it (each job's own handler, :mod:`hpoflow.core.signals`, marks its run KILLED with every completed
round logged, and the worker leaves), waits up to :data:`GRACE_S`, kills what is left, and raises
:class:`~hpoflow.core.signals.Interrupted`, which the CLI's error reporter turns into one line, the parent run
KILLED and exit 128 + N.

A worker knows it is one by :data:`LAUNCHER_ENV` (the launching process's pid, inherited): it prints nothing
(the launcher prints the one line) and exits once its job is closed (:func:`in_worker`, :func:`leave_worker`);
between jobs it dies quietly (:func:`idle_worker`).
"""
from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

from hpoflow.core.signals import HANDLED, Interrupted

LAUNCHER_ENV = "HPOFLOW_LAUNCHER_PID"
GRACE_S = 20.0  # for a worker to close its run (flush, KILLED) before it is killed
_stopping = {"signum": 0}


def in_worker() -> bool:
    """Whether this process runs a job for a launcher in another process (which reports a signal itself)."""
    launcher = os.environ.get(LAUNCHER_ENV)
    return bool(launcher) and launcher != str(os.getpid())


def leave_worker(code: int) -> None:
    """End a worker process after its job was interrupted, so that it starts no other job (its run is closed)."""
    import logging
    import sys

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def idle_worker() -> None:
    """Between jobs a worker dies quietly on SIGTERM/SIGINT (no traceback from inside the launcher's loop)."""
    if in_worker() and threading.current_thread() is threading.main_thread():
        for sig in HANDLED:
            signal.signal(sig, signal.SIG_DFL)


def stop_descendants(grace_s: float = GRACE_S) -> list[int]:
    """SIGTERM to every process below this one, SIGKILL to those still alive after ``grace_s``; their pids."""
    import psutil

    children = [child for child in psutil.Process().children(recursive=True) if not _bookkeeper(child)]
    for child in children:
        try:
            child.send_signal(signal.SIGTERM)
        except psutil.Error:  # gone already
            pass
    _, alive = psutil.wait_procs(children, timeout=grace_s)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    return [child.pid for child in alive]


def _bookkeeper(process: Any) -> bool:
    """A resource tracker (multiprocessing's, loky's): it ignores signals, cleans up after the workers and ends
    with the launching process; signalled, it leaks what it tracks and prints tracebacks."""
    try:
        return any("resource_tracker" in part for part in process.cmdline())
    except Exception:  # noqa: BLE001 - gone, or not ours to read: not a bookkeeper to spare
        return False


def _handler(signum: int, frame: FrameType | None) -> None:
    if _stopping["signum"]:
        return  # already stopping the workers
    _stopping["signum"] = signum
    stop_descendants()
    raise Interrupted(signum)


def install() -> bool:
    """Handle SIGTERM/SIGINT in the launching process of a sweep (main thread only); returns whether it did."""
    if threading.current_thread() is not threading.main_thread():
        return False
    _stopping["signum"] = 0
    os.environ[LAUNCHER_ENV] = str(os.getpid())
    for sig in HANDLED:
        signal.signal(sig, _handler)
    return True
