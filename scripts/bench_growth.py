"""Benchmark: how decision time per round grows with the work (process CPU clock, one thread).

(1) gp_ei on Hartmann-6 (d = 6) from n observations: median (mean) ms over ``--rounds`` consecutive rounds, and
    the slope of a log-log fit over n. Expected: the acquisition search costs O(n^2) per round (a triangular
    solve per posterior call), the occasional refit O(n^3) per likelihood evaluation (amortised by the refit
    schedule), so a slope between 1 and 2 while the fixed per-call overhead still matters, towards 2-3 later.
(2) ce_gp_ucb on tv_synthetic (eps 0.03, kappa 0.9, seed 0) for T rounds: CPU ms per round over the whole run,
    and C_T (queries). Expected: an observed round costs O(C_t^2 + C_t m) (m = 1000 candidates), so ms/round grows
    with C_T, i.e. roughly like sqrt(T) to T while C_T grows sublinearly.
(3) GO-UCB on Styblinski-Tang with d_x inputs (T = ``--go-rounds``, 8 Phase I points): mean CPU ms per round over
    Phase II (the first Phase II round runs the regression oracle and is also shown alone). Expected: about linear
    in d_w = the network's weight count (linear in d_x): the ascent's and the oracle's passes are O(d_w) a step and
    the ball's algebra O(d_w t) a vector plus a thin SVD of its t gradient rows, O(t^2 d_w) a round
    (``go_ucb_ellipsoid``; before 9437748 a Cholesky factor and its inverse, O(d_w^3) a round).
    This measures whatever ``hpoflow/algorithms/go_ucb.py`` is on the measured revision.

Usage: python scripts/bench_growth.py [--parts gp ce go] [--ns 50 100 200 400 800] [--ts 500 2000 8000]
       [--dxs 5 20 50] [--against <git rev>]
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import add_against_arguments, answered_as_child, measure_with_against, pin_threads

pin_threads()

import numpy as np
import torch


def gp_ei_times(n: int, rounds: int) -> list[float]:
    """CPU seconds of ask + tell for ``rounds`` consecutive gp_ei rounds from ``n`` random observations."""
    import hpoflow
    from hpoflow.tasks.synthetic import make_hartmann6

    task = make_hartmann6()
    algo = hpoflow.make_algorithm("gp_ei", task, 0, rounds=n + rounds)  # at its conf/ defaults
    X = torch.rand(n, task.space.dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y = torch.tensor([task.evaluate(task.space.decode(x), round=1).value for x in X], dtype=torch.float64)
    algo.X, algo.y = list(X), (task.direction.sign * y).tolist()
    algo.model.fit(X, torch.tensor(algo.y, dtype=torch.float64))
    return cpu_rounds(task, algo, range(n + 1, n + rounds + 1))


def cpu_rounds(task, algo, rounds, queried: list[bool] | None = None) -> list[float]:
    """CPU seconds of ``ask`` + ``tell`` per round (the objective's own time excluded); ``queried`` collects
    whether each round observed the objective."""
    times = []
    for t in rounds:
        start = time.process_time()
        s = algo.ask(t)
        asked = time.process_time()
        ev = task.evaluate(s.config, round=t, observe=s.observe)
        told = time.process_time()
        algo.tell(s, ev)
        times.append((asked - start) + (time.process_time() - told))
        if queried is not None:
            queried.append(bool(s.observe))
    return times


def build(algo: str, task: str, rounds: int, seed: int = 0, surrogate: str | None = None,
          algo_kw: dict | None = None, task_kw: dict | None = None, surrogate_kw: dict | None = None):
    """The task and algorithm of ``python -m hpoflow algo=<algo> task=<task> ...``, built by the library."""
    import hpoflow

    overrides = [f"algo={algo}", f"task={task}", f"budget.rounds={rounds}", f"seed={seed}", "tracking=off"]
    overrides += [f"surrogate={surrogate}"] if surrogate is not None else []
    for group, values in (("algo", algo_kw), ("task", task_kw), ("surrogate", surrogate_kw)):
        overrides += [f"{group}.{key}={value}" for key, value in (values or {}).items()]
    return hpoflow.make_components(overrides)


def ce_gp_ucb_run(T: int) -> dict[str, float]:
    task, algo = build("ce_gp_ucb", "tv_synthetic", T, surrogate="tv_gp", algo_kw={"kappa": 0.9},
                       task_kw={"epsilon": 0.03}, surrogate_kw={"epsilon": 0.03})
    queried: list[bool] = []
    times = cpu_rounds(task, algo, range(1, T + 1), queried)
    return {"ms_per_round": 1000 * statistics.mean(times), "queries": float(sum(queried)), "cpu_s": sum(times),
            "last_quarter_ms": 1000 * statistics.mean(times[3 * T // 4:])}


def go_ucb_run(dx: int, rounds: int, n_init: int) -> dict[str, float]:
    task, algo = build(
        "go_ucb", "styblinski_tang", rounds, surrogate="nn", task_kw={"dim": dx}, algo_kw={"n_init": n_init}
    )
    times = cpu_rounds(task, algo, range(1, rounds + 1))
    phase2 = times[n_init:]
    return {"d_w": float(getattr(algo, "d_w", float("nan"))), "mean_ms": 1000 * statistics.mean(phase2),
            "oracle_ms": 1000 * phase2[0], "rest_ms": 1000 * statistics.mean(phase2[1:])}


def measure(args: argparse.Namespace) -> dict:
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    np.random.seed(0)
    out: dict = {}
    if "gp" in args.parts:
        out["gp"] = {str(n): gp_ei_times(n, args.rounds) for n in args.ns}
    if "ce" in args.parts:
        out["ce"] = {str(T): ce_gp_ucb_run(T) for T in args.ts}
    if "go" in args.parts:
        out["go"] = {str(dx): go_ucb_run(dx, args.go_rounds, args.go_init) for dx in args.dxs}
    return out


def slope(xs: list[float], ys: list[float]) -> float:
    """Exponent of a least-squares line through (log x, log y)."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def ms(times: list[float]) -> str:
    return f"{1000 * statistics.median(times):.0f} ({1000 * statistics.mean(times):.0f})"


def print_tables(args: argparse.Namespace, results: dict[str, dict]) -> None:
    labels = list(results)
    if "gp" in args.parts:
        print(f"\n(1) gp_ei on Hartmann-6 (d = 6): decision time per round, CPU ms, median (mean) over {args.rounds} "
              "consecutive rounds from n random observations")
        print("| n | " + " | ".join(labels) + " |")
        print("|---|" + "---|" * len(labels))
        for n in args.ns:
            print(f"| {n} | " + " | ".join(ms(r["gp"][str(n)]) for r in results.values()) + " |")
        for label, r in results.items():
            means = [statistics.mean(r["gp"][str(n)]) for n in args.ns]
            medians = [statistics.median(r["gp"][str(n)]) for n in args.ns]
            print(f"log-log slope over n ({label}): mean {slope(args.ns, means):.2f}, "
                  f"median {slope(args.ns, medians):.2f}")
    if "ce" in args.parts:
        print("\n(2) ce_gp_ucb on tv_synthetic (eps 0.03, kappa 0.9, seed 0): CPU ms per round over the whole run "
              "(and over its last quarter), C_T = queries")
        print("| T | " + " | ".join(f"{label} ms/round (last 1/4) | C_T" for label in labels) + " |")
        print("|---|" + "---|---|" * len(labels))
        for T in args.ts:
            cells = [f"{r['ce'][str(T)]['ms_per_round']:.2f} ({r['ce'][str(T)]['last_quarter_ms']:.2f}) | "
                     f"{r['ce'][str(T)]['queries']:.0f}" for r in results.values()]
            print(f"| {T} | " + " | ".join(cells) + " |")
        for label, r in results.items():
            print(f"log-log slope of ms/round over T ({label}): "
                  f"{slope(args.ts, [r['ce'][str(T)]['ms_per_round'] for T in args.ts]):.2f}")
    if "go" in args.parts:
        print(f"\n(3) GO-UCB on Styblinski-Tang (T = {args.go_rounds}, {args.go_init} Phase I points, seed 0): "
              "CPU ms per Phase II round: mean | the oracle round | the others")
        print("| d_x | d_w | " + " | ".join(f"{label} mean | oracle | others" for label in labels) + " |")
        print("|---|---|" + "---|---|---|" * len(labels))
        for dx in args.dxs:
            first = next(iter(results.values()))["go"][str(dx)]
            cells = [f"{r['go'][str(dx)]['mean_ms']:.0f} | {r['go'][str(dx)]['oracle_ms']:.0f} | "
                     f"{r['go'][str(dx)]['rest_ms']:.0f}" for r in results.values()]
            print(f"| {dx} | {first['d_w']:.0f} | " + " | ".join(cells) + " |")
        for label, r in results.items():
            d_w = [r["go"][str(dx)]["d_w"] for dx in args.dxs]
            if all(math.isfinite(v) for v in d_w):
                print(f"log-log slope of the non-oracle rounds over d_w ({label}): "
                      f"{slope(d_w, [r['go'][str(dx)]['rest_ms'] for dx in args.dxs]):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", default=["gp", "ce", "go"], choices=["gp", "ce", "go"])
    parser.add_argument("--ns", type=int, nargs="+", default=[50, 100, 200, 400, 800])
    parser.add_argument("--rounds", type=int, default=8, help="consecutive gp_ei rounds timed per n")
    parser.add_argument("--ts", type=int, nargs="+", default=[500, 2000, 8000])
    parser.add_argument("--dxs", type=int, nargs="+", default=[5, 20, 50])
    parser.add_argument("--go-rounds", type=int, default=30)
    parser.add_argument("--go-init", type=int, default=8)
    add_against_arguments(parser)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return
    print(f"# python scripts/bench_growth.py {' '.join(sys.argv[1:])}")
    print("# process CPU time, 1 thread (OMP/OPENBLAS/MKL_NUM_THREADS=1); a shared machine: wall time is not quoted")
    results = measure_with_against(args, measure, __file__)
    print_tables(args, results)


if __name__ == "__main__":
    main()
