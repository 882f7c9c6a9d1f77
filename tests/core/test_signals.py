"""SIGTERM/SIGINT become Interrupted (exit 128 + signal); a deferred block is never cut in half."""
from __future__ import annotations

import os
import signal

import pytest

from hpoflow.core import signals


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in signals.HANDLED}
    assert signals.install()
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def test_sigterm_raises_interrupted_with_the_shell_exit_code(handlers):
    with pytest.raises(signals.Interrupted) as info:
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next bytecode boundary
    assert info.value.exit_code == 143 and str(info.value) == "interrupted by SIGTERM (signal 15)"
    assert isinstance(info.value, KeyboardInterrupt)  # the loop marks the run KILLED
    os.kill(os.getpid(), signal.SIGTERM)  # the run is being closed: later signals are ignored


def test_a_signal_inside_deferred_waits_for_the_block_to_end(handlers):
    done = []
    with pytest.raises(signals.Interrupted) as info, signals.deferred():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("the whole write")
    assert done == ["the whole write"] and info.value.exit_code == 130
