"""Online HPO during one training run (paper 002 §2.1 / App. C, scaled down): an MLP on sklearn digits.

Each round = 20 SGD steps whose learning-rate multiplier (log scale, 0.05..20, 64 levels) the algorithm
picks; paying for a round = one validation pass; reward = validation-accuracy gain per round in
percentage points, clipped to [-2, 2]. TV-GP-UCB with three query rules (always / Bernoulli / CE) is
compared on final test accuracy and validation passes spent; a fixed multiplier of 1 (no tuning, no
validation) is the reference. Matérn-5/2 time-varying GP, eps = 0.2, noise variance 0.25, beta = 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.ce_common import run_one

GP = {"kernel": "matern52", "lengthscale": 0.2, "epsilon": 0.2, "noise": 0.25, "outputscale": 1.0}
TASK = {"n_multipliers": 64, "steps_per_round": 20}
METHODS = [
    ("TV-GP-UCB always", "tv_gp_ucb", {}),
    ("TV-GP-UCB Ber(0.3)", "tv_gp_ucb", {"query": "bernoulli", "query_prob": 0.3}),
    ("CE-GP-UCB kappa=0.9", "ce_gp_ucb", {"kappa": 0.9}),
    ("CE-GP-UCB kappa=0.7", "ce_gp_ucb", {"kappa": 0.7}),
]


def fixed_multiplier(rounds: int, seed: int) -> float:
    from hpoflow.tasks.online_hpo import OnlineDigits

    task = OnlineDigits(**TASK, seed=seed)
    ev = None
    for t in range(1, rounds + 1):
        ev = task.evaluate({"lr_mult": 1.0}, round=t, observe=False)
    return ev.metrics["test_acc"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--lr-mult-high", type=float, default=20.0, help="upper end of the multiplier range")
    args = ap.parse_args()
    TASK["lr_mult_high"] = args.lr_mult_high
    rows = {label: {"acc": [], "cost": [], "wall": []} for label, *_ in METHODS}
    base = [fixed_multiplier(args.rounds, s) for s in range(args.seeds)]
    for seed in range(args.seeds):
        for label, algo, kw in METHODS:
            r = run_one(algo, "online_digits", args.rounds, seed, kw, TASK, GP)
            rows[label]["acc"].append(r["metrics"]["test_acc"])
            rows[label]["cost"].append(r["C"])
            rows[label]["wall"].append(r["wall"])
    print(f"Online HPO on digits: {args.rounds} rounds x {TASK['steps_per_round']} SGD steps, {args.seeds} seeds, "
          f"lr multiplier in [0.05, {args.lr_mult_high}] x base lr 0.05 (mean ± std)")
    print(f"{'method':24s} {'final test acc':>18s} {'validation passes':>20s} {'wall s':>8s}")
    print(f"{'fixed lr_mult = 1':24s} {np.mean(base):>10.4f} ± {np.std(base):.4f} {0:>20d} {'':>8s}")
    for label, r in rows.items():
        print(f"{label:24s} {np.mean(r['acc']):>10.4f} ± {np.std(r['acc']):.4f} "
              f"{np.mean(r['cost']):>12.1f} ± {np.std(r['cost']):5.1f} {np.mean(r['wall']):>8.1f}")


if __name__ == "__main__":
    main()
