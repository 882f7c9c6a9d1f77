"""Progress display: a bar only on a terminal and with progress=true; a log-file line per round always."""
from __future__ import annotations

import io
import logging

from rich.console import Console

from hpoflow.core.records import Record
from hpoflow.runner.progress import LOGGER_NAME, RunProgress


def _feed(progress: RunProgress, rounds: int) -> None:
    for t in range(1, rounds + 1):
        progress(Record(round=t, config={"x": t}, value=float(10 - t)),
                 {"value": 10.0 - t, "best_value": 10.0 - t, "cumulative_regret": 1.5 * t, "simple_regret": 0.1,
                  "query_cost": float(t), "wall_time": 0.01 * t})


def test_bar_on_a_terminal_shows_round_best_regret_and_cost():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160)
    with RunProgress(4, "gp_ei/branin s0", console=console) as p:
        assert p.live
        _feed(p, 4)
    out = buf.getvalue()
    assert "gp_ei/branin s0" in out and "4/4" in out
    assert "best 6" in out and "R_T 6" in out and "cost 4" in out and "ETA" in out


def test_quiet_when_not_a_terminal_or_disabled():
    for console, enabled in ((Console(file=io.StringIO(), force_terminal=False), True),
                             (Console(file=io.StringIO(), force_terminal=True), False)):
        with RunProgress(3, console=console, enabled=enabled) as p:
            assert not p.live
            _feed(p, 3)
        assert console.file.getvalue() == ""


def test_round_lines_go_to_log_files_not_to_the_console(tmp_path):
    root = logging.getLogger()
    file_handler = logging.FileHandler(tmp_path / "job.log")
    stream = io.StringIO()
    console_handler = logging.StreamHandler(stream)
    old_level = root.level
    progress_logger = logging.getLogger(LOGGER_NAME)
    was_disabled, disable_level = progress_logger.disabled, logging.root.manager.disable
    progress_logger.disabled = False  # as in a fresh CLI process: this xdist worker's earlier test files may have
    logging.disable(logging.NOTSET)   # switched it off (seen once in CI: no line reached the file, 0 of 2)
    root.addHandler(file_handler)
    root.addHandler(console_handler)
    root.setLevel(logging.INFO)
    try:
        with RunProgress(6, enabled=False, log_every=2) as p:
            _feed(p, 5)  # lines at rounds 2 and 4 (every 2); round 6 would be the last
    finally:
        root.removeHandler(file_handler)
        root.removeHandler(console_handler)
        root.setLevel(old_level)
        progress_logger.disabled = was_disabled
        logging.disable(disable_level)
        file_handler.close()
        logging.getLogger(LOGGER_NAME).handlers = []
    lines = (tmp_path / "job.log").read_text().splitlines()
    assert [ln.split()[1] for ln in lines] == ["2/6", "4/6"]
    assert "cumulative_regret=6" in lines[1] and "query_cost=4" in lines[1]
    assert stream.getvalue() == ""


def test_cli_log_file_has_a_line_per_round_and_no_bar_without_tty(run_cli, store, tmp_path):
    proc = run_cli("algo=random", "task=branin", "budget.rounds=4", f"tracking.uri={store}",
                   f"hydra.run.dir={tmp_path / 'run'}")
    log = next((tmp_path / "run").glob("*.log")).read_text()
    assert [f"round {t}/4" in log for t in range(1, 5)] == [True] * 4
    assert "round 1/4" not in proc.stdout and "ETA" not in proc.stderr
