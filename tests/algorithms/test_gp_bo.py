"""GP-BO family: failures are imputed pessimistically so the search moves away from them."""
from __future__ import annotations

import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPEIConfig, GPUCBConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.core.records import Failure
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.synthetic import make_branin


def test_failed_point_is_told_with_the_worst_reward():
    task = make_branin()
    algo = GPEI(GPEIConfig(n_init=3), BuildContext(task=task, rounds=10, seed=0, surrogate=lambda d: ExactGP(d)))
    for t in range(1, 4):
        s = algo.ask(t)
        algo.tell(s, task.evaluate(s.config, round=t))
    s = algo.ask(4)
    algo.tell(s, Failure("diverged"))
    assert len(algo.y) == 4 and algo.y[-1] == min(algo.y[:3])
    assert torch.equal(algo.X[-1], s.x)


def test_skopt_preset_sets_gp_minimize_defaults_and_keeps_explicit_values():
    c = GPEIConfig(preset="skopt")
    assert (c.n_init, c.init, c.xi, c.xi_units) == (10, "random", 0.01, "raw")
    assert GPUCBConfig(preset="skopt").beta == pytest.approx(1.96**2)
    assert GPEIConfig(preset="skopt", n_init=4).n_init == 4
    with pytest.raises(ValueError, match="algo.preset"):
        GPEIConfig(preset="sklearn")
    with pytest.raises(ValueError, match="algo.init"):
        GPEIConfig(init="lhs")


def test_raw_xi_is_divided_by_the_reward_std_and_shifts_the_ei_incumbent():
    task = make_branin()
    ctx = BuildContext(task=task, rounds=8, seed=0, surrogate=lambda d: ExactGP(d))
    algo = GPEI(GPEIConfig(preset="skopt", n_init=3), ctx)
    assert algo.init_points.shape == (3, 2)
    for t in range(1, 5):
        s = algo.ask(t)
        algo.tell(s, task.evaluate(s.config, round=t))
    assert algo.margin() == pytest.approx(0.01 / float(algo.model.y_std))
    _, info = algo.acquisition(5)
    assert info["incumbent"] == pytest.approx(float(algo.incumbent()) + algo.margin())
    ours = GPEI(GPEIConfig(n_init=3), ctx)
    assert ours.margin() == 0.0


def test_gp_bo_refuses_the_time_varying_gp_which_does_not_standardise_its_outputs():
    import hpoflow
    from hpoflow.config.settings import ConfigError

    with pytest.raises(ConfigError, match="needs a surrogate with standardised outputs .*got TemporalGP"):
        hpoflow.make_algorithm("gp_ei", {"x": ("float", 0.0, 1.0)}, surrogate="tv_gp")
    assert hpoflow.make_algorithm("gp_ei", {"x": ("float", 0.0, 1.0)}, surrogate="nn").model.n == 0


def test_init_center_replaces_the_first_design_point_by_the_centre():
    task = make_branin()
    ctx = BuildContext(task=task, rounds=10, seed=0, surrogate=lambda d: ExactGP(d))
    plain, centred = GPEI(GPEIConfig(n_init=3), ctx), GPEI(GPEIConfig(n_init=3, init_center=True), ctx)
    assert torch.equal(centred.init_points[0], torch.full((2,), 0.5, dtype=torch.float64))
    assert torch.equal(centred.init_points[1:], plain.init_points[1:])
    assert torch.equal(centred.ask(1).x, centred.init_points[0])
    with pytest.raises(ValueError, match="algo.init_center=1 is not allowed"):
        GPEIConfig(init_center=1)  # type: ignore[arg-type]


def test_output_transform_null_is_power_for_gp_ei_only_and_an_explicit_value_wins():
    """surrogate.output_transform=null (the default) resolves per algorithm: power for gp_ei and auto's gp_ei, none for
    gp_ucb and for scikit-optimize's preset; a value the user set is kept; the resolved GP transforms its outputs."""
    from hpoflow.api import make_algorithm
    from hpoflow.surrogates.configs import GPConfig

    space = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}
    assert GPConfig().output_transform is None
    assert make_algorithm("gp_ei", space).model.config.output_transform == "power"
    assert make_algorithm("gp_ucb", space).model.config.output_transform == "none"
    assert make_algorithm("skopt_gp_ei", space).model.config.output_transform == "none"
    assert make_algorithm("gp_ei", space, surrogate={"name": "gp", "output_transform": "none"}
                          ).model.config.output_transform == "none"
    assert make_algorithm("auto", space, rounds=20).delegate.model.config.output_transform == "power"
    assert make_algorithm("gp_ei", space).run_tags() == {"surrogate.output_transform": "power"}  # the run's tag
    assert make_algorithm("gp_ei", space, surrogate={"name": "gp", "output_transform": "none"}).run_tags() == {}
    gp_ei = make_algorithm("gp_ei", space, seed=1)
    X = torch.rand(8, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    gp_ei.model.fit(X, -torch.exp(6 * X.sum(1)))
    assert gp_ei.model._transform is not None and gp_ei.model._transform.lmbda != 1.0
