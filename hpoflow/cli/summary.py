"""The end-of-run summary's result lines: the best value and configuration; with constraints the best *feasible*
one; with several objectives the Pareto front as a short table (never a single "best" of the first objective)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hpoflow.core.objectives import Objectives, best_of_front, pareto_front
from hpoflow.core.records import Record, at_full_fidelity

FRONT_ROWS = 10  # the table's rows at most; the whole front is the run's pareto.csv artifact


def summary_lines(summary: dict[str, Any], objectives: Objectives | None = None,
                  records: Sequence[Record] = ()) -> list[str]:
    """The lines that say what the run found, then its regret, cost and failures.

    Args:
        summary: the run's summary (best value/config, regret, ``query_cost``, ``failed``, ``pareto_size``, ...).
        objectives: the task's objectives and constraints, None for one unconstrained objective.
        records: the run's records (the front and the feasible count are read from them).
    """
    if objectives is None and summary.get("best_value") is None and summary.get("incumbent_fidelity") is not None:
        lines = [f"best value: none yet: no evaluation reached the full fidelity ({summary['incumbent_fidelity']:g}),"
                 " the only level an incumbent is taken from"]
    elif objectives is None:
        lines = [f"best value: {summary.get('best_value')}", f"best config: {summary.get('best_config')}"]
    elif len(objectives.directions) == 1:
        lines = _feasible_lines(objectives, records, summary.get("incumbent_fidelity"))
    else:
        lines = _front_lines(summary, objectives, records, summary.get("incumbent_fidelity"))
    if summary.get("cumulative_regret") is not None:
        lines.append(f"cumulative regret: {summary['cumulative_regret']:.6g}   "
                     f"simple regret: {summary.get('simple_regret')}")
    lines.append(f"query cost: {summary.get('query_cost')}   failed evaluations: {int(summary.get('failed') or 0)}")
    if summary.get("cost_note"):  # a cost budget: what was spent of it, why the run ended below or beyond it
        lines.append(str(summary["cost_note"]))
    return lines


def _observed(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.queried and not r.failed and r.values]


def _feasibility(objectives: Objectives, observed: list[Record]) -> str:
    if not objectives.constraints:
        return ""
    ok = sum(objectives.feasible(r.values) for r in observed)
    return f"   ({ok} of {len(observed)} evaluations feasible)"


def _full(observed: list[Record], top: float | None) -> list[Record]:
    """The evaluations at the full fidelity ``top`` (all of them without a fidelity): the only ones on the front."""
    return [r for r in observed if at_full_fidelity(r, top)]


def _feasible_lines(objectives: Objectives, records: Sequence[Record], top: float | None = None) -> list[str]:
    """One objective with constraints: the best feasible value and configuration (raw sign), or that none was."""
    observed = _observed(records)
    full = _full(observed, top)
    config, value = best_of_front(objectives, pareto_front(objectives, ((r.config, r.values) for r in full)))
    name = objectives.names[0]
    word = "best feasible" if objectives.constraints else "best"
    if config is None and observed and not full:
        return [f"{word} value: none yet: no evaluation reached the full fidelity ({top:g})"
                f"{_feasibility(objectives, observed)}"]
    if config is None:
        return [f"{word} value: none{_feasibility(objectives, observed)}"]
    how = "maximised" if objectives.directions[name] == "max" else "minimised"
    return [f"{word} value: {value:.6g} ({name}, {how}){_feasibility(objectives, observed)}",
            f"{word} config: {config}"]


def _front_lines(summary: dict[str, Any], objectives: Objectives, records: Sequence[Record],
                 top: float | None = None) -> list[str]:
    """Several objectives: the front's size and hypervolume, then its points (round and raw values) as a table; the
    front holds full-fidelity evaluations only (``top``: the full fidelity, None without one)."""
    observed = _observed(records)
    front = pareto_front(objectives, ((r.config, r.values) for r in _full(observed, top)))
    hv = summary.get("hypervolume")
    head = f"pareto front: {len(front)} points" + ("" if hv is None else f"   hypervolume: {hv:.6g}")
    lines = [head + _feasibility(objectives, observed)]
    if not front:
        return lines
    rounds = [next(r.round for r in _full(observed, top) if r.config == p["config"] and r.values == p["values"])
              for p in front]
    first, sign = objectives.names[0], objectives.signs()[0]
    order = sorted(range(len(front)), key=lambda i: (sign * front[i]["values"][first], rounds[i]))
    header = ["round", *(f"{n} ({d})" for n, d in objectives.directions.items())]
    rows = [[str(rounds[i]), *(f"{front[i]['values'][n]:.6g}" for n in objectives.names)] for i in order[:FRONT_ROWS]]
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    lines += ["  " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in (header, *rows)]
    if len(front) > FRONT_ROWS:
        lines.append(f"  ... {len(front) - FRONT_ROWS} more (all of them: the run's pareto.csv artifact)")
    return lines
