"""Markdown and CSV renderings of the per-task summaries."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from hpoflow.report.aggregate import Summary

CAPTION_KNOWN = ("Final cumulative and simple regret, query cost and wall time: mean ± 1.96·std/√n over the "
                 "n seeds; regret against the task's known optimum f*.")
CAPTION_REAL = ("Final cumulative and simple regret, query cost and wall time: mean ± 1.96·std/√n over the "
                "n seeds. The optimum of this (real) task is unknown: f* is the best value seen for the task "
                "across the selected runs.")


def _fmt(pair: tuple[float, float]) -> str:
    m, h = pair
    return f"{m:.4g} ± {h:.2g}"


def caption(rows: list[Summary]) -> str:
    return CAPTION_KNOWN if all(s.f_star_known for s in rows) else CAPTION_REAL


def format_table(rows: list[Summary]) -> str:
    """Markdown table: final cumulative and simple regret (mean ± 1.96·std/√n), query cost, wall time."""
    lines = ["| algorithm | n | cumulative regret | simple regret | query cost | wall time (s) |",
             "|---|---|---|---|---|---|"]
    for s in sorted(rows, key=lambda s: s.cumulative[0]):
        lines.append(f"| {s.algo} | {s.n} | {_fmt(s.cumulative)} | {_fmt(s.simple)} | {_fmt(s.query_cost)} | "
                     f"{_fmt(s.wall_time)} |")
    return "\n".join(lines)


def _config_text(config: dict[str, Any] | None) -> str:
    if config is None:
        return "n/a"
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in config.items())


def format_best_configs(rows: list[Summary]) -> str:
    """Markdown table: per algorithm, the best value seen, its seed and run, and its configuration."""
    lines = ["| algorithm | best value | seed | run | best configuration |", "|---|---|---|---|---|"]
    for s in sorted(rows, key=lambda s: s.algo):
        lines.append(f"| {s.algo} | {s.best_value:.6g} | {s.best_seed} | `{s.best_run[:12]}` | "
                     f"{_config_text(s.best_config)} |")
    return "\n".join(lines)


def markdown_report(summaries: dict[tuple[str, ...], list[Summary]], figures: dict[tuple[str, ...], list[Path]],
                    selection: str) -> str:
    """The whole report: per task the regret table with its caption, best configurations and figures."""
    parts = ["# hpoflow report", "", f"Selection: {selection}", ""]
    for key, rows in summaries.items():
        task = " ".join(key)
        italic = "*" + caption(rows).replace("*", "\\*") + "*"  # f* must not close the italics
        parts += [f"## {task}", "", format_table(rows), "", italic, "", "Best configuration per algorithm:", "",
                  format_best_configs(rows), ""]
        parts += [f"![{p.stem}]({p.name})" for p in figures.get(key, []) if p.suffix == ".png"]
        parts.append("")
    return "\n".join(parts)


CSV_FIELDS = ["task", "algo", "n", "cumulative_regret_mean", "cumulative_regret_ci95", "simple_regret_mean",
              "simple_regret_ci95", "query_cost_mean", "query_cost_ci95", "wall_time_mean", "wall_time_ci95",
              "f_star", "best_value", "best_seed", "best_run", "best_config"]


def write_csv(summaries: dict[tuple[str, ...], list[Summary]], path: Path) -> Path:
    """One row per (task, algorithm); ``*_ci95`` is the half-width 1.96·std/√n."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for rows in summaries.values():
            for s in rows:
                writer.writerow({
                    "task": s.task, "algo": s.algo, "n": s.n,
                    "cumulative_regret_mean": s.cumulative[0], "cumulative_regret_ci95": s.cumulative[1],
                    "simple_regret_mean": s.simple[0], "simple_regret_ci95": s.simple[1],
                    "query_cost_mean": s.query_cost[0], "query_cost_ci95": s.query_cost[1],
                    "wall_time_mean": s.wall_time[0], "wall_time_ci95": s.wall_time[1],
                    "f_star": "known optimum" if s.f_star_known else "best seen across selected runs",
                    "best_value": s.best_value, "best_seed": s.best_seed, "best_run": s.best_run,
                    "best_config": json.dumps(s.best_config, default=str) if s.best_config is not None else ""})
    return path
