"""Read runs back from MLflow and summarise them per task and algorithm, as the papers do.

Usage (same override syntax as the main CLI)::

    python -m hpoflow.report tracking.uri=sqlite:///outputs/mlflow.db tracking.experiment=branin report.out=figs

Prints, per task, final cumulative and simple regret as mean ± 1.96·std/sqrt(n) over seeds and writes a
regret-curve PNG per task. Runs with a known optimum use their logged regret; for real tasks f* is the
best value seen for that task across the selected runs (recomputed here), as in the GO-UCB paper.
"""
from __future__ import annotations

import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

TASK_PARAM_PREFIX = "task."
IGNORED_TASK_PARAMS = {"task.name"}


@dataclass
class RunCurve:
    """One run's per-round instantaneous regret (or values to recompute it from)."""

    run_id: str
    algo: str
    task_key: tuple[str, ...]
    seed: str
    status: str
    direction: str
    reference: str
    values: np.ndarray            # observed (or true) value per round, NaN where not queried
    regret: np.ndarray | None     # logged instantaneous regret per round (known optimum)
    query_cost: np.ndarray
    wall_time: float
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Summary:
    """Aggregated final numbers for one (task, algorithm)."""

    task: str
    algo: str
    n: int
    cumulative: tuple[float, float]
    simple: tuple[float, float]
    query_cost: tuple[float, float]
    wall_time: tuple[float, float]
    curves: np.ndarray  # n x T cumulative regret


def mean_ci(x: Sequence[float]) -> tuple[float, float]:
    """Mean and the 95% Wald half-width 1.96·std/sqrt(n) (sample std; 0 for one run)."""
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        return math.nan, math.nan
    half = 1.96 * a.std(ddof=1) / math.sqrt(a.size) if a.size > 1 else 0.0
    return float(a.mean()), float(half)


def _history(client: Any, run_id: str, key: str, rounds: int) -> np.ndarray:
    out = np.full(rounds, np.nan)
    for m in client.get_metric_history(run_id, key):
        if 1 <= m.step <= rounds:
            out[m.step - 1] = m.value
    return out


