"""Cold start (issue 41): CPU seconds until a fresh process's first evaluation, hpoflow against Optuna.

``python scripts/bench_cold_start.py [--repeat 5] [--against main]`` starts ``--repeat`` fresh processes per
variant, one BLAS/OpenMP thread each (``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1``), and reads the
process CPU clock (``time.process_time``: interpreter start, imports and the call) when the objective is first
called, and the CPU of the call alone (from the optimiser's call to its first evaluation). The objective is a 2-d
quadratic on two floats, tracking off. Variants:

* ``hpoflow auto``: ``hpoflow.minimize(fn, space, algo="auto")`` at the default budget (30 rounds: GP-EI);
* ``hpoflow auto, 40 rounds``: the budget at which auto picks COBYQA on two floats;
* ``optuna TPE`` / ``optuna GP``: ``optuna.create_study(sampler=TPESampler(seed=0) / GPSampler(seed=0))``
  then ``study.optimize(fn, n_trials=30)``, Optuna's logging at WARNING (hpoflow prints nothing either).

With ``--against REV`` the hpoflow variants are measured again at git revision REV in the same invocation
(Optuna's rows are the same library either way and are measured once).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: --against's revision comes first
from scripts.bench_common import ROOT, add_against_arguments, answered_as_child, measure_with_against, pin_threads

pin_threads()

PRELUDE = """
import json, sys, time
seen = {}
def fn(x, y):
    if not seen:
        seen.update(process=time.process_time(), call=time.process_time() - call0,
                    torch="torch" in sys.modules)
    return (x - 0.3) ** 2 + (y + 0.1) ** 2
"""
HPOFLOW = PRELUDE + """
import hpoflow
call0 = time.process_time()
hpoflow.minimize(lambda c: fn(c["x"], c["y"]), {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, algo="auto"
                 ROUNDS)
print(json.dumps(seen))
"""
OPTUNA = PRELUDE + """
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
call0 = time.process_time()
study = optuna.create_study(sampler=optuna.samplers.SAMPLER(seed=0))
study.optimize(lambda t: fn(t.suggest_float("x", -1.0, 1.0), t.suggest_float("y", -1.0, 1.0)), n_trials=30)
print(json.dumps(seen))
"""
HPOFLOW_VARIANTS = {"hpoflow auto": HPOFLOW.replace("ROUNDS", ""),
                    "hpoflow auto, 40 rounds": HPOFLOW.replace("ROUNDS", ", rounds=40")}
OPTUNA_VARIANTS = {"optuna TPE": OPTUNA.replace("SAMPLER", "TPESampler"),
                   "optuna GP": OPTUNA.replace("SAMPLER", "GPSampler")}


def _run(code: str, repeat: int, env: dict[str, str]) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory() as cwd:  # tracking is off: nothing is written, but never into the tree
        for _ in range(repeat):
            proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                                  check=False, timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-3000:])
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    process, call = [r["process"] for r in runs], [r["call"] for r in runs]
    return {"process_median": statistics.median(process), "process_min": min(process),
            "call_median": statistics.median(call), "torch": any(r["torch"] for r in runs), "repeat": len(runs)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Per variant: median and min process CPU at the first evaluation, median CPU of the call up to it."""
    env = dict(os.environ)
    if not args.json:  # this tree; a --json child already has its revision's PYTHONPATH
        env["PYTHONPATH"] = str(ROOT)
    variants = dict(HPOFLOW_VARIANTS)
    if not args.json and not args.no_optuna:
        variants |= OPTUNA_VARIANTS
    return {name: _run(code, args.repeat, env) for name, code in variants.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per variant and revision")
    parser.add_argument("--no-optuna", action="store_true", help="leave Optuna's rows out")
    add_against_arguments(parser)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return
    results = measure_with_against(args, measure, __file__)
    print(f"{'revision':<18} {'variant':<26} {'process CPU s (median)':>22} {'(min)':>7} {'call CPU s':>11}  torch")
    for label, variants in results.items():
        for name, r in variants.items():
            print(f"{label:<18} {name:<26} {r['process_median']:>22.3f} {r['process_min']:>7.3f} "
                  f"{r['call_median']:>11.3f}  {r['torch']}")


if __name__ == "__main__":
    main()
