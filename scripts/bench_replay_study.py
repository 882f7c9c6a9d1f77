"""How long a study of replayed runs takes, start to finish, MLflow included: ``N`` random-search runs on a suite
task (budget 30 full evaluations) as one sweep through the command line, then their report.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/bench_replay_study.py --runs 40

Prints the machine's load, the sweep's wall seconds for 1 run and for ``N`` runs (the difference over ``N - 1`` is
the cost of one more run, start-up excluded), the extrapolation to 1,000 runs, and the report's wall seconds.
The baseline measured in the same invocation is ``python -c "import mlflow"``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
ROOT = Path(__file__).resolve().parent.parent


def timed(args: list[str], cwd: Path) -> float:
    """Wall seconds of one command (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def sweep(runs: int, benchmark: str, db: Path, experiment: str, work: Path) -> float:
    return timed([sys.executable, "-m", "hpoflow", "-m", "algo=random", "task=lc_replay",
                  f"task.benchmark={benchmark}", f"seed=range(0,{runs})", "budget.rounds=30",
                  f"tracking.uri=sqlite:///{db}", f"tracking.experiment={experiment}", "progress=false",
                  f"hydra.sweep.dir={work / experiment}"], ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--benchmark", default="hmda-linear")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        load = os.getloadavg()
        base = timed([sys.executable, "-c", "import mlflow"], ROOT)
        one = sweep(1, args.benchmark, work / "one.db", "one", work)
        many = sweep(args.runs, args.benchmark, work / "many.db", "many", work)
        report = timed([sys.executable, "-m", "hpoflow.report", f"tracking.uri=sqlite:///{work / 'many.db'}",
                        "tracking.experiment=many", f"report.out={work / 'report'}"], ROOT)
        per_run = (many - one) / (args.runs - 1)
        print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: "
              f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} (2 cores)")
        print(f"baseline python -c 'import mlflow': {base:.2f} s")
        print(f"sweep of 1 run: {one:.1f} s; of {args.runs} runs: {many:.1f} s; one more run: {per_run:.2f} s "
              f"({per_run / base:.2f}x the baseline)")
        print(f"1,000 runs at that rate: {one + 999 * per_run:.0f} s (target: at most 180 s)")
        print(f"report of the {args.runs} runs: {report:.1f} s")


if __name__ == "__main__":
    main()
