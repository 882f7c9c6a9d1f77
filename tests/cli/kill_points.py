"""A CLI run killed with SIGKILL at a chosen point, for the crash tests of tests/cli/: ``python -c KILL_AT_EVALUATION``
is ``python -m hpoflow`` whose task's ``evaluate_at`` kills the process right after its N-th call returned
(``HPOFLOW_TEST_KILL_AT=N``): the trial is trained and its state written, the round neither told nor checkpointed,
the worst moment for a run that continues trials."""
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


def run_killed(cwd: Path, args: list[str], at: int | None, task_class: str = "hpoflow.tasks.replay.ReplayTask",
               timeout: float = 600, signal_name: str = "SIGKILL") -> subprocess.CompletedProcess:
    """``python -m hpoflow *args`` in ``cwd``, sent ``signal_name`` after the ``at``-th evaluation (None: never)."""
    cwd.mkdir(parents=True, exist_ok=True)
    env = cli_env()
    env.update(HPOFLOW_TEST_KILL_CLASS=task_class, HPOFLOW_TEST_KILL_AT=str(at if at is not None else -1),
               HPOFLOW_TEST_KILL_SIGNAL=signal_name)
    return subprocess.run([sys.executable, "-c", KILL_AT_EVALUATION, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


__all__ = ["KILL_AT_EVALUATION", "run_killed"]
