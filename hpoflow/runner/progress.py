"""Live progress of one run: a rich progress bar on a terminal, one log line per round for the log file.

``RunProgress`` is the loop's ``on_round(record, metrics)`` callback. The bar (round, best value, cumulative
regret, query cost, ETA) is drawn on stderr only when it is a terminal and ``progress=true``; otherwise it is
silent. Independently, every ``log_every`` rounds it writes a line to the ``hpoflow.progress`` logger, which
is routed to the log *files* of the root logger (Hydra's ``<run dir>/<job>.log``) and never to the console.
"""
from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from hpoflow.core.records import Record

if TYPE_CHECKING:  # typing.Self is Python 3.11+; we support 3.10
    from typing_extensions import Self

LOGGER_NAME = "hpoflow.progress"  # a stable name users configure; not the module path


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.5g}" if isinstance(x, (int, float)) else str(x)


def file_only_logger() -> logging.Logger:
    """The progress logger, attached to the root logger's file handlers only (none: propagate as usual).

    Why: Hydra's job logging sends root records to both the console and ``<job>.log``; per-round lines
    belong in the file, while the console shows the bar (or nothing when it is not a terminal).
    """
    logger = logging.getLogger(LOGGER_NAME)
    files: list[logging.Handler] = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    logger.handlers = files
    logger.propagate = not files
    if files:
        logger.setLevel(logging.INFO)
    return logger


class RunProgress:
    """Progress display and per-round log lines for one run; use as a context manager and ``on_round``.

    Args:
        total: the round budget (the bar's length), or None: no round limit (a cost budget ends the run).
        cost: the cost budget, or None; with it each line says ``(cost spent/budget)``, and without a round limit
            the bar measures the cost spent.
        label: shown left of the bar, e.g. ``gp_ei/branin s0``.
        enabled: ``progress`` from the config; the bar also needs a terminal.
        log_every: write a log line every this many rounds (and at the last round).
        console: a ``rich.console.Console`` (tests pass one that records); default: stderr.
    """

    def __init__(self, total: int | None, label: str = "", enabled: bool = True, log_every: int = 1,
                 console: Any = None, cost: float | None = None) -> None:
        self.total, self.label, self.log_every = total, label, max(1, int(log_every))
        self.cost = cost
        self.logger = file_only_logger()
        self._progress: Any = None
        self._task: Any = None
        if enabled:
            from rich.console import Console

            console = console or Console(stderr=True)
            if console.is_terminal:
                self._progress = self._make_progress(console)

    @property
    def live(self) -> bool:
        """Whether a bar is being drawn."""
        return self._progress is not None

    @staticmethod
    def _make_progress(console: Any) -> Any:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("best {task.fields[best]}  R_T {task.fields[cum]}  cost {task.fields[cost]}"),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                        console=console, transient=False, refresh_per_second=4)

    def __enter__(self) -> Self:
        if self._progress is not None:
            self._progress.start()
            total = self.total if self.total is not None or self.cost is None else self.cost
            self._task = self._progress.add_task(self.label or "run", total=total, best="-", cum="-",
                                                 cost="-")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, record: Record, metrics: dict[str, float]) -> None:
        best, cum, cost = metrics.get("best_value"), metrics.get("cumulative_regret"), metrics.get("query_cost")
        if self._progress is not None:
            by_cost = self.total is None and self.cost is not None
            completed = float(cost or 0.0) if by_cost else record.round
            self._progress.update(self._task, completed=completed, best=_fmt(best),
                                  cum=_fmt(cum), cost=_fmt(cost))
        if record.round % self.log_every == 0 or record.round == self.total:
            status = f" FAILED: {record.error}" if record.failed else ""
            self.logger.info("%s value=%s best=%s cumulative_regret=%s simple_regret=%s query_cost=%s "
                             "wall_time=%.3fs%s", self.position(record.round, cost), _fmt(metrics.get("value")),
                             _fmt(best), _fmt(cum), _fmt(metrics.get("simple_regret")), _fmt(cost),
                             float(metrics.get("wall_time", 0.0)), status)

    def position(self, round: int, spent: Any = None) -> str:
        """``round 5/30``, ``round 159 (cost 612/810)`` without a round limit, ``round 5/30 (cost 12/810)``."""
        out = f"round {round}" if self.total is None else f"round {round}/{self.total}"
        if self.cost is not None:
            out += f" (cost {_fmt(spent)}/{self.cost:g})"
        return out
