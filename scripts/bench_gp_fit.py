"""Benchmark: marginal-likelihood evaluations and optimum of the GP hyperparameter fit, now vs a git revision.

For each problem and seed, one ExactGP is fitted on a growing design (n = 20, 40, 60, 100, 150, 200, warm-started,
so the schedule includes a prior-mode restart), once with the working tree's ``hpoflow/surrogates/gp.py`` and once
with the same file at ``--against`` (default HEAD). It prints the L-BFGS-B function evaluations summed over the
sequence (the machine-independent cost), the final negative log marginal likelihood per point (lower is better)
and the wall seconds of each, measured one after the other in the same process.

Usage: python scripts/bench_gp_fit.py [--against <git rev>] [--seeds 3]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpytorch  # noqa: E402
import torch  # noqa: E402

import hpoflow.surrogates.gp as gp_now  # noqa: E402
from hpoflow.surrogates.configs import GPConfig  # noqa: E402
from hpoflow.tasks.synthetic import make_branin, make_hartmann6, make_styblinski_tang  # noqa: E402


def load_revision(rev: str):
    """Import ``hpoflow/surrogates/gp.py`` as it is at git revision ``rev``."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:hpoflow/surrogates/gp.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "gp_at_revision.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("gp_at_revision", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def negative_mll(gp) -> float:
    model = gp.model
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad(), gpytorch.settings.fast_computations(False, False, False):
        value = float(-mll(model(gp.X), gp.z))
    model.eval()
    return value


def counting(module) -> dict[str, int]:
    """Wrap the module's scipy ``minimize`` so the function evaluations can be summed."""
    original, box = module.minimize, {"nfev": 0}

    def wrapped(fun, x0, **kw):
        result = original(fun, x0, **kw)
        box["nfev"] += result.nfev
        return result

    module.minimize = wrapped
    return box


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", default="HEAD")
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    versions = {"now": gp_now, args.against: load_revision(args.against)}
    counters = {label: counting(module) for label, module in versions.items()}
    print(f"# python scripts/bench_gp_fit.py --against {args.against} --seeds {args.seeds}")
    print("| problem | seed | " + " | ".join(f"{v} nfev | {v} -mll/n | {v} s" for v in versions) + " |")
    print("|---|---|" + "---|---|---|" * len(versions))
    problems = (("branin", make_branin()), ("hartmann6", make_hartmann6()),
                ("styblinski_tang20", make_styblinski_tang(dim=20)))
    for name, task in problems:
        d = task.space.dim
        for seed in range(args.seeds):
            X = torch.rand(200, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
            y = torch.tensor([task.evaluate(task.space.decode(x), round=1).value for x in X], dtype=torch.float64)
            cells = []
            for label, module in versions.items():
                gp = module.ExactGP(d, GPConfig())
                counters[label]["nfev"] = 0
                start = time.perf_counter()
                for n in (20, 40, 60, 100, 150, 200):
                    gp.fit(X[:n], y[:n])
                cells.append(f"{counters[label]['nfev']} | {negative_mll(gp):.4f} | {time.perf_counter() - start:.1f}")
            print(f"| {name} | {seed} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
