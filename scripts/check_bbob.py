"""task=bbob's values (cocoex, COCO's C code) against a second implementation (IOHprofiler's ``ioh``).

Per function: the max |f_cocoex(x) - f_ioh(x)| over uniform points of [-5, 5]^dim for every listed dimension and
instance, the largest |f(x)| seen (for scale) and the largest |f*_cocoex - f*_ioh|. ``ioh`` is in the dev extra.

Usage: python scripts/check_bbob.py [--points 200] [--dims 2 3 5 10 20 40] [--instances 1 2 3 4 5]
"""
from __future__ import annotations

import argparse

import numpy as np

from hpoflow.tasks.bbob import BBOBTask


def max_abs_difference(function: int, dim: int, instance: int, n: int = 50,
                       seed: int = 0) -> tuple[float, float, float]:
    """(max |cocoex - ioh| over ``n`` uniform points, max |f| there, |f*_cocoex - f*_ioh|)."""
    import ioh

    task = BBOBTask(function, instance, dim)
    other = ioh.get_problem(function, instance, dim, ioh.ProblemClass.BBOB)
    X = np.random.default_rng(seed).uniform(-5, 5, (n, dim))
    ours = task.values(X)
    return (float(np.max(np.abs(ours - np.asarray(other(X.tolist()))))), float(np.max(np.abs(ours))),
            abs(task.optimum - other.optimum.y))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3, 5, 10, 20, 40])
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    args = parser.parse_args()
    print(f"cocoex vs ioh: {args.points} uniform points of [-5,5]^d per (dim, instance); dims {args.dims}, "
          f"instances {args.instances}\n")
    print("| function | max abs difference | max abs f(x) | max abs f* difference |")
    print("|---|---|---|---|")
    for f in range(1, 25):
        rows = [max_abs_difference(f, d, i, args.points, seed=100 * d + i) for d in args.dims for i in args.instances]
        diff, scale, f_star = (max(r[k] for r in rows) for k in range(3))
        print(f"| f{f} | {diff:.3g} | {scale:.3g} | {f_star:.3g} |", flush=True)


if __name__ == "__main__":
    main()
