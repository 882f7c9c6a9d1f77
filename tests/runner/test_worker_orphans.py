"""A process worker ends when the run's process is killed (kill -9 leaves no orphan training on)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PARENT = textwrap.dedent("""
    import os, sys, time
    from hpoflow.runner.workers import make_executor
    if __name__ == "__main__":
        pool = make_executor("process", 1, None)
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(120)
""")


def _alive(pid: int) -> bool:
    """Running, not a zombie left unreaped by a container's init."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    return state != "Z"


def test_a_process_worker_exits_when_its_parent_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    worker = int(parent.stdout.readline())
    assert _alive(worker)
    parent.send_signal(signal.SIGKILL)
    parent.wait(10)
    deadline = time.monotonic() + 20
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = _alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, f"worker {worker} outlived its killed parent"
