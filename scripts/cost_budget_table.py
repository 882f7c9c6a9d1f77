"""The cost-budget table: what runs given ``budget.cost`` (or the library's ``cost=``) spent of it, per method.

Each row is one run of ``python -m hpoflow ... tracking=off`` (or one ``hpoflow.minimize`` call) in a scratch
folder, on the checkout given by ``--src`` (default: this one); ``--before DIR`` runs the same rows on another
checkout too (e.g. ``git archive <commit> | tar -x -C DIR``) and prints both columns. "spent" is the run's query
cost, "left" what remained of the budget (negative: over it), "note" the summary's cost line of the first source.

    OMP_NUM_THREADS=1 python scripts/cost_budget_table.py --before /tmp/before > results/cost_budget.txt
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ["task=lc_replay", "task.benchmark=digits_gb"]
CLI_ROWS: list[tuple[str, list[str], float]] = [  # (label, overrides, budget)
    ("hyperband branin_mf", ["algo=hyperband", "task=branin_mf"], 243),
    ("hyperband branin_mf", ["algo=hyperband", "task=branin_mf"], 648),
    ("hyperband branin_mf", ["algo=hyperband", "task=branin_mf"], 810),
    ("hyperband branin_mf", ["algo=hyperband", "task=branin_mf"], 1620),
    ("asha branin_mf, 4 simulated workers", ["algo=asha", "task=branin_mf", "budget.executor=simulated",
                                             "budget.workers=4"], 648),
    ("asha branin_mf, 4 simulated workers", ["algo=asha", "task=branin_mf", "budget.executor=simulated",
                                             "budget.workers=4"], 810),
    ("asha lc_replay digits_gb, 4 simulated workers", ["algo=asha", *REPLAY, "budget.executor=simulated",
                                                       "budget.workers=4"], 1620),
    ("mf_gp branin_mf", ["algo=mf_gp", "task=branin_mf"], 810),
    ("mf_gp branin_mf", ["algo=mf_gp", "task=branin_mf"], 1620),
]
LIBRARY = """
import hpoflow
def train(config, epochs):
    return (config["lr"] - 0.01) ** 2 + 1.0 / epochs
r = hpoflow.minimize(train, {{"lr": ("log", 1e-4, 1.0)}}, algo="hyperband", fidelity=("epochs", 1, 27), cost={cost})
print("query cost:", r.summary["query_cost"])
print(r.summary.get("cost_note", ""))
"""
LIBRARY_ROWS = [500, 300]


def _run(src: Path, args: list[str]) -> tuple[float, str]:
    """(spent, the summary's cost note or '') of one run on checkout ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True, text=True,
                              timeout=900, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} on {src} failed:\n{proc.stderr[-2000:]}")
    spent = re.search(r"^query cost: ([0-9.e+-]+)", proc.stdout, re.M)
    note = re.search(r"^cost budget .*$", proc.stdout, re.M)
    assert spent is not None, proc.stdout
    return float(spent.group(1)), note.group(0) if note else ""


def rows() -> list[tuple[str, float, list[str]]]:
    out = [(label, budget, ["-m", "hpoflow", *overrides, f"budget.cost={budget:g}", "tracking=off",
                            "hydra.run.dir=.", "hydra.output_subdir=null"]) for label, overrides, budget in CLI_ROWS]
    out += [("library: minimize(..., hyperband, fidelity 1..27)", cost, ["-c", LIBRARY.format(cost=cost)])
            for cost in LIBRARY_ROWS]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    parser.add_argument("--before", type=Path, default=None, help="another checkout, run too (the 'before' column)")
    a = parser.parse_args()
    table = []
    for label, budget, args in rows():
        old = _run(a.before, args)[0] if a.before else None
        spent, note = _run(a.src, args)
        table.append((label, budget, old, spent, note))
        print(f"{label}: {budget:g} -> {spent:g}", file=sys.stderr, flush=True)
    over = sum(spent > budget for _, budget, _, spent, _ in table)
    print("# Regenerate: OMP_NUM_THREADS=1 python scripts/cost_budget_table.py --before /tmp/before")
    print("# What it is for: whether a run given a cost budget (budget.cost, or the library's cost=) stays within it, "
          "per method: hyperband, asha with 4 simulated workers, mf_gp, hpoflow.minimize (branin_mf, lc_replay: "
          "seconds each). /tmp/before is the commit before the budget held: "
          "git archive 21bf865 hpoflow conf hydra_plugins pyproject.toml | tar -x -C /tmp/before")
    reading = f"# Reading: after, {over} of {len(table)} runs end over their budget"
    if a.before:
        worst = max(table, key=lambda r: (r[2] or 0) / r[1])
        old_over = sum((old or 0) > budget for _, budget, old, _, _ in table)
        reading += (f" (before: {old_over}, the worst {worst[2]:g} for {worst[1]:g}, "
                    f"+{100 * ((worst[2] or 0) / worst[1] - 1):.0f}%: the last jobs started while anything was left, "
                    "and k workers' running jobs were not counted)")
    most = max(budget - spent for _, budget, _, spent, _ in table)
    reading += (f"; each ends at or below it by at most {most:g} units, less than the job that did not fit, which "
                "the note names (jobs are not shortened: the rungs would hold a level they did not ask for)")
    print(reading)
    before = f"{'before':>8} " if a.before else ""
    head = f"{'method':<48} {'budget':>7} {before}{'spent':>8} {'left':>6}  note"
    print(head)
    print("-" * len(head))
    for label, budget, old, spent, note in table:
        before = f"{old:>8g} " if a.before else ""
        print(f"{label:<48} {budget:>7g} {before}{spent:>8g} {budget - spent:>6g}  {note}")

if __name__ == "__main__":
    main()
