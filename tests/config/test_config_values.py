"""One spelling everywhere: ``null`` = the documented automatic choice, ``never`` = a schedule off, numbers =
themselves.

Each ``null`` default must mean what its YAML comment says; the old sentinels (0 / -1 = auto, 0 = never)
must fail with a one-line error naming the value and what is allowed (they are refused, not reinterpreted,
so an old config cannot silently change meaning).
"""
from __future__ import annotations

import math
import re

import pytest
import torch

import hpoflow
from hpoflow.algorithms.go_ucb_config import GOUCBConfig
from hpoflow.algorithms.peers.configs import BoTorchConfig
from hpoflow.config import registry
from hpoflow.config.compose import compose
from hpoflow.config.settings import ConfigError, validate
from hpoflow.core.config_values import NEVER
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.gp import ExactGP

SPACE2 = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}


def test_null_n_init_and_design_sizes_are_the_documented_formulas():
    d, rounds = 2, 40
    assert hpoflow.make_algorithm("gp_ei", SPACE2, rounds=rounds).n_init == max(2, min(d + 1, rounds // 2))
    assert hpoflow.make_algorithm("gp_ei", SPACE2, rounds=rounds, n_init=7).n_init == 7
    turbo = hpoflow.make_algorithm("turbo", SPACE2, rounds=rounds)
    assert turbo.n_init == min(2 * d, max(2, rounds // 4))
    assert turbo.n_candidates == min(100 * d, 2000) and turbo.tr.failure_tolerance == max(4, d)
    grid = hpoflow.make_algorithm("grid", SPACE2, rounds=rounds)
    assert [len(a) for a in grid.axes] == [6, 6]  # the largest k with k^2 <= 40
    assert hpoflow.make_algorithm("exp3s", {"arm": ["a", "b", "c"]}, rounds=rounds).alpha == 1 / rounds


def test_reset_every_null_is_the_r_gp_ucb_period_and_never_is_off():
    space = {"x": ("float", 0.0, 1.0)}
    auto = hpoflow.make_algorithm("r_gp_ucb", space)
    assert auto.reset_every == math.ceil(12 * 0.03 ** -0.25)  # surrogate=tv_gp's default eps = 0.03
    assert hpoflow.make_algorithm("r_gp_ucb", space, reset_every=NEVER).reset_every is None
    assert hpoflow.make_algorithm("tv_gp_ucb", space).reset_every is None
    assert hpoflow.make_algorithm("tv_gp_ucb", space, reset_every=5).reset_every == 5


def _data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64)
    return X, torch.sin(6 * X[:, 0]) + X[:, 1]


@pytest.mark.parametrize("refit_every,fits_at", [(None, [10, 12, 13]), (NEVER, [10]), (2, [10, 12, 14])])
def test_gp_refit_every_null_is_the_auto_schedule_never_keeps_the_first_fit(refit_every, fits_at):
    X, y = _data(15)
    gp = ExactGP(2, GPConfig(max_iter=5, refit_every=refit_every, refit_growth=0.2))
    gp.fit(X[:10], y[:10])
    seen = [gp._n_at_fit]
    for i in range(10, 14):
        gp.update(X[i:i + 1], y[i:i + 1] + (50.0 if i == 12 else 0.0))  # point 13 (n=13) is a wild one
        if gp._n_at_fit != seen[-1]:
            seen.append(gp._n_at_fit)
    assert seen == fits_at


def test_go_ucb_refits_every_round_by_default_and_never_turns_it_off():
    assert GOUCBConfig().refit_every == 1 and GOUCBConfig(preset="paper").refit_every == NEVER
    smoke = registry.get("algorithm", "go_ucb").smoke  # small solver settings, wherever GO-UCB keeps them
    for every, expect in (("never", 0.0), ("1", 1.0)):
        result = hpoflow.run_config(["algo=go_ucb", *smoke, "budget.rounds=5", "algo.n_init=2",
                                     f"algo.refit_every={every}", "tracking=off", "progress=false"])
        refits = [r.metrics.get("refit", 0.0) for r in result.records]
        assert refits[-1] == expect and max(refits) == expect  # refit=1 on every Phase II round after the first


def _validated(*overrides: str):
    return validate(compose(list(overrides)))


OLD_SENTINELS = [
    (("algo=gp_ei", "algo.n_init=0"), "algo.n_init=0 is not allowed; allowed: null (max(2, min(d + 1, rounds // 2)))"),
    (("algo=bbo_ei", "algo.n_init=0"), "algo.n_init=0 is not allowed; allowed: null"),
    (("algo=turbo", "algo.n_init=0"), "algo.n_init=0 is not allowed; allowed: null (min(2 d, max(2, rounds // 4)))"),
    (("algo=grid", "algo.points_per_dim=0"), "algo.points_per_dim=0 is not allowed"),
    (("algo=sho", "algo.alpha=0"), "algo.alpha=0.0 is not allowed; allowed: null (1/L from the data's curvature)"),
    (("algo=my_hpo", "algo.delta=0"), "algo.delta=0.0 is not allowed; allowed: null (1/L"),
    (("algo=exp3s", "algo.alpha=0"), "algo.alpha=0.0 is not allowed; allowed: null (1/T) or a number in (0, 1.0)"),
    (
        ("algo=r_gp_ucb", "algo.reset_every=-1"),
        "algo.reset_every=-1 is not allowed; allowed: null (auto: ceil(12 eps^(-1/4))), never",
    ),
    (("algo=tv_gp_ucb", "algo.reset_every=0"), "algo.reset_every=0 is not allowed"),
    (("algo=go_ucb", "algo.n_init=0"), "algo.n_init=0 is not allowed; allowed: null (ceil(sqrt(budget.rounds)))"),
    (
        ("algo=go_ucb", "algo.advanced.lam=0"),
        "algo.advanced.lam=0.0 is not allowed; allowed: null (lam_scale * sqrt(T2))",
    ),
    (("algo=go_ucb", "algo.refit_every=0"), "algo.refit_every=0 is not allowed; allowed: never or an integer k >= 1"),
    (("algo=go_ucb", "algo.refit_every=null"), "algo.refit_every=None is not allowed; allowed: never or"),
    (("algo=go_ucb", "algo.refit_every=sometimes"), "algo.refit_every=sometimes is not allowed"),
    (("surrogate.refit_every=0",), "surrogate.refit_every=0 is not allowed; allowed: null (auto schedule"),
]


@pytest.mark.parametrize("overrides,message", OLD_SENTINELS, ids=[" ".join(o) for o, _ in OLD_SENTINELS])
def test_old_sentinels_fail_with_one_line_naming_the_value_and_what_is_allowed(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        _validated(*overrides)
    assert "\n" not in str(info.value)


def test_never_and_null_compose_from_the_command_line():
    s = _validated("algo=r_gp_ucb", "algo.reset_every=never", "surrogate.refit_every=3")
    assert s.algo.reset_every == NEVER and s.surrogate.refit_every == 3
    assert _validated("algo=gp_ei", "algo.n_init=null").algo.n_init is None
    with pytest.raises(ValueError, match="algo.n_init=0 is not allowed"):
        BoTorchConfig(n_init=0)


def test_cli_refuses_an_old_sentinel_with_exit_2_and_one_line(run_cli):
    proc = run_cli("algo=r_gp_ucb", "algo.reset_every=-1", "tracking=off", check=False, timeout=120)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == [lines[0]] and lines[0].startswith("Error: algo.reset_every=-1 is not allowed")
