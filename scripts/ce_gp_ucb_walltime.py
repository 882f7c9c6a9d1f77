"""Wall time of one ce_gp_ucb run on tv_synthetic (eps = 0.03, kappa = 0.9) for growing T.

The time-varying GP never refactorises (fixed hyperparameters): each observed round costs O(n^2 + nm)
and every round O(m) for the posterior over the m = 1000 candidates, plus the local-optima search.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.ce_common import run_one

if __name__ == "__main__":
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 shared cores)")
    print(f"{'T':>6s} {'wall s':>8s} {'ms/round':>9s} {'C_T':>6s} {'R_T/T':>7s}")
    for T in (int(a) for a in (sys.argv[1:] or ["500", "1000", "2000"])):
        r = run_one("ce_gp_ucb", "tv_synthetic", T, 0, {"kappa": 0.9}, {"epsilon": 0.03}, {"epsilon": 0.03})
        print(f"{T:>6d} {r['wall']:>8.2f} {1000 * r['wall'] / T:>9.2f} {r['C']:>6.0f} {r['R/T']:>7.3f}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
