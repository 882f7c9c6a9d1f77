"""Decision time per round of GO-UCB at d_x = 20 (d_w = 551) next to GP-EI, measured in one process.

Decision time = the loop's ``decision_time`` (ask + tell: for GO-UCB the Phase II ascent and the
rank-one update of Sigma_t; for GP-EI the GP refit and the acquisition maximisation). Both run on
Styblinski-Tang-20 with the same seed, budget and Phase I / initial design size, one after the other.

Usage: python scripts/bench_go_ucb.py [--rounds 40] [--n-init 8] [--seed 0] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")


def decision_times(algo: str, args: argparse.Namespace, **algo_kw: object) -> list[float]:
    from hpoflow import app

    raw = {"algo": {"name": algo, "n_init": args.n_init, **algo_kw}, "surrogate": {"name": "gp"},
           "task": {"name": "styblinski_tang", "dim": 20}, "hardware": {"name": "cpu", "device": "cpu"},
           "tracking": {"enabled": False}, "budget": {"rounds": args.rounds}, "seed": args.seed}
    result = app.run_from_settings(app.validate(raw), print_summary=False)
    return [m["decision_time"] for m in result.metrics]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--n-init", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(args.threads)
    from hpoflow.surrogates.parametric import ParametricModel

    d_w = ParametricModel(20).d_w
    columns = {"GO-UCB ball": decision_times("go_ucb", args), "GO-UCB bonus": decision_times("go_ucb", args, variant="bonus"),
               "GP-EI": decision_times("gp_ei", args)}
    print(f"decision time per round, seconds (d_x = 20, d_w = {d_w}, {args.threads} thread(s), "
          f"{platform.processor() or platform.machine()}, seed {args.seed}, n_init {args.n_init})")
    print(f"{'round':>6}" + "".join(f"{k:>14}" for k in columns))
    rounds = sorted({args.n_init + 1, *range(10, args.rounds + 1, 10), args.rounds})
    for t in rounds:
        print(f"{t:>6}" + "".join(f"{v[t - 1]:>14.3f}" for v in columns.values()))
    print(f"{'mean*':>6}" + "".join(f"{statistics.mean(v[args.n_init:]):>14.3f}" for v in columns.values()))
    print("* mean over rounds after the initial design (rounds n_init+1 .. T); the first Phase II round of "
          "GO-UCB also runs the Phase I regression oracle")


if __name__ == "__main__":
    main()
