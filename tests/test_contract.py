"""Every registered algorithm and task goes through the same API checks (parametrised over the registry)."""
from __future__ import annotations

import math

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.config.settings import build_algorithm, build_task, validate
from hpoflow.runner.loop import Budget, run

CHEAP_DEFAULT = ("task=branin",)


def _settings(overrides: tuple[str, ...], algo: str, rounds: int = 5):
    raw = {"algo": {"name": algo}, "surrogate": {"name": "gp"}, "task": {"name": "branin"},
           "hardware": {"name": "cpu", "device": "cpu"}, "tracking": {"enabled": False},
           "budget": {"rounds": rounds}, "seed": 3}
    for o in overrides:
        key, value = o.split("=", 1)
        if key in ("task", "surrogate", "algo"):
            raw[key] = {"name": value}
        else:
            group, *path = key.split(".")  # a dotted override (algo.advanced.raw_samples=64) nests, as in Hydra
            node = raw.setdefault(group, {})
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = int(value) if value.isdigit() else value
    return validate(raw)


def _run(algo_name: str, rounds: int = 5):
    entry = registry.get("algorithm", algo_name)
    if entry.missing():  # an optional extra (peers) that is not installed
        pytest.skip(f"{algo_name} needs {entry.missing()} (pip install 'hpoflow[{entry.extra}]')")
    s = _settings(entry.smoke or CHEAP_DEFAULT, algo_name, rounds)
    task = build_task(s)
    surrogate = registry.get("surrogate", s.surrogate.name)
    from functools import partial

    import torch
    factory = partial(surrogate.load(), s.surrogate, dtype=torch.float64, device=torch.device("cpu"))
    ctx = BuildContext(task=task, rounds=rounds, seed=s.seed, surrogate=factory)
    return run(task, build_algorithm(s, ctx), budget=Budget(rounds))


@pytest.mark.parametrize("name", [e.name for e in registry.entries("algorithm")])
def test_every_algorithm_runs_records_every_round_and_is_deterministic(name):
    a, b = _run(name), _run(name)
    assert [r.round for r in a.records] == list(range(1, 6))
    assert all(m["query_cost"] >= 0 for m in a.metrics)
    assert [r.config for r in a.records] == [r.config for r in b.records], "same seed must give same trajectory"
    assert a.summary["best_value"] is not None and math.isfinite(a.summary["best_value"])


@pytest.mark.parametrize("name", [e.name for e in registry.entries("task")])
def test_every_task_builds_and_evaluates_its_space_centre(name):
    import torch

    entry = registry.get("task", name)
    if entry.missing():
        pytest.skip(f"{name} needs {entry.missing()} (pip install 'hpoflow[{entry.extra}]')")
    config = entry.make_config()
    try:
        task = entry.load()(**{k: getattr(config, k) for k in config.__dataclass_fields__}, seed=0)
    except FileNotFoundError as exc:  # a task over user-supplied data (e.g. mnist_cnn's task.path)
        pytest.skip(f"{name} needs local data: {exc}")
    assert task.direction.value in ("maximize", "minimize")
    if hasattr(task, "model"):
        pytest.skip("classifier tasks are evaluated in tests/tasks/test_sklearn_hpo.py")
    centre = task.space.decode(torch.full((task.space.dim,), 0.5, dtype=torch.float64))
    ev = task.evaluate(centre, round=1)
    assert math.isfinite(ev.value) and ev.cost >= 0
