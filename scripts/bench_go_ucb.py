"""Decision time per round of GO-UCB next to GP-EI, CPU clock, measured in one process (issues 19 and 20, target 1).

Decision time = the loop's ``decision_time`` (ask + tell: for GO-UCB the Phase II ascent, the rank-one
update of Sigma_t and, in its first Phase II round, the Phase I regression oracle; for GP-EI the GP refit and
the acquisition maximisation), read with the process CPU clock instead of the wall clock (the sandbox is
shared, so wall time is inflated by other processes). Both algorithms run on the same task, seed, budget and
initial-design size, one after the other in one process, GO-UCB first (so any one-time import lands on GO-UCB).
Tasks: Styblinski-Tang-20 (n = 8, T = 64) and breast_cancer with rf / mlp / gb (n = 5, T = 30). Each algorithm
runs at its defaults of the measured revision. ``--against REV`` measures that git revision too, in a
subprocess (see ``bench_common``), and prints its table below, with GO-UCB's cumulative regret of both
revisions on the same seed (regret against the best value either revision's runs found on that task).

Usage: python scripts/bench_go_ucb.py [--tasks st20 bc-mlp ...] [--seed 0] [--against <git rev>]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
import warnings
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import add_against_arguments, answered_as_child, measure_with_against, pin_threads

pin_threads()

TASKS = {"st20": ({"name": "styblinski_tang", "dim": 20}, 8, 64),
         "bc-rf": ({"name": "breast_cancer", "model": "rf"}, 5, 30),
         "bc-mlp": ({"name": "breast_cancer", "model": "mlp"}, 5, 30),
         "bc-gb": ({"name": "breast_cancer", "model": "gb"}, 5, 30)}
ALGOS = {"GO-UCB": ("go_ucb", {}), "GO-UCB no refit": ("go_ucb", {"refit_every": "never"}),
         "GO-UCB paper": ("go_ucb", {"preset": "paper"}), "GP-EI": ("gp_ei", {})}


def run_timed(algo: str, algo_kw: dict, task: dict, n_init: int, rounds: int,
              seed: int) -> tuple[list[float], list[float], float | None]:
    """CPU seconds of ask + tell per round (the loop's decision_time, its clock swapped for process_time), the
    observed values (as rewards: larger is better) and the task's known optimum as a reward (None if unknown)."""
    try:
        from hpoflow.config import settings as app
    except ImportError:  # a revision from before the layer folders (--against)
        from hpoflow import app  # type: ignore[no-redef]
    try:
        from hpoflow.runner import loop
    except ImportError:  # before the layer folders (--against)
        from hpoflow import loop  # type: ignore[no-redef]

    try:
        from hpoflow import run_config
    except ImportError:  # a revision from before the library API (--against): its app ran the settings
        def run_config(settings: object) -> object:
            return app.run_from_settings(settings, print_summary=False)

    surrogate = "nn" if algo.startswith("go_ucb") else "gp"  # GO-UCB's network (older revisions ignore it)
    raw = {"algo": {"name": algo, "n_init": n_init, **algo_kw}, "surrogate": {"name": surrogate}, "task": task,
           "hardware": {"name": "cpu", "device": "cpu"}, "tracking": {"enabled": False},
           "budget": {"rounds": rounds}, "seed": seed}
    wall_clock = loop.time
    loop.time = types.SimpleNamespace(perf_counter=time.process_time)  # the loop's timer reads CPU time
    try:
        settings = app.validate(raw)
        result = run_config(settings)
    finally:
        loop.time = wall_clock
    built = app.build_task(settings)
    sign = built.direction.sign
    values = [sign * (r.true_value if r.true_value is not None else r.value) for r in result.records]
    optimum = None if built.optimum is None else sign * built.optimum
    return [m["decision_time"] for m in result.metrics], values, optimum


def measure(args: argparse.Namespace) -> dict:
    """{task: {algo: {mean, first, rest, values}}} for this process's ``hpoflow``."""
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    out: dict = {}
    for key in args.tasks:
        task, n, T = TASKS[key]
        out[key] = {}
        for a in args.algos:
            name, kw = ALGOS[a]
            times, values, optimum = run_timed(name, kw, task, n, T, args.seed)
            v = times[n:]
            out[key][a] = {"mean": statistics.mean(v), "first": v[0], "rest": statistics.mean(v[1:]), "values": values,
                           "optimum": optimum}
    return out


def regret_reference(cells: list[dict]) -> float:
    """The task's known optimum (st20); without one (breast_cancer) the best value any run of this invocation saw,
    so that regret is comparable only within one invocation."""
    known = [c["optimum"] for c in cells if c.get("optimum") is not None]
    return known[0] if known else max(max(c["values"]) for c in cells)


def print_table(label: str, res: dict, algos: list[str], f_star: dict[str, float]) -> None:
    print(f"\n{label}: decision time per round, CPU s: mean over the rounds after the initial design "
          f"(first Phase II round + mean of the rest); {algos[0]}'s cumulative regret (all rounds, same seed; against "
          f"the known optimum, else the best value seen in this invocation)")
    head = algos[0]  # the ratio and the regret are the first algorithm's (GO-UCB or one of its variants)
    print(f"{'task':<8}{'n':>3}{'T':>4}" + "".join(f"{a:>30}" for a in algos) + f"{head + ' / GP-EI':>24}"
          + f"{head + ' regret':>24}")
    for key, cells in res.items():
        _, n, T = TASKS[key]
        texts = (f"{c['mean']:8.3f} ({c['first']:6.2f} + {c['rest']:6.3f})" for c in (cells[a] for a in algos))
        row = "".join(f"{t:>30}" for t in texts)
        ratio = cells[head]["mean"] / cells["GP-EI"]["mean"] if "GP-EI" in cells else float("nan")
        regret = sum(f_star[key] - v for v in cells[head]["values"])
        print(f"{key:<8}{n:>3}{T:>4}{row}{ratio:>24.2f}{regret:>24.4g}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--algos", nargs="*", default=["GO-UCB", "GP-EI"], help=f"of {list(ALGOS)}")
    p.add_argument("--seed", type=int, default=0)
    add_against_arguments(p)
    args = p.parse_args()
    if answered_as_child(args, measure):
        return
    print(f"# python scripts/bench_go_ucb.py {' '.join(sys.argv[1:])}")
    print(f"# process CPU time, 1 thread (OMP/OPENBLAS/MKL_NUM_THREADS=1), seed {args.seed}; wall time is not quoted")
    results = measure_with_against(args, measure, __file__)
    f_star = {key: regret_reference([cell for res in results.values() for cell in res[key].values()])
              for key in args.tasks}
    for label, res in results.items():
        print_table(label, res, args.algos, f_star)


if __name__ == "__main__":
    main()