def load_curves(uri: str, experiment: str | None = None, sweep_id: str | None = None,
                include_failed: bool = False) -> list[RunCurve]:
    """Every selected run's curves, read with MLflow's client."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    if experiment:
        exp = client.get_experiment_by_name(experiment)
        if exp is None:
            names = ", ".join(e.name for e in client.search_experiments())
            raise SystemExit(f"Error: tracking.experiment='{experiment}' not found in {uri}; available: {names}")
        exp_ids = [exp.experiment_id]
    else:
        exp_ids = [e.experiment_id for e in client.search_experiments()]
    filt = f"tags.sweep_id = '{sweep_id}'" if sweep_id else ""
    runs = client.search_runs(exp_ids, filter_string=filt, max_results=50_000)
    curves = []
    for run in runs:
        status = run.info.status
        if status != "FINISHED" and not include_failed:
            continue
        rounds = int(float(run.data.params.get("budget.rounds", 0)) or 0)
        if rounds <= 0:
            continue
        task_key = (run.data.tags.get("task", "?"),) + tuple(
            f"{k.removeprefix(TASK_PARAM_PREFIX)}={v}" for k, v in sorted(run.data.params.items())
            if k.startswith(TASK_PARAM_PREFIX) and k not in IGNORED_TASK_PARAMS and v != "None")
        reference = run.data.tags.get("regret_reference", "none")
        values = _history(client, run.info.run_id, "value", rounds)
        truth = _history(client, run.info.run_id, "true_value", rounds)  # logged only where it differs
        values = np.where(np.isnan(truth), values, truth)
        regret = _history(client, run.info.run_id, "regret", rounds) if reference == "optimum" else None
        cost = _history(client, run.info.run_id, "query_cost", rounds)
        curves.append(RunCurve(run.info.run_id, run.data.tags.get("algo", "?"), task_key,
                               run.data.tags.get("seed", "?"), status, run.data.tags.get("direction", ""),
                               reference, values, regret, cost, float(run.data.metrics.get("wall_time", math.nan))))
    return curves


def _direction_sign(curves: list[RunCurve]) -> float:
    direction = next((c.direction for c in curves if c.direction), "")
    return 1.0 if direction == "maximize" else -1.0


def summarise(curves: list[RunCurve]) -> dict[tuple[str, ...], list[Summary]]:
    """Per task: one Summary per algorithm, with f* recomputed as the best value seen where unknown."""
    by_task: dict[tuple[str, ...], list[RunCurve]] = defaultdict(list)
    for c in curves:
        by_task[c.task_key].append(c)
    out: dict[tuple[str, ...], list[Summary]] = {}
    for task_key, runs in sorted(by_task.items()):
        sign = _direction_sign(runs)
        if any(c.regret is None for c in runs):
            f_star = max(np.nanmax(sign * c.values) for c in runs if not np.all(np.isnan(c.values)))
        by_algo: dict[str, list[tuple[np.ndarray, RunCurve]]] = defaultdict(list)
        for c in runs:
            r = c.regret if c.regret is not None else np.abs(f_star - sign * c.values)
            by_algo[c.algo].append((np.nan_to_num(r, nan=0.0), c))
        rows = []
        for algo, items in sorted(by_algo.items()):
            T = min(len(r) for r, _ in items)
            cum = np.stack([np.cumsum(r[:T]) for r, _ in items])
            simple = [float(np.min(np.where(np.isnan(c.values[:T]) & (c.regret is None), np.inf, r[:T])))
                      for r, c in items]
            costs = [float(np.nanmax(c.query_cost)) if not np.all(np.isnan(c.query_cost)) else math.nan
                     for _, c in items]
            rows.append(Summary(" ".join(task_key), algo, len(items), mean_ci(cum[:, -1]), mean_ci(simple),
                                mean_ci(costs), mean_ci([c.wall_time for _, c in items]), cum))
        out[task_key] = rows
    return out


def _fmt(pair: tuple[float, float]) -> str:
    m, h = pair
    return f"{m:.4g} ± {h:.2g}"


def format_table(rows: list[Summary]) -> str:
    """Markdown table: final cumulative and simple regret (mean ± 1.96·std/√n), query cost, wall time."""
    lines = ["| algorithm | n | cumulative regret | simple regret | query cost | wall time (s) |",
             "|---|---|---|---|---|---|"]
    for s in sorted(rows, key=lambda s: s.cumulative[0]):
        lines.append(f"| {s.algo} | {s.n} | {_fmt(s.cumulative)} | {_fmt(s.simple)} | {_fmt(s.query_cost)} | "
                     f"{_fmt(s.wall_time)} |")
    return "\n".join(lines)


def plot_task(task: str, rows: list[Summary], out: Path) -> Path:
    """Mean cumulative regret per round with 95% bands, one line per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for s in rows:
        T = s.curves.shape[1]
        mean = s.curves.mean(0)
        half = 1.96 * s.curves.std(0, ddof=1) / math.sqrt(s.n) if s.n > 1 else np.zeros(T)
        x = np.arange(1, T + 1)
        ax.plot(x, mean, label=f"{s.algo} (n={s.n})")
        ax.fill_between(x, mean - half, mean + half, alpha=0.2)
    ax.set_xlabel("round")
    ax.set_ylabel("cumulative regret")
    ax.set_title(task)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"regret_{task.replace(' ', '_').replace('=', '-')}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    from omegaconf import OmegaConf

    from hpoflow.tracking.store import default_uri

    args = argv if argv is not None else sys.argv[1:]
    bad = [a for a in args if "=" not in a]
    if bad:
        print(f"Error: argument '{bad[0]}' is not a key=value override; allowed keys: tracking.uri, "
              f"tracking.experiment, report.out, report.sweep_id, report.include_failed", file=sys.stderr)
        return 2
    cfg = OmegaConf.from_dotlist(args)
    tracking = cfg.get("tracking") or {}
    report = cfg.get("report") or {}
    uri = tracking.get("uri") or default_uri()
    curves = load_curves(uri, tracking.get("experiment"), report.get("sweep_id"),
                         bool(report.get("include_failed", False)))
    if not curves:
        print(f"Error: no finished runs found in {uri} (experiment={tracking.get('experiment')})", file=sys.stderr)
        return 1
    out = Path(report.get("out") or ".")
    caption_real = False
    for task_key, rows in summarise(curves).items():
        task = " ".join(task_key)
        print(f"\n### {task}\n")
        print(format_table(rows))
        if any(c.regret is None for c in curves if c.task_key == task_key):
            caption_real = True
        print(f"\nfigure: {plot_task(task, rows, out)}")
    if caption_real:
        print("\nWhere the optimum is unknown (real tasks), f* is the best value seen for the task across the "
              "selected runs.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
