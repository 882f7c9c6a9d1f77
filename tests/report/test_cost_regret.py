"""Regret against query cost as two objectives (hpoflow.report.cost_regret) on runs worked by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpoflow.report.cost_regret import chooses_queries, cost_regret_section, trade_off
from hpoflow.report.loading import StudyData


def _study(costs: dict[str, list[float]], regrets: dict[str, list[float]], algos: dict[str, str]) -> StudyData:
    runs = pd.DataFrame({"run_id": list(costs), "algo": [algos[r] for r in costs], "task_key": "tv", "rounds": 4,
                         "seed": "0", "regret_reference": "none"})
    rows = [{"run_id": r, "step": t + 1, "query_cost": float(np.sum(costs[r][: t + 1])),
             "cumulative_regret": float(np.sum(regrets[r][: t + 1]))} for r in costs for t in range(4)]
    return StudyData(runs, pd.DataFrame(rows), pd.DataFrame(), "sqlite://", "")


def test_final_points_and_the_methods_front_by_hand(tmp_path):
    # "always" queries every round and ends with R_T/T = 0.1; "never" pays 1 and ends at 0.4; "worse" pays as much
    # as "always" for more regret: dominated
    data = _study({"a": [1, 1, 1, 1], "b": [1, 0, 0, 0], "c": [1, 1, 1, 1]},
                  {"a": [0.4, 0, 0, 0], "b": [0.4, 0.4, 0.4, 0.4], "c": [0.4, 0.4, 0, 0]},
                  {"a": "always", "b": "never", "c": "worse"})
    assert chooses_queries(data.runs, data.curves)  # run b's rounds 2-4 cost nothing
    paths, final = trade_off(data.runs, data.curves)
    got = final.set_index("algo")
    assert got.loc["always", "cost"] == 4 and got.loc["always", "regret"] == pytest.approx(0.1)
    assert got.loc["never", "cost"] == 1 and got.loc["never", "regret"] == pytest.approx(0.4)
    assert got["front"].to_dict() == {"never": True, "always": True, "worse": False}
    c, r, keep = paths["always"]  # (1, .4), (2, .2), (3, .133), (4, .1): each round is a new trade-off point
    assert keep.tolist() == [0, 1, 2, 3] and r[keep] == pytest.approx([0.4, 0.2, 0.4 / 3, 0.1])
    sec = cost_regret_section(data, tmp_path)
    assert sec.csv is not None and sec.csv.is_file() and (tmp_path / "cost_regret_tv.png").is_file()
    assert "| **never** | 1 |" in sec.printed[1] and "| worse | 1 |" in sec.printed[1]


def test_runs_that_query_every_round_or_log_no_regret_get_no_section(tmp_path):
    every = _study({"a": [1, 1, 1, 1]}, {"a": [0.1] * 4}, {"a": "gp"})
    assert not chooses_queries(every.runs, every.curves)
    no_regret = _study({"a": [1, 0, 1, 0]}, {"a": [0.1] * 4}, {"a": "gp"})
    no_regret.curves["cumulative_regret"] = np.nan
    assert not chooses_queries(no_regret.runs, no_regret.curves)
    assert cost_regret_section(every, tmp_path).blocks == []


def test_a_cost_budget_s_unlimited_rounds_end_the_paths_at_the_last_logged_round():
    data = _study({"a": [1, 1, 1, 1], "b": [1, 0, 0, 0]}, {"a": [0.4, 0, 0, 0], "b": [0.4] * 4},
                  {"a": "always", "b": "never"})
    paths, final = trade_off(data.runs, data.curves)
    unlimited = data.runs.assign(rounds=1_000_000)  # budget.rounds of a run stopped by its cost budget
    paths_u, final_u = trade_off(unlimited, data.curves)
    assert all(len(paths_u[a][0]) == len(paths_u[a][1]) == 4 for a in paths_u)
    pd.testing.assert_frame_equal(final, final_u)
