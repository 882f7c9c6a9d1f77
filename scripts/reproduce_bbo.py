"""Reproduce paper 000's tables: final validation loss of BBO-EI / BBO-UCB against the inner horizon N.

Grid (as in the paper): outer rounds T in {20, 40, 60}, five SGD-step counts N per T
(T=20: 100..3000, T=40: 500..4000, T=60: 1000..6000), both acquisitions, several seeds. The
"performance" of a run is the observed validation loss at the point it returns after round T,
lambda+_T = argmin over observed of the posterior mean (Algorithm 1's rule, used for both acquisitions
so that they are scored alike); for UCB the table also shows the last query (Algorithm 2's return).

Differences from the paper, so that it runs on this shared 2-core CPU in under 30 minutes:
  * digits (8x8, 1077 training images) instead of MNIST;
  * N is the paper's value times ``--n-scale`` (default 0.1: N = 10..600). One SGD step costs ~0.7 ms
    for digits_cnn and ~0.25 ms for digits_mlp here (per-call overhead, not FLOPs: a smaller network
    or minibatch barely helps), and the paper's N would need ~9 M steps. On 1077 images 600 steps of
    32 are ~18 epochs, more passes than the paper's 6000 steps make over MNIST's 60 000 images;
  * ``--task digits_mlp`` (one hidden layer of 32) is the default network: digits_cnn, the paper's
    two-conv + one-FC shape, is ~3x slower per step and did not fit the time budget on the loaded
    machine (``--task digits_cnn`` runs it);
  * the acquisition maximiser uses ``--raw-samples`` 64 and ``--restarts`` 2 (the space is 1-d: log lr).

Usage: ``python scripts/reproduce_bbo.py [--seeds 3] [--n-scale 0.1] [--workers 2] [--task digits_cnn]``.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRID = {20: (100, 500, 1000, 2000, 3000), 40: (500, 1000, 2000, 3000, 4000), 60: (1000, 2000, 3000, 4000, 6000)}
PAPER = {  # mean, std of the paper's tables (Section 5)
    "bbo_ei": {20: [(3.15, .75), (2.73, .03), (2.70, .04), (2.43, .12), (2.46, .13)],
               40: [(3.45, .85), (2.42, .23), (2.44, .55), (2.39, .09), (2.51, .09)],
               60: [(2.58, .58), (2.40, .35), (2.34, .28), (2.10, .08), (2.25, .17)]},
    "bbo_ucb": {20: [(2.93, .60), (2.59, .47), (2.49, .34), (2.39, .07), (2.31, .13)],
                40: [(2.56, .53), (2.34, .45), (2.29, .29), (2.27, .30), (2.22, .16)],
                60: [(2.57, .27), (2.26, .28), (2.23, .17), (2.19, .19), (2.20, .10)]},
}
LABEL = {"bbo_ei": "EI", "bbo_ucb": "UCB"}


def run_one(job: tuple) -> tuple[tuple[str, int, int, int], dict[str, float]]:
    """One BBO run with tracking off; returns the returned point's validation/test loss after round T."""
    import torch

    torch.set_num_threads(1)
    from hpoflow.app import run_from_settings, validate

    algo, T, N, paper_N, seed, task, width, batch, raw_samples, restarts = job
    raw = {"algo": {"name": algo, "returned": "mean",
                    "optimizer": {"raw_samples": raw_samples, "num_restarts": restarts, "max_iter": 50}},
           "surrogate": {"name": "gp"},
           "task": {"name": task, "inner_steps": N, "batch_size": batch, "width": width},
           "hardware": {"name": "cpu", "device": "cpu", "threads": 1}, "tracking": {"enabled": False},
           "budget": {"rounds": T}, "seed": seed}
    start = time.perf_counter()
    result = run_from_settings(validate(raw), print_summary=False)
    last, record = result.metrics[-1], result.records[-1]
    return (algo, T, paper_N, seed), {"val": last["returned_value"], "test": last.get("returned_test_loss", math.nan),
                                      "last": record.value, "last_test": record.metrics.get("test_loss", math.nan),
                                      "best": result.summary["best_value"], "time": time.perf_counter() - start}


def fmt(values: list[float], expected: int) -> str:
    """mean ± std; a cell with fewer seeds than expected says how many it has, e.g. (2)."""
    if not values:
        return "n/a"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3f} ± {sd:.3f}" + (f"({len(values)})" if len(values) < expected else "")


LOG_LINE = re.compile(r"\('(\w+)', (\d+), (\d+), (\d+)\) val=(\S+) test=(\S+)(?: last=(\S+) last_test=(\S+))? "
                      r"\((\d+)s\)")


