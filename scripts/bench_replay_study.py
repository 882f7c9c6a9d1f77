"""Throughput of a replayed study: N replayed random-search runs of the learning-curve suite (budget 30 full
evaluations each, MLflow included) through ``python -m hpoflow.batch``, then their report, against the same kind of
run through ``python -m hpoflow -m`` (the baseline: the marginal cost of a run in each command, from a 2-job and a
10-job study), all in one invocation.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/bench_replay_study.py --runs 1000 \\
        --out results/lc_suite_throughput.txt

Each command is a fresh process in a fresh folder with a fresh SQLite store; the figures are wall seconds from start
to exit (imports, composition, every MLflow write and the study's account included). The machine's load average
is printed beside them.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(args: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of ``python <args>`` in ``cwd``, and its last output line; raises if it fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return wall, lines[-1] if lines else ""


def main() -> None:
    from hpoflow.tasks.suite import suite_tasks

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="replayed runs of the batch study (at least)")
    parser.add_argument("--out", type=Path, default=None)
    a = parser.parse_args()
    tasks = suite_tasks()
    seeds = math.ceil(a.runs / len(tasks))
    study = ["experiment=lc_suite", "algo=random", f"seed=range(0,{seeds})"]
    lines = [f"# Regenerate: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python "
             f"scripts/bench_replay_study.py --runs {a.runs}" + (f" --out {a.out}" if a.out else ""),
             f"machine: {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        uri = f"tracking.uri=sqlite:///{folder / 'batch.db'}"
        wall, account = timed(["-m", "hpoflow.batch", *study, uri], folder)
        jobs = seeds * len(tasks)
        lines.append(f"batch: {jobs} replayed random-search runs ({len(tasks)} tasks x {seeds} seeds, 30 full "
                     f"evaluations each) in {wall:.1f} s wall = {wall / jobs * 1000:.0f} ms a run; load after: "
                     f"{os.getloadavg()[0]:.2f}")
        lines.append(f"  {account}")
        rwall, _ = timed(["-m", "hpoflow.report", "experiment=lc_suite", uri, f"report.out={folder / 'report'}",
                          "report.log_to_mlflow=false"], folder)
        lines.append(f"report of those {jobs} runs: {rwall:.1f} s wall; load after: {os.getloadavg()[0]:.2f}")
        per_run = {}
        for command in (["-m", "hpoflow", "-m"], ["-m", "hpoflow.batch"]):
            walls = []
            for n in (1, 5):  # seeds per task on two tasks: 2 and 10 jobs; the difference is 8 runs' cost
                sample = ["experiment=lc_suite", "algo=random", f"task.benchmark={tasks[0]},{tasks[1]}",
                          f"seed=range(0,{n})"]
                store = f"tracking.uri=sqlite:///{folder / f'{command[-1]}-{n}.db'}"
                walls.append(timed([*command, *sample, store], folder)[0])
            per_run[" ".join(command[1:])] = (walls[1] - walls[0]) / 8
        multirun, batch = per_run["hpoflow -m"], per_run["hpoflow.batch"]
        lines.append(f"marginal cost of one more run (10 jobs minus 2 jobs, / 8): python -m hpoflow -m "
                     f"{multirun * 1000:.0f} ms, python -m hpoflow.batch {batch * 1000:.0f} ms: "
                     f"{multirun / batch:.1f}x; load after: {os.getloadavg()[0]:.2f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        a.out.write_text(text)


if __name__ == "__main__":
    main()
