"""Peak memory and time of ``python -m hpoflow.report`` over runs stopped by their cost budget, at a git revision
(``--against``, default ``main``) and in this checkout, in one invocation; and what the two reports print
differently, on those studies and on a round-budgeted one.

A run given ``budget.cost`` has ``budget.rounds`` = 1,000,000 (the loop's "no round limit"); a report whose
per-round arrays went out to ``budget.rounds`` held runs x 10^6 floats per matrix. The studies (built once with this
checkout's CLI, cached in ``--work``; their content does not depend on the report's code):

- ``cost``: ``algo=hyperband,asha,random task=lc_replay budget.cost=300`` x ``--seeds`` seeds (recorded learning
  curves of digits_mlp; runs of 4 to about 120 rounds), measured and compared;
- ``mocost``: ``algo=random,optuna_nsga2 task=zdt1 budget.cost=10 seed=0,1`` (the several-objectives section under a
  cost budget), measured and compared;
- ``rounds``: ``algo=random,optuna_tpe task=branin,hartmann6 seed=0,1,2 budget.rounds=15`` and
  ``algo=random,optuna_nsga2 task=zdt1 seed=0,1 budget.rounds=12`` (budget.rounds the real limit): every output
  file (report.md, report.html, the CSVs, the PNGs) compared byte for byte.

Each report runs in a fresh process under ``/usr/bin/time -v`` (maximum resident set size, wall clock, user +
system CPU), ``nice``'d, with one BLAS/OpenMP thread and ``report.log_to_mlflow=false`` (the store stays as it is).

    python scripts/bench_report_cost_runs.py --out results/bench_report_cost_runs.txt
"""
from __future__ import annotations

import argparse
import difflib
import filecmp
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import THREAD_VARIABLES, export_revision, revision_label  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
STUDIES = {  # name: (experiment(s) the report selects, sweeps that build it: Hydra overrides)
    "cost": ("cost", [["algo=hyperband,asha,random", "task=lc_replay", "budget.cost=300"]]),
    "mocost": ("mocost", [["algo=random,optuna_nsga2", "task=zdt1", "budget.cost=10", "seed=0,1"]]),
    "rounds": ("rounds,rounds_mo", [["algo=random,optuna_tpe", "task=branin,hartmann6", "seed=0,1,2",
                                     "budget.rounds=15"],
                                    ["algo=random,optuna_nsga2", "task=zdt1", "seed=0,1", "budget.rounds=12"]]),
}
MEASURED = ("cost", "mocost")
NOTE = """\
What differs under a cost budget, and why: the tables' "rounds" (the round a task's runs are compared at) is now the
last round any of its runs logged, not budget.rounds = 1,000,000. The figures against the round (normalised_regret
and average_rank, left panels; regret_vs_round; data_profile; hv_regret) now end there instead of running flat to
10^6. The right panels of normalised_regret and average_rank (against the fraction of the budget's query cost) now
divide by the median final cost of the task's finished runs, as their caption says: the old code read the cost at
round 10^6, which no run logs, and fell back to dividing by 10^6. Every other printed number is the same: the
normalised-regret tables, the critical-difference test, per-task Wilcoxon-Holm, seed adequacy, the data-profile
table, the per-task regret tables (summary.csv), the hypervolume tables (pareto_summary.csv) and the whole "Against
compute" section (cost_summary.csv, its figures)."""


