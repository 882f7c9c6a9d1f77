"""ParEGO (hpoflow.algorithms.parego): the scalarisation's maths, its refusal of one-objective tasks, a run."""
from __future__ import annotations

import pytest
import torch

import hpoflow
from hpoflow.algorithms.parego import chebyshev, normalise
from hpoflow.algorithms.parego_config import ParEGOConfig
from hpoflow.config.settings import ConfigError


def test_normalise_and_augmented_chebyshev_on_a_small_case():
    F = torch.tensor([[1.0, 10.0], [3.0, 30.0], [2.0, 10.0]], dtype=torch.float64)
    N = normalise(F)
    assert N.tolist() == [[0.0, 0.0], [1.0, 1.0], [0.5, 0.0]]
    s = chebyshev(N, torch.tensor([0.25, 0.75], dtype=torch.float64), rho=0.05)
    assert s.tolist() == pytest.approx([0.0, 0.75 + 0.05, 0.125 + 0.05 * 0.125])
    assert normalise(torch.tensor([[1.0, 2.0], [1.0, 3.0]])).tolist() == [[0.0, 0.0], [0.0, 1.0]]  # constant column


def test_chebyshev_minimiser_is_pareto_optimal_on_a_concave_front():
    # points on the concave front f2 = 1 - f1^2 and a dominated one; any weights pick a front point
    t = torch.linspace(0, 1, 11, dtype=torch.float64)
    front = torch.stack([t, 1 - t**2], dim=1)
    F = torch.cat([front, torch.tensor([[0.6, 0.9]], dtype=torch.float64)])
    for w in (0.1, 0.5, 0.9):
        assert int(chebyshev(F, torch.tensor([w, 1 - w], dtype=torch.float64), 0.05).argmin()) < 11


def test_bad_rho_is_one_line():
    with pytest.raises(ValueError, match=r"^algo.rho=-1.0 must be a number >= 0$"):
        ParEGOConfig(rho=-1.0)


def test_parego_refuses_a_single_objective_task():
    with pytest.raises(ConfigError, match="algo=parego needs a task with several objectives"):
        hpoflow.minimize(lambda c: c["x"], {"x": ("float", 0.0, 1.0)}, algo="parego", rounds=3)


def test_parego_run_finds_a_front_on_a_convex_two_objective_function():
    space = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}

    def fn(c):
        return {"f1": c["x"] + c["y"], "f2": (1 - c["x"]) + c["y"]}  # the front: y = 0

    r = hpoflow.minimize(fn, space, algo="parego", rounds=14, objectives={"f1": "min", "f2": "min"},
                         reference=[2.0, 2.0], seed=1)
    guided = r.records[-6:]
    assert all(rec.values for rec in r.records) and r.pareto
    assert any("weight_0" in m for m in r.metrics)  # the scalarisation's weights are logged per guided round
    # it heads for the front (seeds 0-2: mean y of the last 6 about 0.02 against about 0.5 for random search)
    assert sum(rec.config["y"] for rec in guided) / 6 < 0.1
