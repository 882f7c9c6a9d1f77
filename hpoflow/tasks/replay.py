"""``task=lc_replay``: learning curves recorded once on the real training tasks, replayed in no time.

A benchmark file (``hpoflow/tasks/curves/<name>.json.gz``, written by ``scripts/record_curves.py``) holds a fixed
set of ``n`` configurations of a real task, each trained once to its full fidelity: its learning curve (the
validation value after every fidelity unit, ``n x max``) and its training seconds. The replayed task's domain is
that finite set (``candidates``, ``n x d`` in ``[0, 1]^d``): an evaluation at level ``r`` returns the recorded value
after ``r`` units, continues a trial as the real task would (cost = the units added), and reports the recorded
seconds of those units as ``elapsed``, which ``budget.executor=simulated`` takes as the evaluation's duration. The
trial states (the level each trial reached) are ``Continuable``'s, mirrored beside a checkpoint as a training task's
are, so a run killed inside a bracket resumes its trials with every unit counted once. So
1,000 runs of a multi-fidelity comparison with ``k`` asynchronous workers take minutes (Syne Tune's simulator and
the tabular benchmarks of LCBench / HPOBench / YAHPO are the anchors; none of those can be downloaded here).
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import parse_space
from hpoflow.tasks.base import Task, unobserved
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.multi_fidelity import Reached
from hpoflow.tasks.suite import is_suite_task, load_suite_task, suite_tasks
from hpoflow.tasks.trial_states import TrialStates

CURVES = Path(__file__).parent / "curves"


def benchmarks() -> list[str]:
    """The benchmarks shipped with the package: the five first recordings, then the suite's tasks."""
    return sorted(p.name.removesuffix(".json.gz") for p in CURVES.glob("*.json.gz")) + suite_tasks()


@lru_cache(maxsize=64)
def load_benchmark(name: str) -> dict[str, Any]:
    """The recorded benchmark ``name`` (see the module doc), or the file ``name`` when it ends in ``.json.gz``.

    Raises:
        ValueError: no such file (one line naming the ones there are).
    """
    if is_suite_task(name):
        return load_suite_task(name)
    path = Path(name).expanduser() if name.endswith(".json.gz") else CURVES / f"{name}.json.gz"
    if not path.is_file():
        raise ValueError(f"task.benchmark='{name}' is unknown; allowed: {', '.join(benchmarks()) or 'none shipped'}, "
                         "or a .json.gz / .npz file that scripts/record_curves.py / record_suite.py wrote")
    with gzip.open(path, "rt") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


class ReplayTask(Continuable):
    """A recorded benchmark replayed (module doc). ``optimum``: the best full-fidelity value of the set."""

    def __init__(self, benchmark: str, seed: int = 0, max_fidelity: int | None = None) -> None:
        data = load_benchmark(benchmark)
        self.name, self.benchmark, self.seed = "lc_replay", benchmark, seed
        f = data["fidelity"]
        top = f["max"] if max_fidelity is None else max_fidelity
        if isinstance(top, bool) or not isinstance(top, int) or not f["min"] <= top <= f["max"]:
            raise ValueError(f"task.max_fidelity={max_fidelity!r} must be an integer in [{f['min']}, {f['max']}] "
                             f"(benchmark {benchmark} records {f['name']} {f['min']}..{f['max']}) or null")
        table = _prepared(benchmark, top)  # shared by every run of the process: read only
        self.space, self.direction, self.fidelity = table.space, table.direction, table.fidelity
        self.configs, self.curves, self.step_seconds = table.configs, table.curves, table.step_seconds
        self.seconds, self.test_curves, self.optimum = table.seconds, table.test_curves, table.optimum
        self.points = table.points.clone()  # n x d
        self.candidates = self.points
        self._index = table.index
        self.states = TrialStates()  # config id -> Kept(Reached): what a promotion continues from

    def row(self, config: dict[str, Any]) -> int:
        """The recorded configuration ``config`` is (the nearest in ``[0, 1]^d`` if it is not exactly one)."""
        import torch

        u = self.space.encode(config, torch.float64)
        i = self._index.get(_key(u.tolist()))
        return i if i is not None else int(torch.cdist(u[None], self.points).argmin())

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        assert self.fidelity is not None
        return self.evaluate_at(config, fidelity=self.fidelity.max, config_id=None, round=round, observe=observe)

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        assert self.fidelity is not None
        self.fidelity.check(fidelity)
        if not observe:
            return unobserved()
        return super().evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round)

    def fresh_state(self, config: dict[str, Any], seed: int) -> Reached:
        return Reached()

    def advance(self, state: Reached, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """The recorded values after units ``start + 1 .. stop``."""
        i = self.row(config)
        state.level = stop
        return [[float(r), self.curves[i][r - 1]] for r in range(int(start) + 1, int(stop) + 1)]

    def score(self, state: Reached, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        """The value after the last unit; ``elapsed``: the recorded seconds of the units trained, ``row``: which
        recorded configuration, ``test_value``: the test split's value there (suite tasks)."""
        assert self.fidelity is not None
        i = self.row(config)
        metrics = {"elapsed": float(sum(self.step_seconds[i][int(r) - 1] for r, _ in curve)), "row": float(i)}
        if self.test_curves is not None:  # the suite's test split: reported beside the value, never optimised
            metrics["test_value"] = self.test_curves[i][int(curve[-1][0]) - 1]
        return curve[-1][1], metrics

    def reference_values(self) -> dict[str, float]:
        return {"optimum": float(self.optimum)} if self.optimum is not None else {}


@dataclass(frozen=True)
class _Table:
    """A benchmark cut at ``top`` units, as a replayed task reads it (``n`` configurations, ``d`` dimensions)."""

    space: Any
    direction: Direction
    fidelity: Fidelity
    configs: list[dict[str, Any]]
    curves: list[list[float]]         # n x top: the value after each unit
    step_seconds: list[list[float]]   # n x top: the seconds of each unit
    seconds: list[float]              # n: seconds to the full level
    test_curves: list[list[float]] | None
    points: Any                       # n x d tensor in [0, 1]^d
    index: dict[tuple[float, ...], int]
    optimum: float


@lru_cache(maxsize=64)
def _prepared(benchmark: str, top: int) -> _Table:
    """The benchmark's tables, built once per process (a study replays one benchmark in hundreds of runs)."""
    import torch

    data = load_benchmark(benchmark)
    f = data["fidelity"]
    space = parse_space(data["space"])
    direction = Direction(data["direction"])
    curves = [c[:top] for c in data["curves"]]
    per_step = data.get("step_seconds") or [[s / f["max"]] * f["max"] for s in data["seconds"]]
    step_seconds = [row[:top] for row in per_step]
    points = torch.stack([space.encode(c, torch.float64) for c in data["configs"]])
    finals = [c[-1] for c in curves]
    return _Table(space, direction, Fidelity(f["name"], f["min"], top, f["integer"]), data["configs"], curves,
                  step_seconds, [sum(row) for row in step_seconds],
                  [c[:top] for c in data["test_curves"]] if "test_curves" in data else None, points,
                  {_key(u.tolist()): i for i, u in enumerate(points)},
                  min(finals) if direction is Direction.MINIMIZE else max(finals))


def _key(u: list[float]) -> tuple[float, ...]:
    return tuple(round(v, 9) for v in u)


def make_lc_replay(benchmark: str = "digits_mlp", seed: int = 0, max_fidelity: int | None = None,
                   **_: object) -> Task:
    return ReplayTask(benchmark, seed, max_fidelity)
