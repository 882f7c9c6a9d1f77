"""SIGTERM and SIGINT end a run cleanly: KILLED in MLflow, everything logged, one line, exit 128 + signal.

SLURM, Kubernetes and systemd stop a job with SIGTERM (then SIGKILL after a grace period); Python's default
for SIGTERM is to die on the spot, leaving the MLflow run RUNNING with its buffered metrics lost. The CLI
installs :func:`install`: the first SIGTERM or SIGINT raises :class:`Interrupted` (a ``KeyboardInterrupt``,
so the loop marks the run KILLED, flushes the buffer and records the signal in the ``error`` tag), and the
entry point turns it into one line and ``exit(128 + signal)``.

A signal that arrives inside :func:`deferred` (a batch write to the store) is held until the block ends,
so that a write is never cut in half and then repeated; signals after the first are ignored while the run
is being closed (a second Ctrl-C cannot interrupt the final flush; SIGKILL still can).
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

HANDLED = (signal.SIGTERM, signal.SIGINT)


class Interrupted(KeyboardInterrupt):
    """The process received ``signum``; ``exit_code`` is the shell's convention, 128 + signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum

    def __str__(self) -> str:
        return f"interrupted by {signal.Signals(self.signum).name} (signal {self.signum})"


_state = {"depth": 0, "pending": None, "raised": False}


def _raise(signum: int) -> None:
    _state["raised"] = True
    raise Interrupted(signum)


def _handler(signum: int, frame: FrameType | None) -> None:
    if _state["raised"]:
        return  # the run is already being closed
    if _state["depth"] > 0:
        _state["pending"] = signum
        return
    _raise(signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGTERM/SIGINT until the block ends (a store write must not be cut in half)."""
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        pending = _state["pending"]
        if _state["depth"] == 0 and pending is not None and not _state["raised"]:
            _state["pending"] = None
            _raise(pending)


def install() -> bool:
    """Install the handlers (main thread only; elsewhere Python forbids it). Returns whether it did."""
    if threading.current_thread() is not threading.main_thread():
        return False
    _state.update(depth=0, pending=None, raised=False)
    for sig in HANDLED:
        signal.signal(sig, _handler)
    return True
