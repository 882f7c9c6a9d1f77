"""Adapter overhead: what hpoflow's peer adapters add per round on top of the peer library's own ask/tell.

Each adapter runs through hpoflow's loop; the library's own calls (Optuna's ``Study.ask``/``Study.tell``,
Nevergrad's ``optimizer.ask``/``tell``, BoTorch's model + fit + ``optimize_acqf`` inside ``_maximise_logei``) are
wrapped with a CPU clock. Adapter overhead per round = (adapter ask + tell) - (library calls in them): the space
mapping, the config -> Suggestion conversion, the Sobol draw, the sign flip. Target: <= 5 ms per round.
CPU clock (``time.process_time``; the machine is shared, wall time would count other processes); single thread.

Usage: python scripts/bench_adapters.py [--rounds 30] [--seeds 2] [--algos optuna_tpe ...] [--problems ...]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

import hpoflow
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Categorical, Float, Int, SearchSpace
from hpoflow.tasks.base import Task
from hpoflow.tasks.bbob import BBOBTask
from hpoflow.tasks.synthetic import make_branin

ALGOS = ("optuna_tpe", "optuna_gp", "optuna_cmaes", "optuna_random", "nevergrad_ngopt", "botorch_logei")


class MixedQuadratic(Task):
    """A 5-parameter mixed space (log float, int, log int, categorical, float); minimise."""

    name, direction = "mixed5", Direction.MINIMIZE
    space = SearchSpace.of(Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 4), Int("width", 8, 256, log=True),
                           Categorical("act", ("relu", "tanh", "gelu")), Float("x", -1.0, 1.0))

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        penalty = {"relu": 0.0, "tanh": 0.3, "gelu": 0.1}[config["act"]]
        return Evaluation((torch.log10(torch.tensor(config["lr"])).item() + 2) ** 2 + (config["x"] - 0.3) ** 2
                          + 0.1 * config["layers"] + abs(config["width"] - 64) / 256 + penalty)


PROBLEMS: dict[str, Callable[[], Task]] = {
    "branin (2 floats)": make_branin,
    "mixed5 (log float, int, log int, categorical, float)": MixedQuadratic,
    "bbob f15 d20 (20 floats)": lambda: BBOBTask(function=15, instance=1, dim=20),
}


class Stopwatch:
    """Accumulates CPU time spent inside the wrapped callables."""

    def __init__(self) -> None:
        self.total = 0.0

    def wrap(self, owner: Any, attr: str) -> None:
        inner = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.total += time.process_time() - start

        setattr(owner, attr, timed)


def library_calls(name: str, algo: Any) -> list[tuple[Any, str]]:
    if name.startswith("optuna"):
        return [(algo.study, "ask"), (algo.study, "tell")]
    if name.startswith("nevergrad"):
        return [(algo.optimizer, "ask"), (algo.optimizer, "tell")]
    return [(algo, "_maximise_logei")]


def measure(name: str, make_task: Callable[[], Task], rounds: int, seed: int) -> tuple[list[float], list[float]]:
    """Per round: (adapter ask + tell CPU ms, the library's share of it in ms)."""
    task = make_task()
    algo = hpoflow.make_algorithm(name, task, seed, rounds=rounds)  # at its conf/ defaults, as the CLI builds it
    watch = Stopwatch()
    for owner, attr in library_calls(name, algo):
        watch.wrap(owner, attr)
    total, library = [], []
    for t in range(1, rounds + 1):
        before, start = watch.total, time.process_time()
        s = algo.ask(t)
        asked = time.process_time()
        ev = task.evaluate(s.config, round=t)
        told = time.process_time()
        algo.tell(s, ev)
        end = time.process_time()
        total.append(1e3 * ((asked - start) + (end - told)))
        library.append(1e3 * (watch.total - before))
    return total, library


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--algos", nargs="+", default=list(ALGOS), choices=list(ALGOS))
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"CPU ms per round, {args.rounds} rounds x {args.seeds} seeds; adapter = (ask + tell) - library calls\n")
    print("| problem | algo | ask + tell mean | library mean | adapter mean | adapter median | adapter max |")
    print("|---|---|---|---|---|---|---|")
    for problem in args.problems:
        for name in args.algos:
            total, library = [], []
            for seed in range(args.seeds):
                a, b = measure(name, PROBLEMS[problem], args.rounds, seed)
                total += a
                library += b
            adapter = [a - b for a, b in zip(total, library)]
            print(f"| {problem} | {name} | {statistics.mean(total):.2f} | {statistics.mean(library):.2f} | "
                  f"{statistics.mean(adapter):.3f} | {statistics.median(adapter):.3f} | {max(adapter):.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
