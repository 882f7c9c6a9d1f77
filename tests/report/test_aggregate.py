"""Report maths on hand-built runs: intervals, f* for real tasks, simple regret, cost grid, filters."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.report.aggregate import band, mean_ci, on_cost_grid, summarise
from hpoflow.report.loading import RunCurve, filter_string
from hpoflow.report.tables import CAPTION_REAL, caption, format_best_configs, format_table, write_csv


def _curve(algo, seed, values, regret=None, cost=None, direction="maximize"):
    values = np.asarray(values, float)
    return RunCurve(f"{algo}{seed}", algo, ("wine",), str(seed), "FINISHED", direction,
                    "optimum" if regret is not None else "bound", values,
                    None if regret is None else np.asarray(regret, float),
                    np.arange(1.0, len(values) + 1) if cost is None else np.asarray(cost, float), 1.0 + seed)


def test_mean_ci_is_mean_and_196_std_over_sqrt_n():
    m, h = mean_ci([1.0, 2.0, 6.0])
    assert m == pytest.approx(3.0)
    assert h == pytest.approx(1.96 * np.std([1, 2, 6], ddof=1) / math.sqrt(3))
    assert mean_ci([4.0]) == (4.0, 0.0)


def test_real_task_regret_uses_best_value_seen_across_all_selected_runs():
    runs = [_curve("a", 0, [0.90, 0.95, 0.93]), _curve("a", 1, [0.80, 0.85, 0.97]),
            _curve("b", 0, [0.70, 0.99, 0.60])]
    (rows,) = summarise(runs).values()
    a, b = sorted(rows, key=lambda s: s.algo)
    f_star = 0.99  # seen by algorithm b only: a's regret is measured against it too
    cum_a = [sum(f_star - v for v in r.values) for r in runs[:2]]
    assert a.cumulative == pytest.approx(mean_ci(cum_a))
    assert a.simple == pytest.approx(mean_ci([f_star - 0.95, f_star - 0.97]))
    assert b.simple == pytest.approx((0.0, 0.0))
    np.testing.assert_allclose(a.simple_curves[1], [0.19, 0.14, 0.02])
    assert a.best_run == "a1" and a.best_value == pytest.approx(0.97) and not a.f_star_known
    assert caption(rows) == CAPTION_REAL and "best value seen" in CAPTION_REAL
    table = format_table(rows)
    assert [ln.split()[1] for ln in table.splitlines()[2:]] == ["a", "b"]  # sorted: 0.27 < 0.68
    assert "| a | 0.97 | 1 |" in format_best_configs(rows)


def test_known_optimum_uses_logged_regret_and_minimisation():
    runs = [_curve("a", 0, [5.0, 3.0], regret=[4.0, 2.0], direction="minimize")]
    (rows,) = summarise(runs).values()
    assert rows[0].cumulative == (6.0, 0.0) and rows[0].simple == (2.0, 0.0) and rows[0].f_star_known
    assert rows[0].best_value == 3.0


def test_cost_grid_is_a_step_function_of_cumulative_cost():
    runs = [_curve("a", 0, [0.0, 0.0, 0.0], regret=[1, 1, 1], cost=[1.0, 3.0, 4.0]),
            _curve("a", 1, [0.0, 0.0, 0.0], regret=[2, 2, 2], cost=[2.0, 2.5, 6.0])]
    (rows,) = summarise(runs).values()
    grid, cum = on_cost_grid(rows[0], points=5)  # from max first cost 2 to min final cost 4
    np.testing.assert_allclose(grid, [2.0, 2.5, 3.0, 3.5, 4.0])
    np.testing.assert_allclose(cum[0], [1, 1, 2, 2, 3])
    np.testing.assert_allclose(cum[1], [2, 4, 4, 4, 4])
    mean, half = band(cum)
    np.testing.assert_allclose(mean, cum.mean(0))
    np.testing.assert_allclose(half, 1.96 * cum.std(0, ddof=1) / math.sqrt(2))


def test_filter_string_and_csv(tmp_path):
    assert filter_string("abc", {"algo": "gp_ei", "seed": 1}) == \
        "tags.sweep_id = 'abc' and tags.algo = 'gp_ei' and tags.seed = '1'"
    assert filter_string() == ""
    summaries = summarise([_curve("a", 0, [0.5, 0.6]), _curve("a", 1, [0.7, 0.4])])
    path = write_csv(summaries, tmp_path / "s.csv")
    import csv

    with open(path) as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["algo"] == "a" and row["n"] == "2" and row["f_star"] == "best seen across selected runs"
    assert float(row["simple_regret_mean"]) == pytest.approx(0.05)


def test_the_versus_best_caption_states_the_p_floor_for_any_number_of_seeds():
    """2 / 2^n for n paired seeds; a 10,000-seed study once overflowed here (int too large to convert to float) and
    failed the report after 10 minutes of reading (session 12's 10,000-run study)."""
    from hpoflow.report.tables import versus_best_caption

    assert "the smallest attainable p is 0.0625." in versus_best_caption(5)
    assert "the smallest attainable p is 5.83e-303." in versus_best_caption(1005)
    assert "the smallest attainable p is below 1e-300." in versus_best_caption(10_000)
    assert "the smallest attainable p is nan." in versus_best_caption(0)


def test_thinned_lines_are_the_same_lines_from_fewer_points():
    """figures._thin drops only inner points of flat runs: the polyline through what is left passes through
    every original point (NaN gaps kept), and a curve held flat to budget.rounds = 1,000,000 keeps a few points."""
    from hpoflow.report.figures import _thin

    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        x = np.cumsum(rng.uniform(0.1, 1.0, n))
        mean = np.repeat(rng.normal(size=n), rng.integers(1, 4, n))[:n]  # runs of equal values
        half = np.where(rng.random(n) < 0.1, np.nan, np.abs(mean) / 3)
        tx, tm, th = _thin(x, mean, half)
        assert tx[0] == x[0] and tx[-1] == x[-1] and len(tx) <= n
        np.testing.assert_allclose(np.interp(x, tx, tm), mean, rtol=0, atol=1e-12)
        assert np.array_equal(np.isnan(half), np.isnan(np.interp(x, tx, th)))  # a NaN point is never dropped
    x = np.arange(1, 1_000_001)
    held = np.minimum(x, 19).astype(float)  # 19 logged rounds, then the held tail
    tx, th = _thin(x, held)
    assert list(tx) == list(range(1, 20)) + [1_000_000]


def test_simple_regret_and_the_best_value_count_full_fidelity_rounds_only():
    def mf(algo, seed, values, levels):
        c = _curve(algo, seed, values, regret=[1.0 - v for v in values])
        c.fidelity = np.asarray(levels, float)
        return c

    runs = [mf("a", 0, [0.9, 0.6, 0.7], [1, 3, 3]),  # 0.9 seen at level 1 only: not its best
            mf("b", 0, [0.95, 0.5], [1, 1])]        # never at the full level 3: no simple regret, no best value
    a, b = sorted(summarise(runs)["wine",], key=lambda s: s.algo)
    assert a.best_value == pytest.approx(0.7) and a.simple == pytest.approx((0.3, 0.0)) and a.full_fidelity == 3.0
    assert a.cumulative[0] == pytest.approx(0.1 + 0.4 + 0.3)  # cumulative regret counts every level
    assert math.isnan(b.best_value) and b.best_run == "" and math.isnan(b.simple[0])
    assert "the task's full fidelity (3)" in caption([a, b])
    assert "| b | nan |" in format_best_configs([a, b])
    a_any, b_any = sorted(summarise(runs, incumbent="any")["wine",], key=lambda s: s.algo)
    assert a_any.best_value == pytest.approx(0.9) and b_any.best_value == pytest.approx(0.95)
    assert "fidelity" not in caption([a_any, b_any])


def test_f_star_of_a_real_task_is_the_best_full_fidelity_value_seen():
    low, full = _curve("a", 0, [0.99, 0.8]), _curve("b", 0, [0.7, 0.9])
    low.fidelity, full.fidelity = np.array([1.0, 3.0]), np.array([3.0, 3.0])
    a, b = sorted(summarise([low, full])["wine",], key=lambda s: s.algo)
    assert not a.f_star_known and a.simple == pytest.approx((0.1, 0.0)) and b.simple == pytest.approx((0.0, 0.0))


def test_the_full_level_is_the_runs_tag_else_the_highest_logged_fidelity():
    import pandas as pd

    from hpoflow.report.loading import StudyData, to_run_curves

    def study(tag):
        runs = pd.DataFrame([{"run_id": r, "run_name": r, "experiment_id": "0", "algo": "a", "task_key": "t",
                              "seed": str(i), "status": "FINISHED", "direction": "minimize",
                              "regret_reference": "optimum", "rounds": 2} for i, r in enumerate(("r0", "r1"))])
        if tag is not None:
            runs["tags.final.incumbent_fidelity"] = [repr(tag), None]  # r1: logged before the tag existed
        curves = pd.DataFrame({"run_id": ["r0", "r0", "r1", "r1"], "step": [1, 2, 1, 2],
                               "value": [0.2, 0.5, 0.3, 0.4], "regret": [0.2, 0.5, 0.3, 0.4],
                               "query_cost": [1.0, 4.0, 3.0, 6.0], "fidelity": [1.0, 3.0, 3.0, 3.0]})
        return StudyData(runs, curves, pd.DataFrame(), "sqlite://")

    curves = to_run_curves(study(None))
    assert [c.full_fidelity for c in curves] == [3.0, 3.0]
    (row,) = summarise(curves)["t",]
    assert row.best_value == pytest.approx(0.3) and row.simple == pytest.approx(mean_ci([0.5, 0.3]))
    curves = to_run_curves(study(9.0))  # the task's full fidelity, which no round reached
    assert [c.full_fidelity for c in curves] == [9.0, 9.0]
    (row,) = summarise(curves)["t",]
    assert math.isnan(row.best_value) and row.best_run == "" and math.isnan(row.simple[0])
