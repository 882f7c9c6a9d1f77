"""Query rules and UCB local optima: closed forms against Monte Carlo and brute force."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hpoflow.algorithms.query import (
    ce_probability,
    ce_rule,
    cluster_representatives,
    compared_optima,
    discrete_ascent,
    knn_graph,
    lcb_ucb_rule,
    mean_shift,
)


def test_ce_probability_matches_monte_carlo():
    g = torch.Generator().manual_seed(0)
    mean_t, var_t = 0.3, 0.2
    mean = torch.tensor([0.0, 0.3, 0.8, -1.0], dtype=torch.float64)
    var = torch.tensor([0.1, 0.5, 0.05, 1.0], dtype=torch.float64)
    n = 400_000
    yt = mean_t + math.sqrt(var_t) * torch.randn(n, generator=g, dtype=torch.float64)
    y = mean + var.sqrt() * torch.randn(n, 4, generator=g, dtype=torch.float64)
    mc = (yt[:, None] > y).double().mean(0)
    torch.testing.assert_close(ce_probability(mean_t, var_t, mean, var), mc, atol=4e-3, rtol=0)


def test_ce_rule_queries_iff_some_probability_below_kappa():
    mean, var = torch.tensor([0.0, 0.9]), torch.tensor([0.01, 0.01])
    q, p = ce_rule(1.0, 0.01, mean, var, kappa=0.9)
    assert q and p == pytest.approx(0.5 * math.erfc(-0.1 / math.sqrt(0.02) / math.sqrt(2)), rel=1e-5)
    assert not ce_rule(1.0, 0.01, mean[:1], var[:1], kappa=0.9)[0]
    assert ce_rule(1.0, 0.01, torch.empty(0), torch.empty(0), 0.9) == (False, 1.0)


def test_lcb_ucb_rule_never_skips_when_intervals_overlap():
    rng = np.random.default_rng(0)
    beta = 2.0
    root = math.sqrt(beta)
    for _ in range(2000):
        k = int(rng.integers(1, 6))
        mean_t, sd_t = rng.normal(), rng.uniform(0.01, 1)
        mean, sd = rng.normal(size=k), rng.uniform(0.01, 1, size=k)
        overlap = bool(((mean + root * sd) > (mean_t - root * sd_t)).any())
        q, _ = lcb_ucb_rule(mean_t, sd_t**2, torch.tensor(mean), torch.tensor(sd**2), beta)
        assert q == overlap
    # separated intervals: skip
    assert not lcb_ucb_rule(5.0, 0.01, torch.tensor([0.0, 1.0]), torch.tensor([0.01, 0.04]), beta)[0]


def test_lcb_ucb_is_the_ce_rule_at_kappa_phi_sqrt2beta_for_equal_variances():
    # App. B: with equal variances, the LCB-UCB rule equals the CE rule at kappa = Phi(sqrt(2 beta))
    beta, var = 2.0, 0.04
    kappa = 0.5 * math.erfc(-math.sqrt(2 * beta) / math.sqrt(2))
    for gap in np.linspace(0.0, 1.0, 41):
        m = torch.tensor([1.0 - gap], dtype=torch.float64)
        v = torch.tensor([var], dtype=torch.float64)
        assert ce_rule(1.0, var, m, v, kappa)[0] == lcb_ucb_rule(1.0, var, m, v, beta)[0] or \
            abs(gap - 2 * math.sqrt(beta * var)) < 1e-9


def test_discrete_ascent_finds_every_local_maximum_and_stops_on_plateaus():
    x = torch.linspace(0, 1, 401, dtype=torch.float64).reshape(-1, 1)
    f = torch.sin(6 * math.pi * x[:, 0])  # three maxima at 1/12, 5/12, 9/12
    nbr, dist = knn_graph(x, 16)
    ends = discrete_ascent(f, nbr, dist, torch.arange(0, 401, 5), slope_tol=1e-3)
    found = sorted({round(float(x[i]), 2) for i in ends if f[i] > 0.99})
    assert found == [0.08, 0.42, 0.75]
    assert all(float(f[i]) > 0.99 or int(i) in (0, 400) for i in ends)  # every walker ends at a maximum
    flat = torch.zeros(401, dtype=torch.float64)
    starts = torch.tensor([10, 200, 390])
    assert discrete_ascent(flat, nbr, dist, starts, slope_tol=1e-3).tolist() == starts.tolist()


def test_mean_shift_merges_points_closer_than_the_bandwidth():
    pts = torch.tensor([[0.0], [0.05], [0.1], [0.6], [0.62], [0.95]], dtype=torch.float64)
    labels = mean_shift(pts, 0.2)
    assert labels[0] == labels[1] == labels[2] and labels[3] == labels[4]
    assert len(set(labels.tolist())) == 3
    reps = cluster_representatives(pts, torch.tensor([0.0, 2.0, 1.0, 0.0, 3.0, 1.0]), 0.2)
    assert sorted(reps.tolist()) == [1, 4, 5]


def test_compared_optima_drops_x_t_mode_before_merging_a_flat_plateau():
    # a flat UCB plateau (unexplored prior region): ascents stop where they start, so the end points are
    # spread over the plateau; x_t is the plateau's best point. Merging first would make x_t the
    # representative of the single cluster and leave nothing to compare.
    pts = torch.linspace(0.5, 1.0, 36, dtype=torch.float64).reshape(-1, 1)
    vals = 1.4 + 0.01 * pts[:, 0]  # the UCB creeps up away from an observation at 0; x_t = 1.0
    bw = 0.2
    old = cluster_representatives(pts, vals, bw)
    assert (torch.linalg.norm(pts[old] - pts[-1], dim=-1) > bw).sum() == 0  # the old order compared nothing
    sel, from_pool = compared_optima(pts, vals, pts[-1], bw)
    assert not from_pool and sel.numel() >= 1
    assert bool((torch.linalg.norm(pts[sel] - pts[-1], dim=-1) > bw).all())


def test_compared_optima_keeps_the_best_point_of_each_far_mode():
    pts = torch.tensor([[0.0], [0.02], [0.05], [0.5], [0.52], [0.9], [0.93]], dtype=torch.float64)
    vals = torch.tensor([5.0, 4.0, 3.0, 1.0, 2.0, 0.5, 0.7], dtype=torch.float64)
    sel, from_pool = compared_optima(pts, vals, pts[0], 0.2)
    assert not from_pool and sorted(sel.tolist()) == [4, 6]  # x_t's own mode (0, 0.02, 0.05) is dropped


def test_compared_optima_falls_back_to_the_best_far_pool_point():
    rng = np.random.default_rng(1)
    ends = torch.tensor([[0.5], [0.55]], dtype=torch.float64)  # every ascent drained into x_t's mode
    pool = torch.tensor(rng.uniform(size=(40, 1)))
    pool_vals = torch.tensor(rng.normal(size=40))
    sel, from_pool = compared_optima(ends, torch.tensor([1.0, 0.9]), ends[0], 0.2, pool, pool_vals)
    far = [j for j in range(40) if abs(float(pool[j, 0]) - 0.5) > 0.2]
    assert from_pool and sel.tolist() == [max(far, key=lambda j: float(pool_vals[j]))]
    sel, _ = compared_optima(ends, torch.tensor([1.0, 0.9]), ends[0], 0.2)
    assert sel.numel() == 0  # without a pool there is nothing to compare


def test_ce_scale_switches_the_belief_scale_between_std_and_variance():
    mean_t, var_t = 0.6, 0.04
    mean, var = torch.tensor([0.5, 0.2], dtype=torch.float64), torch.tensor([0.09, 0.01], dtype=torch.float64)
    phi = lambda z: 0.5 * math.erfc(-z / math.sqrt(2))
    std = ce_probability(mean_t, var_t, mean, var)  # main text: ŷ ~ N(μ, σ²)
    lit = ce_probability(mean_t, var_t, mean, var, scale="variance")  # App. B literally: σ² where σ belongs
    for i in range(2):
        d = mean_t - float(mean[i])
        assert float(std[i]) == pytest.approx(phi(d / math.sqrt(var_t + float(var[i]))))
        assert float(lit[i]) == pytest.approx(phi(d / math.sqrt(var_t**2 + float(var[i]) ** 2)))
    assert bool((lit > std).all())  # variances below 1: narrower beliefs, more confident
    # so at kappa = 0.8 the main text queries (min p = 0.61) and the literal reading skips (min p = 0.85)
    assert ce_rule(mean_t, var_t, mean, var, 0.8)[0] and not ce_rule(mean_t, var_t, mean, var, 0.8, "variance")[0]
    with pytest.raises(ValueError, match="algo.ce_scale='sd' is unknown; allowed: std, variance"):
        ce_probability(mean_t, var_t, mean, var, scale="sd")
