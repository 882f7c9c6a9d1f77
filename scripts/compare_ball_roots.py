"""Does the whitening root change how well GO-UCB's Step 5 ascent solves its problem? (issue 20, session 7)

Step 5 maximises ``f_x(w)`` over ``x`` in the search box and ``w`` in ``Ball_t``, by Adam in whitened coordinates
``w = w_t + sqrt(beta) A z``, ``||z|| <= 1``. Any ``A`` with ``A A^T = Sigma_t^{-1}`` describes the same ball, but
Adam is not rotation invariant, so the path (and the point found) depends on ``A``. hpoflow used the Cholesky
root ``L^{-T}`` until 9437748 and the symmetric root ``Sigma_t^{-1/2}`` since (``go_ucb_ellipsoid``). This runs
GO-UCB with the symmetric root through the loop and, in every Phase II round, also runs the ascent from the same
state with the Cholesky root (same x starts, z starts at the same linearised maximiser ``Sigma^{-1} g / ||g||``),
and prints both ascents' best value (the network's optimistic value, scaled rewards) round by round, paired.

Usage: python scripts/compare_ball_roots.py [--tasks st20 bc-mlp ...] [--seeds 0 1 2]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import pin_threads
from scripts.bench_go_ucb import TASKS  # the benchmark's tasks, initial-design sizes and budgets

pin_threads()


def cholesky_objective(model, w_hat, Linv, root):
    """The pre-9437748 objective: ``f_{x_i}(w_hat + root L^{-T} z_i)``, rows ``W = w_hat + root Z L^{-1}``."""
    import torch

    def objective(params):
        X = params[0].requires_grad_(True)
        W = (w_hat + root * (params[1] @ Linv)).requires_grad_(True)
        values = model.value_pairs(W, X)

        def gradients():
            gX, gW = torch.autograd.grad(-values.sum(), (X, W))
            return [gX, (gW * root).mm(Linv.t())]
        return values.detach(), gradients
    return objective


def run(task_key: str, seed: int) -> list[tuple[float, float]]:
    """(best value with the symmetric root, with the Cholesky root) per Phase II round."""
    import torch

    from hpoflow import run_config

    try:
        from hpoflow.config import settings as app
    except ImportError:  # a revision from before the layer folders (--against)
        from hpoflow import app  # type: ignore[no-redef]
    from hpoflow.algorithms import go_ucb

    pairs: list[tuple[float, float]] = []
    captured: dict = {}
    real_objective, real_ascend = go_ucb.whitened_objective, go_ucb.GOUCB._ascend

    def capturing_objective(model, w_hat, whiten, root):
        captured.update(model=model, w_hat=w_hat, root=root)
        return real_objective(model, w_hat, whiten, root)

    def paired_ascend(self, objective, starts, keep="best"):
        out = real_ascend(self, objective, starts, keep)
        if len(starts) == 2 and captured:  # the ball's (x, z) ascent: run it again with the Cholesky root
            model, w_hat, root = captured["model"], captured["w_hat"], captured["root"]
            L = torch.linalg.cholesky(self.Sigma)
            Linv = torch.linalg.solve_triangular(L, torch.eye(self.d_w, dtype=self.dtype), upper=False)
            X0 = starts[0]
            with torch.no_grad():
                u = model.grad_w(w_hat, X0) @ Linv.T
                Z0 = u / torch.linalg.norm(u, dim=1, keepdim=True).clamp_min(1e-12)
            _, chol_v = real_ascend(self, cholesky_objective(model, w_hat, Linv, root), [X0, Z0], keep)
            pairs.append((float(out[1].max()), float(chol_v.max())))
            captured.clear()
        return out

    task, n, T = TASKS[task_key]
    raw = {"algo": {"name": "go_ucb", "n_init": n}, "surrogate": {"name": "nn"}, "task": task,
           "hardware": {"name": "cpu", "device": "cpu"}, "tracking": {"enabled": False},
           "budget": {"rounds": T}, "seed": seed}
    go_ucb.whitened_objective, go_ucb.GOUCB._ascend = capturing_objective, paired_ascend
    try:
        run_config(app.validate(raw))
    finally:
        go_ucb.whitened_objective, go_ucb.GOUCB._ascend = real_objective, real_ascend
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    print("# python scripts/compare_ball_roots.py --tasks", *args.tasks, "--seeds", *args.seeds)
    print("task     rounds  symmetric >= Cholesky  mean best (sym | chol)  median (sym - chol)  "
          "mean |sym - chol| / mean |best|")
    for key in args.tasks:
        pairs = [p for s in args.seeds for p in run(key, s)]
        sym, chol = [p[0] for p in pairs], [p[1] for p in pairs]
        diff = [a - b for a, b in pairs]
        scale = statistics.mean(abs(v) for v in sym + chol)
        print(f"{key:8} {len(pairs):6}  {sum(d >= 0 for d in diff):>10} of {len(pairs):<8} "
              f"{statistics.mean(sym):9.4f} | {statistics.mean(chol):9.4f}  {statistics.median(diff):18.2e}  "
              f"{statistics.mean(abs(d) for d in diff) / scale:12.2e}")


if __name__ == "__main__":
    main()