def parse_log(path: str) -> dict:
    """Results from the per-run progress lines a (possibly interrupted) run wrote to stderr."""
    results = {}
    for line in Path(path).read_text().splitlines():
        m = LOG_LINE.search(line)
        if m:
            algo, T, n, seed, val, test, last, last_test, secs = m.groups()
            entry = results.setdefault((algo, int(T), int(n), int(seed)), {})
            entry.update(val=float(val), test=float(test), time=float(secs))
            if last is not None:
                entry.update(last=float(last), last_test=float(last_test))
    return results


def table(results: dict, algo: str, T: int, key: str, seeds: list[int], n_scale: float) -> list[str]:
    ns = GRID[T]
    width = 15
    head = "SGD iteration".ljust(16) + "".join(f"{round(n * n_scale):>{width}d}" for n in ns)
    label = {"val": "val loss", "test": "test loss", "last": "last query val", "last_test": "last query test"}[key]
    row = label.ljust(16) + "".join(
        f"{fmt([results[(algo, T, n, s)][key] for s in seeds if key in results.get((algo, T, n, s), {})], len(seeds)):>{width}}"
        for n in ns)
    lines = [head, row]
    if key == "val":
        lines.append("paper (MNIST)".ljust(16) + "".join(f"{f'{m:.2f} ± {s:.2f}':>{width}}" for m, s in PAPER[algo][T]))
        lines.append("paper N".ljust(16) + "".join(f"{n:>{width}d}" for n in ns))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n-scale", type=float, default=0.1, help="N = paper's N times this (1.0: the paper's N)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--task", default="digits_mlp", choices=("digits_mlp", "digits_cnn"))
    p.add_argument("--width", type=int, default=0, help="hidden units / conv channels (0: 32 for mlp, 8 for cnn)")
    p.add_argument("--raw-samples", type=int, default=64)
    p.add_argument("--restarts", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rounds", type=int, nargs="*", default=sorted(GRID), help="subset of T values")
    p.add_argument("--algos", nargs="*", default=list(LABEL), choices=list(LABEL))
    p.add_argument("--resume", nargs="*", help="skip runs found in these progress logs (same settings!)")
    p.add_argument("--from-log", nargs="*", help="only print the tables from the progress lines of an earlier run's stderr")
    args = p.parse_args()
    seeds = list(range(args.seeds))
    args.width = args.width or (32 if args.task == "digits_mlp" else 8)
    if args.from_log:
        results = {}
        for path in args.from_log:
            for key, value in parse_log(path).items():
                results.setdefault(key, {}).update(value)
        print(f"(from {len(results)} runs logged in {args.from_log})")
        print("\n".join(report(results, seeds, args, wall=None)))
        return
    jobs = [(algo, T, max(2, round(n * args.n_scale)), n, s, args.task, args.width, args.batch_size,
             args.raw_samples, args.restarts)
            for algo in args.algos for T in args.rounds for n in GRID[T] for s in seeds]
    # seed-major (a cut-short run still has whole grids for its first seeds), longest first within a seed
    jobs.sort(key=lambda j: (j[4], -j[1] * j[2]))
    results: dict = {}
    for path in args.resume or []:  # runs are deterministic: reuse those an earlier run logged
        results.update(parse_log(path))
    jobs = [j for j in jobs if (j[0], j[1], j[3], j[4]) not in results]
    start = time.perf_counter()
    with get_context("spawn").Pool(args.workers) as pool:
        for i, (key, res) in enumerate(pool.imap_unordered(run_one, jobs), 1):
            results[key] = res
            print(f"[{i}/{len(jobs)}] {key} val={res['val']:.4f} test={res['test']:.4f} last={res['last']:.4f} "
                  f"last_test={res['last_test']:.4f} ({res['time']:.0f}s)",
                  file=sys.stderr, flush=True)
    print("\n".join(report(results, seeds, args, wall=time.perf_counter() - start)))


def report(results: dict, seeds: list[int], args: argparse.Namespace, wall: float | None) -> list[str]:
    """The paper's layout: per acquisition and T, a row of N values and a row of final losses."""
    out = [(f"BBO on {args.task} (width {args.width}, minibatch {args.batch_size}), seeds {seeds}, "
            f"N = paper N x {args.n_scale}; final validation loss at the returned point (posterior-mean argmin), "
            "mean ± std over seeds"),
           f"total wall time {wall:.0f} s with {args.workers} workers" if wall is not None else "", ""]
    for algo, label in LABEL.items():
        out.append(f"=== {label} acquisition ===")
        for T in args.rounds:
            out.append(f"({args.rounds.index(T) + 1}) outer Bayesian optimization steps T = {T}")
            out += table(results, algo, T, "val", seeds, args.n_scale)
            out += table(results, algo, T, "test", seeds, args.n_scale)[1:]
            if algo == "bbo_ucb":  # Algorithm 2 returns the last query
                out += table(results, algo, T, "last", seeds, args.n_scale)[1:]
            out.append("")
    return out


if __name__ == "__main__":
    main()