def _env(pythonpath: Path, work: Path | None = None) -> dict[str, str]:
    """One thread, ``pythonpath`` first; with ``work``: SVGs without a date or random ids (a ``matplotlibrc`` there
    fixes ``svg.hashsalt``; ``SOURCE_DATE_EPOCH`` the date), so that two equal figures are equal files."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "MPLBACKEND": "Agg"}
    env.update({name: "1" for name in THREAD_VARIABLES})
    if work is not None:
        (work / "matplotlibrc").write_text("svg.hashsalt: hpoflow-bench\n")
        env.update(MATPLOTLIBRC=str(work), SOURCE_DATE_EPOCH="0", PYTHONHASHSEED="0")  # scikit-posthocs draws
        # the CD diagram's clique bars in set order: under another hash seed a bar's path runs the other way
    return env


def build_study(work: Path, name: str, seeds: int) -> str:
    """The study's SQLite store (swept once with this checkout's CLI); its URI."""
    db = work / f"{name}.db"
    uri = f"sqlite:///{db}"
    if db.is_file():
        return uri
    experiments = STUDIES[name][0].split(",")
    for experiment, overrides in zip(experiments, STUDIES[name][1]):
        if not any(o.startswith("seed=") for o in overrides):
            overrides = [*overrides, "seed=" + ",".join(str(s) for s in range(seeds))]
        cmd = ["nice", "-n", "5", sys.executable, "-m", "hpoflow", "-m", *overrides, f"tracking.uri={uri}",
               f"tracking.experiment={experiment}", "progress=false"]
        print("sweep:", " ".join(cmd[3:]), file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=work, env=_env(REPO), check=True, capture_output=True)
    return uri


def report(code: Path, uri: str, experiment: str, out: Path) -> dict[str, float]:
    """One ``python -m hpoflow.report`` with ``code`` first on the path: max RSS (MB), wall and CPU seconds."""
    cmd = ["/usr/bin/time", "-v", "nice", "-n", "5", sys.executable, "-m", "hpoflow.report", f"tracking.uri={uri}",
           f"tracking.experiment={experiment}", f"report.out={out}", "report.log_to_mlflow=false"]
    proc = subprocess.run(cmd, cwd=out.parent, env=_env(code, out.parent), capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"Error: the report at {code} failed: {proc.stderr[-2000:]}")

    def field(label: str) -> str:
        return re.search(rf"{re.escape(label)}: (.+)", proc.stderr).group(1).strip()  # type: ignore[union-attr]

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    return {"rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024, "wall_s": wall,
            "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)"))}


def differences(old: Path, new: Path) -> list[str]:
    """Files that differ between two report folders; for report.md and the CSVs, the differing lines."""
    lines = []
    names = sorted({p.name for p in old.iterdir()} | {p.name for p in new.iterdir()})
    for name in names:
        a, b = old / name, new / name
        if not (a.is_file() and b.is_file()):
            lines.append(f"  {name}: only in {'new' if b.is_file() else 'old'}")
        elif not filecmp.cmp(a, b, shallow=False):
            lines.append(f"  {name}: differs")
            if name.endswith((".md", ".csv")):
                diff = difflib.unified_diff(a.read_text().splitlines(), b.read_text().splitlines(), "old", "new",
                                            n=0, lineterm="")
                lines += [f"    {d}" for d in diff if d[:1] in "+-" and d[:3] not in ("---", "+++")]
    same = len(names) - sum(1 for ln in lines if ln.startswith("  ") and not ln.startswith("    "))
    return [f"  {same} of {len(names)} files identical"] + lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="git revision of the old report (default: main)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of the cost study (3 methods each)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/hpoflow_bench_report_cost"))
    parser.add_argument("--out", type=Path, help="results file (default: stdout only)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    uris = {name: build_study(args.work, name, args.seeds) for name in STUDIES}
    old_code = export_revision(args.against)
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    lines = [f"# Regenerate: python scripts/bench_report_cost_runs.py --out {args.out or '<file>'}"
             + (f" --against {args.against}" if args.against != "main" else "")
             + (f" --seeds {args.seeds}" if args.seeds != 10 else ""),
             f"python -m hpoflow.report over cost-budgeted runs (budget.rounds = 1,000,000); old = "
             f"{revision_label(args.against)}, new = {rev} (this checkout); one process each under /usr/bin/time -v, "
             "nice'd, OMP/OPENBLAS/MKL_NUM_THREADS=1, report.log_to_mlflow=false, on a shared 2-core machine",
             "", "| study | runs | old max RSS MB | new max RSS MB | old wall s | new wall s | old CPU s | new CPU s "
             "| wall old/new |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    diffs = []
    for name, uri in uris.items():
        experiment = STUDIES[name][0]
        got = {}
        for label, code in (("old", old_code), ("new", REPO)):
            out = args.work / f"report_{name}_{label}"
            print(f"report: {name} ({label})", file=sys.stderr, flush=True)
            got[label] = report(code, uri, experiment, out)
        if name in MEASURED:
            from mlflow.tracking import MlflowClient

            client = MlflowClient(tracking_uri=uri)
            found = client.search_runs([client.get_experiment_by_name(e).experiment_id for e in experiment.split(",")],
                                       max_results=10_000)
            runs = sum(r.data.tags.get("hpoflow.kind") not in ("study", "report") for r in found)
            o, n = got["old"], got["new"]
            lines.append(f"| {name} | {runs} | {o['rss_mb']:.0f} | {n['rss_mb']:.0f} | {o['wall_s']:.1f} | "
                         f"{n['wall_s']:.1f} | {o['cpu_s']:.1f} | {n['cpu_s']:.1f} | {o['wall_s'] / n['wall_s']:.1f} |")
        diffs += [f"{name}: old report against new"] + differences(args.work / f"report_{name}_old",
                                                                    args.work / f"report_{name}_new")
    text = "\n".join(lines + ["", *diffs, "", NOTE]) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
