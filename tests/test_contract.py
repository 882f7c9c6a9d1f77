"""Every registered algorithm and task goes through the same API checks (parametrised over the registry)."""
from __future__ import annotations

import math

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.config.settings import build_algorithm, build_task, validate
from hpoflow.runner.loop import Budget, run

CHEAP_DEFAULT = ("task=branin",)
# a multi-fidelity smoke task at two rungs (1 and 3, eta = 3): every algorithm has a full-fidelity evaluation by its
# 4th round, so a 5-round run has an incumbent (taken from full-fidelity evaluations only)
TWO_RUNGS = ("task.max_resource=3",)


def _smoke(entry) -> tuple[str, ...]:
    overrides = tuple(entry.smoke or CHEAP_DEFAULT)
    if any(o.startswith("task=") and o.endswith("_mf") for o in overrides):
        overrides += TWO_RUNGS
    return overrides


def _full_fidelity_best(result, task) -> float | None:
    """The best value among the run's evaluations at the task's full fidelity (all of them without a fidelity)."""
    top = None if task.fidelity is None else float(task.fidelity.max)
    values = [r.value for r in result.records if r.queried and r.value is not None and math.isfinite(r.value)
              and (top is None or r.fidelity is None or r.fidelity >= top)]
    if not values:
        return None
    return max(values) if task.direction.value == "maximize" else min(values)


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


def _run(algo_name: str, rounds: int = 5, overrides: tuple[str, ...] | None = None):
    entry = registry.get("algorithm", algo_name)
    if entry.missing():  # an optional extra (peers) that is not installed
        pytest.skip(f"{algo_name} needs {entry.missing()} (pip install 'hpoflow[{entry.extra}]')")
    s = _settings(_smoke(entry) if overrides is None else overrides, algo_name, rounds)
    task = build_task(s)
    surrogate = registry.get("surrogate", s.surrogate.name)
    from functools import partial

    import torch
    factory = partial(surrogate.load(), s.surrogate, dtype=torch.float64, device=torch.device("cpu"))
    ctx = BuildContext(task=task, rounds=rounds, seed=s.seed, surrogate=factory)
    return run(task, build_algorithm(s, ctx), budget=Budget(rounds)), task


@pytest.mark.parametrize("name", [e.name for e in registry.entries("algorithm")])
def test_every_algorithm_runs_records_every_round_and_is_deterministic(name):
    (a, task), (b, _) = _run(name), _run(name)
    assert [r.round for r in a.records] == list(range(1, 6))
    assert all(m["query_cost"] >= 0 for m in a.metrics)
    assert [r.config for r in a.records] == [r.config for r in b.records], "same seed must give same trajectory"
    assert a.summary["best_value"] is not None and math.isfinite(a.summary["best_value"])
    if a.summary.get("pareto_size") is None:  # one objective: the incumbent is the best full-fidelity evaluation
        assert a.summary["best_value"] == _full_fidelity_best(a, task)


@pytest.mark.parametrize("name", ["sha", "hyperband", "asha"])
def test_a_run_with_no_full_fidelity_evaluation_reports_no_incumbent(name):
    """At 81 resource units (rungs 1, 3, 9, 27, 81) five rounds of these schedulers never reach the full fidelity."""
    result, task = _run(name, overrides=("task=branin_mf",))
    assert task.fidelity is not None and float(task.fidelity.max) == 81.0
    assert [r.round for r in result.records] == list(range(1, 6)) and all(r.fidelity < 81 for r in result.records)
    assert any(r.value is not None and math.isfinite(r.value) for r in result.records)  # values below full exist
    assert result.summary["best_value"] is None and result.summary["best_config"] is None
    assert result.summary["incumbent_fidelity"] == 81.0
    assert not any("best_value" in m or "simple_regret" in m for m in result.metrics)
    assert all("cumulative_regret" in m for m in result.metrics)  # regret of every evaluation is still summed


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
