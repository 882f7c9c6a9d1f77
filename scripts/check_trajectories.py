"""Same results before and after a refactor: every round's configuration and value, job by job, seed 0.

``python scripts/check_trajectories.py --against <git rev>`` runs a fixed list of small jobs (the algorithms at
their defaults plus a few non-default schedules, tracking off) in this tree and at ``rev`` (``git archive`` of
its ``hpoflow/`` and ``conf/``, in a subprocess) and prints, per job, whether the two trajectories are
identical (exact float equality) or the first round where they differ. A setting whose spelling changed
between revisions is listed with its alternatives: the first one the revision accepts is used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: --against's revision comes first
from scripts.bench_common import (
    add_against_arguments,
    answered_as_child,
    before_layers,
    measure_with_against,
    pin_threads,
)

pin_threads()

TV = ("task=tv_synthetic", "task.n_points=200", "budget.rounds=30")
BRANIN = ("task=branin", "budget.rounds=12")
RIDGE = ("task=ridge", "task.dataset=digits_regression", "task.inner_steps=5", "budget.rounds=8")
BANDIT = ("task=tv_bandit", "budget.rounds=40")
SMOKE = "<smoke>"  # the algorithm's registered smoke overrides at the revision that runs (small solver settings)
GO_UCB = (SMOKE, "budget.rounds=10")
# gp_ei's GP transforms its outputs by default since issue 30 (a deliberate change): its jobs pin the old model
# (surrogate.standardize=true, already the default, is what a revision without the setting is given instead)
GP_EI_PLAIN = ("surrogate.output_transform=none", "surrogate.standardize=true")
# job -> overrides; a tuple lists one setting's spellings, newest first (null/never replaced 0/-1 sentinels)
JOBS: dict[str, tuple[Any, ...]] = {
    "gp_ei": ("algo=gp_ei", GP_EI_PLAIN, *BRANIN), "gp_ucb": ("algo=gp_ucb", *BRANIN), "gp_pi": ("algo=gp_pi", *BRANIN),
    "gp_ucb srinivas": ("algo=gp_ucb", "algo.beta_schedule=srinivas", *BRANIN),
    "skopt_gp_ei": ("algo=skopt_gp_ei", "task=branin", "budget.rounds=13"),
    "gp_ei refit_every=3": ("algo=gp_ei", GP_EI_PLAIN, "surrogate.refit_every=3", *BRANIN),
    "turbo": ("algo=turbo", *BRANIN), "grid": ("algo=grid", "task=branin", "budget.rounds=10"),
    "random": ("algo=random", *BRANIN),
    "bbo_ei": ("algo=bbo_ei", "task=digits_mlp", "task.inner_steps=20", "budget.rounds=5"),
    "bbo_ucb": ("algo=bbo_ucb", "task=digits_mlp", "task.inner_steps=20", "budget.rounds=5"),
    "sho": ("algo=sho", *RIDGE), "my_hpo": ("algo=my_hpo", *RIDGE),
    "my_hpo full": ("algo=my_hpo", "algo.variant=full", *RIDGE),
    "tv_gp_ucb": ("algo=tv_gp_ucb", *TV), "ce_gp_ucb": ("algo=ce_gp_ucb", *TV), "r_gp_ucb": ("algo=r_gp_ucb", *TV),
    "r_gp_ucb never reset": ("algo=r_gp_ucb", ("algo.reset_every=never", "algo.reset_every=0"), *TV),
    "tv_gp_ucb fit=epsilon": ("algo=tv_gp_ucb", "surrogate.fit=epsilon", "surrogate.refit_every=5", *TV),
    "exp3s": ("algo=exp3s", *BANDIT), "ucb1": ("algo=ucb1", *BANDIT), "eps_greedy": ("algo=eps_greedy", *BANDIT),
    "softmax": ("algo=softmax", *BANDIT),
    "go_ucb": ("algo=go_ucb", *GO_UCB),
    "go_ucb refit_every=2": ("algo=go_ucb", *GO_UCB, "algo.refit_every=2"),
    # the paper preset at go_ucb_f1's scale: its seed-0 run moves with the last bit of the network's forward pass
    # (321.187 vs 283.955 cumulative regret), so it catches a refactor that changes rounding
    "go_ucb_paper f1": ("algo=go_ucb_paper", "task=go_ucb_f1", "algo.n_init=5", "budget.rounds=25"),
}


def _run(overrides: tuple[Any, ...]) -> list[list[Any]]:
    """Every round of one job as ``[round, config, value, queried]``; a tuple override: the first accepted."""
    from hpoflow.api import run_config

    if before_layers():  # --against a revision from before the layer folders
        from hpoflow.app import ConfigError  # type: ignore[no-redef]

        from hpoflow import registry  # type: ignore[no-redef]
    else:
        from hpoflow.config import registry
        from hpoflow.config.settings import ConfigError

    algo = overrides[0].removeprefix("algo=")
    overrides = tuple(o for x in overrides for o in (registry.get("algorithm", algo).smoke if x == SMOKE else (x,)))
    spellings = next((o for o in overrides if isinstance(o, tuple)), (None,))
    for k, spelling in enumerate(spellings):
        chosen = [spelling if isinstance(o, tuple) else o for o in overrides]
        try:
            result = run_config([*chosen, "tracking=off", "seed=0", "progress=false"])
        except ConfigError:
            if k == len(spellings) - 1:
                raise
            continue
        return [[r.round, r.config, r.value, r.queried] for r in result.records]
    raise AssertionError("no spelling to run")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    return {name: _run(JOBS[name]) for name in JOBS if not args.only or name in args.only}


def _first_difference(a: list[list[Any]], b: list[list[Any]]) -> str:
    if a == b:
        return "identical"
    for x, y in zip(a, b):
        if x != y:
            return f"differs from round {x[0]}"
    return f"differs in length ({len(a)} vs {len(b)} rounds)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=None, help="job names (default: all)")
    add_against_arguments(parser)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return
    print(f"# python scripts/check_trajectories.py {' '.join(sys.argv[1:])}")
    results = measure_with_against(args, measure, __file__)
    now = results.pop("now")
    width = max(len(n) for n in now)
    for label, other in results.items():
        print(f"# this tree vs {label}: every round's configuration and value (seed 0, tracking off)")
        for name, rows in now.items():
            print(f"{name:<{width}}  {len(rows):3d} rounds  {_first_difference(rows, other[name])}")
        same = sum(rows == other[name] for name, rows in now.items())
        print(f"# {same} of {len(now)} jobs identical")
    if not results:
        for name, rows in now.items():
            print(f"{name:<{width}}  {len(rows):3d} rounds  last value {rows[-1][2]}")


if __name__ == "__main__":
    main()
