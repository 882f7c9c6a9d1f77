"""A CLI run killed with SIGKILL at a chosen point, for the crash tests of tests/cli/: ``python -c KILL_AT_EVALUATION``
is ``python -m hpoflow`` whose task's ``evaluate_at`` kills the process right after its N-th call returned
(``HPOFLOW_TEST_KILL_AT=N``): the trial is trained and its state written, the round neither told nor checkpointed,
the worst moment for a run that continues trials.

``python -c KILL_AT_TELL`` kills the run's own process as its N-th ``Loop.tell`` starts (``HPOFLOW_TEST_KILL_AT=N``):
with thread, process or Ray workers, trial N's evaluation has ended in its worker (trained, its state written) and
the other workers' trials are still running, none of them told nor checkpointed (``HPOFLOW_TEST_KILL_PENDING=<file>``:
the trials pending then are written there first, as JSON). ``evaluate_at`` never runs in the run's process with
process or Ray workers, so their kill tests need this point."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

KILL_AT_EVALUATION = """
import os, signal, sys, runpy, importlib
module, name = os.environ["HPOFLOW_TEST_KILL_CLASS"].rsplit(".", 1)
cls = getattr(importlib.import_module(module), name)
target, calls, real = int(os.environ["HPOFLOW_TEST_KILL_AT"]), [0], cls.evaluate_at
sig = getattr(signal, os.environ.get("HPOFLOW_TEST_KILL_SIGNAL", "SIGKILL"))
def evaluate_at(self, *args, **kwargs):
    out = real(self, *args, **kwargs)
    calls[0] += 1
    if calls[0] == target:
        os.kill(os.getpid(), sig)
    return out
cls.evaluate_at = evaluate_at
sys.argv = ["hpoflow", *sys.argv[1:]]
runpy.run_module("hpoflow", run_name="__main__", alter_sys=True)
"""

KILL_AT_TELL = """
import os, signal, sys, runpy
from hpoflow.runner import loop
target, calls, real = int(os.environ["HPOFLOW_TEST_KILL_AT"]), [0], loop.Loop.tell
sig = getattr(signal, os.environ.get("HPOFLOW_TEST_KILL_SIGNAL", "SIGKILL"))
def tell(self, *args, **kwargs):
    calls[0] += 1
    if calls[0] == target:
        if os.environ.get("HPOFLOW_TEST_KILL_PENDING"):  # the trials asked and not told as the run dies
            import json
            trials = [{"trial": self.trial_number(s), "config_id": s.config_id, "fidelity": s.fidelity}
                      for s in self.pending]
            with open(os.environ["HPOFLOW_TEST_KILL_PENDING"], "w") as fh:
                json.dump(trials, fh)
        os.kill(os.getpid(), sig)
    return real(self, *args, **kwargs)
loop.Loop.tell = tell
sys.argv = ["hpoflow", *sys.argv[1:]]
runpy.run_module("hpoflow", run_name="__main__", alter_sys=True)
"""


def run_killed(cwd: Path, args: list[str], at: int | None, task_class: str = "hpoflow.tasks.replay.ReplayTask",
               timeout: float = 600, signal_name: str = "SIGKILL",
               point: str = "evaluation") -> subprocess.CompletedProcess:
    """``python -m hpoflow *args`` in ``cwd``, sent ``signal_name`` after the ``at``-th evaluation (None: never);
    ``point="tell"``: as the run's ``at``-th ``Loop.tell`` starts instead (``KILL_AT_TELL``)."""
    cwd.mkdir(parents=True, exist_ok=True)
    env = cli_env()
    env.update(HPOFLOW_TEST_KILL_CLASS=task_class, HPOFLOW_TEST_KILL_AT=str(at if at is not None else -1),
               HPOFLOW_TEST_KILL_SIGNAL=signal_name)
    code = KILL_AT_TELL if point == "tell" else KILL_AT_EVALUATION
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


__all__ = ["KILL_AT_EVALUATION", "KILL_AT_TELL", "run_killed"]
