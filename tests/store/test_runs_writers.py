"""``python -m hpoflow.store.runs writers --wait-s``: every wait has a limit, and an empty wait is an error line
(the README's Ray walkthrough kills the pid it prints: waiting for a sweep that already died must end)."""
from __future__ import annotations

import subprocess
import sys
import time

from hpoflow.store.runs import main


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid names no process
    return proc.pid


def test_waiting_for_a_writer_stops_when_the_sweep_has_ended(tmp_path, capsys, empty_store_file):
    uri = f"sqlite:///{empty_store_file}"
    start = time.monotonic()
    status = main(["writers", "--pids", "--wait-s=120", f"--while-pid={_dead_pid()}", f"tracking.uri={uri}",
                   "tracking.experiment=cluster"])
    took = time.monotonic() - start
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err.startswith("Error: no RUNNING run with a live writer in tracking.experiment=cluster: process ")
    assert "(--while-pid) ended" in err and err.count("\n") == 1
    assert took < 30  # not the 120 s of --wait-s


def test_waiting_ends_at_its_limit_with_one_error_line(capsys, empty_store_file):
    status = main(["writers", "--wait-s=1", f"tracking.uri=sqlite:///{empty_store_file}"])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err == "Error: no RUNNING run with a live writer in the store: waited 1 s (--wait-s)\n"


def test_without_a_wait_no_writer_is_an_answer_not_an_error(capsys, empty_store_file):
    assert main(["writers", f"tracking.uri=sqlite:///{empty_store_file}"]) == 0
    assert capsys.readouterr() == ("", "")


def test_bad_wait_values_are_refused_in_one_line(capsys):
    assert main(["writers", "--wait-s=-1"]) == 2
    assert capsys.readouterr().err == "Error: --wait-s=-1.0 must be >= 0 (seconds)\n"
    assert main(["writers", "--while-pid=0"]) == 2
    assert capsys.readouterr().err == "Error: --while-pid=0 must be a process id (>= 1)\n"
