"""Ablation of the GO-UCB options added on top of the paper (Phase I in Sigma_t, weight decay + centred
inputs for the oracle, periodic refits of w_0, beta, the linearised ball maximum) on go_ucb_f1 (n=5, T=25) and breast_cancer-mlp
(n=5, T=20), 2 seeds each. Cumulative regret against a fixed reference (f1: its optimum 26; MLP: accuracy
1.0, so the numbers are the cumulative CV error), over all rounds and over Phase II only.
Runs are cached as JSON under --out; variants are given as a JSON object {name: algo overrides}.

Usage: python scripts/ablate_go_ucb.py ['{"name": {"phase1_in_sigma": true}}'] [--out /tmp/go_ucb_ablation]
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
VARIANTS = {
    "v0_defaults": {},
    "a_phase1": {"phase1_in_sigma": True},
    "ab_phase1_wd_center": {"phase1_in_sigma": True, "model": {"weight_decay": 1e-3, "center_inputs": True}},
    "abc_refit5": {"phase1_in_sigma": True, "refit_every": 5,
                   "model": {"weight_decay": 1e-3, "center_inputs": True}},
    "c1_refit1": {"refit_every": 1},
    "ac1_phase1_refit1": {"phase1_in_sigma": True, "refit_every": 1},
    "beta0.1": {"beta": 0.1},
    "linear": {"ball_max": "linear"},
}
TASKS = [("go_ucb_f1", {"dim": 20}, 25, 26.0), ("breast_cancer", {"model": "mlp"}, 20, 1.0)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("variants", nargs="?", default=None, help="JSON {name: algo overrides}; default: all above")
    p.add_argument("--out", type=Path, default=Path("/tmp/go_ucb_ablation"))
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    variants = json.loads(args.variants) if args.variants else VARIANTS
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    rows = []
    for name, kw in variants.items():
        for task, tkw, T, ref in TASKS:
            for seed in (0, 1):
                f = args.out / f"{name}__{task}__{seed}.json"
                if not f.exists() and not args.report_only:
                    import torch

                    torch.set_num_threads(1)
                    from hpoflow import app

                    raw = {"algo": {"name": "go_ucb", "n_init": 5, **kw}, "surrogate": {"name": "gp"},
                           "task": {"name": task, **tkw}, "hardware": {"name": "cpu", "device": "cpu"},
                           "tracking": {"enabled": False}, "budget": {"rounds": T}, "seed": seed}
                    start = time.perf_counter()
                    r = app.run_from_settings(app.validate(raw), print_summary=False)
                    vals = [x.true_value if x.true_value is not None else x.value for x in r.records]
                    f.write_text(json.dumps({"values": vals, "cum": sum(ref - v for v in vals),
                                             "wall": time.perf_counter() - start}))
                if f.exists():
                    vals = json.loads(f.read_text())["values"]
                    rows.append((name, task, seed, sum(ref - v for v in vals), sum(ref - v for v in vals[5:])))
    print("GO-UCB ablation: cumulative regret (all rounds / Phase II only) per seed; n=5; "
          "f1 T=25 (ref 26), breast_cancer-mlp T=20 (ref accuracy 1.0); '-': not run")
    print(f"{'variant':<22}{'f1 seed 0':>16}{'f1 seed 1':>16}{'mlp seed 0':>16}{'mlp seed 1':>16}  overrides")
    for name, kw in variants.items():
        cells = []
        for task, *_ in TASKS:
            for seed in (0, 1):
                hit = [r for r in rows if r[:3] == (name, task, seed)]
                cells.append(f"{round(hit[0][3], 3):7.3g} /{round(hit[0][4], 3):6.3g}" if hit else "-")
        print(f"{name:<22}" + "".join(f"{c:>16}" for c in cells) + f"  {json.dumps(kw)}")


if __name__ == "__main__":
    main()
