"""The comparison against compute (report/compute.py) on hand-made run tables, each number worked out by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hpoflow.report import compute as cp
from hpoflow.report import statistics as st
from hpoflow.report.loading import StudyData
from hpoflow.report.profiles import data_profiles, runtimes


def _study(runs: dict[str, dict], optimum: float | None = None, direction: str = "minimize") -> StudyData:
    """``runs[id] = {algo, seed, steps: [(fidelity, cumulative cost, value), ...], budget, status, task}``."""
    table, rows = [], []
    for run_id, r in runs.items():
        table.append({"run_id": run_id, "status": r.get("status", "FINISHED"), "algo": r["algo"],
                      "task_key": r.get("task", "t"), "seed": str(r.get("seed", 0)), "direction": direction,
                      "regret_reference": "optimum" if optimum is not None else "none", "rounds": len(r["steps"]),
                      "params.budget.cost": str(r.get("budget", "None"))})
        for step, (fid, cost, value) in enumerate(r["steps"], start=1):
            row = {"run_id": run_id, "step": step, "fidelity": fid, "query_cost": cost, "value": value}
            if optimum is not None:
                row["regret"] = abs(value - optimum)
            rows.append(row)
    return StudyData(pd.DataFrame(table), pd.DataFrame(rows), pd.DataFrame(), "sqlite://", "test")


# A: a multi-fidelity run (fidelity 1 twice, then a promotion to 3 costing 2 more, then a new config at 3);
# B: full-fidelity random search (each evaluation at 3 costs 3; its third one, at cost 9, is past the budget 8).
MF = {"A": {"algo": "mf", "budget": 8.0, "steps": [(1, 1, 5.0), (1, 2, 1.0), (3, 4, 2.0), (3, 7, 4.0)]},
      "B": {"algo": "random", "budget": 8.0, "steps": [(3, 3, 6.0), (3, 6, 3.0), (3, 9, 1.0)]}}


def _nr(cr: cp.CostRuns, run: str) -> list[float]:
    return list(cr.steps.loc[cr.steps["run_id"] == run, "nr"])


def test_full_fidelity_incumbent_budget_cost_known_optimum_and_worst_initial_value():
    cr = cp.cost_runs(_study(MF, optimum=0.0), "full")
    s = cr.scales["t"]
    assert (s.budget, s.budget_source, s.f_star, s.f_star_source) == (8.0, "budget.cost", 0.0, "known optimum")
    assert (s.f_worst, s.max_fidelity) == (6.0, 3.0)  # first counted values: A 2 (its first at fidelity 3), B 6
    assert _nr(cr, "A") == pytest.approx([1, 1, 2 / 6, 2 / 6])  # nothing counted before a full-fidelity value
    assert _nr(cr, "B") == pytest.approx([1, 3 / 6, 1 / 6])
    assert list(cr.steps.loc[cr.steps["run_id"] == "A", "fraction"]) == [1 / 8, 2 / 8, 4 / 8, 7 / 8]


def test_any_incumbent_counts_low_fidelity_values():
    cr = cp.cost_runs(_study(MF, optimum=0.0), "any")
    assert cr.scales["t"].f_worst == 6.0            # max(5, 6)
    assert _nr(cr, "A") == pytest.approx([5 / 6, 1 / 6, 1 / 6, 1 / 6])


def test_budget_and_f_star_fall_back_to_the_runs_and_a_maximised_task_is_flipped():
    runs = {k: {**v, "budget": "None"} for k, v in MF.items()}
    cr = cp.cost_runs(_study(runs), "full")
    s = cr.scales["t"]
    assert (s.budget, s.budget_source) == (9.0, "largest cost any run reached")
    assert (s.f_star, s.f_star_source) == (1.0, "best value any run found")  # B's 1.0 (A's 1.0 is at fidelity 1)
    assert _nr(cr, "B") == pytest.approx([1, 2 / 5, 0])
    mixed = {"A": {**MF["A"], "budget": 8.0}, "B": {**MF["B"], "budget": 10.0}}
    assert cp.cost_runs(_study(mixed), "full").scales["t"].budget_source == "smallest budget.cost of its runs"
    flipped = {k: {**v, "steps": [(f, c, -x) for f, c, x in v["steps"]]} for k, v in MF.items()}
    up = cp.cost_runs(_study(flipped, direction="maximize"), "full")
    assert up.scales["t"].sign == -1.0 and _nr(up, "B") == pytest.approx([1, 2 / 5, 0])  # as above, flipped


def test_values_at_fractions_of_the_budget_are_the_step_function():
    cr = cp.cost_runs(_study(MF, optimum=0.0), "full")
    grid = cp.on_grid(cr, np.array([1 / 8, 1 / 4, 1 / 2, 1.0])).set_index(["run_id", "fraction"])["nr"]
    assert list(grid["A"]) == pytest.approx([1, 1, 1 / 3, 1 / 3])
    assert list(grid["B"]) == pytest.approx([1, 1, 1, 0.5])  # at cost 8: its 2nd value; the 3rd (cost 9) is past


def test_area_under_the_anytime_curve():
    cr = cp.cost_runs(_study(MF, optimum=0.0), "full")
    areas = cp.areas(cr).set_index("run_id")["nr"]
    assert areas["A"] == pytest.approx(4 / 8 * 1 + 4 / 8 * (1 / 3))            # 1 until 1/2, then 1/3
    assert areas["B"] == pytest.approx(6 / 8 * 1 + 2 / 8 * 0.5)               # its 3rd value lies past the budget
    assert cp.area(np.array([0.5]), np.array([0.2])) == pytest.approx(0.6)
    assert cp.area(np.array([0.5]), np.array([0.2]), failed=True) == pytest.approx(1.0)  # worst after it failed
    assert cp.area(np.zeros(0), np.zeros(0)) == 1.0


def test_cost_to_reach_the_reference_final_value():
    cr = cp.cost_runs(_study(MF, optimum=0.0), "full")
    reached, targets = cp.cost_to_target(cr, "random")
    t = targets["t"]
    # random's best within the budget 8 is 3 (its value 1 at cost 9 is past it); it spent 6 within the budget
    assert (t.value, t.reference_cost, t.reference_first, t.source) == (3.0, 6.0, 6.0, "median final value of random")
    by = reached.set_index("run_id")
    assert (by.at["A", "cost"], by.at["A", "ratio"]) == (4.0, pytest.approx(4 / 6))  # A's 2 at cost 4
    assert (by.at["B", "cost"], by.at["B", "ratio"]) == (6.0, 1.0)
    summary = cp.reach_summary(reached).set_index("algo")
    assert summary.at["mf", "reached"] == 1.0 and summary.at["mf", "median_ratio"] == pytest.approx(4 / 6)
    _, none = cp.cost_to_target(cr, "gp_ei")  # no run of the reference: the median over all runs (2 and 3)
    assert none["t"].value == 2.5 and none["t"].source.startswith("median final value of all runs")


def test_ranks_at_fractions_reuse_the_statistics_tests():
    # three methods x two seeds; at the full budget each block's order is c < b < a
    steps = {"a": [7.0, 6.0], "b": [7.0, 2.0], "c": [7.0, 1.0]}
    runs = {f"{m}{s}": {"algo": m, "seed": s, "budget": 2.0,
                        "steps": [(1, 1, v[0] + s), (1, 2, v[1] + 0.5 * s)]} for m, v in steps.items() for s in (0, 1)}
    cr = cp.cost_runs(_study(runs, optimum=0.0), "full")
    half, full = cp.at_fractions(cr, (0.5, 1.0))
    assert dict(full.ranks) == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert dict(half.ranks) == {"a": 2.0, "b": 2.0, "c": 2.0}  # all at 7 (+ seed): ties share the average rank
    assert half.cd is None and half.problem == "every (task, seed) block is a tie"
    nr = cp.on_grid(cr, np.array([1.0])).pivot_table(index="seed", columns="algo", values="nr")
    assert full.cd is not None and full.cd.method == "Nemenyi"  # 2 blocks < 6
    assert full.cd.friedman_p == pytest.approx(stats.friedmanchisquare(nr["a"], nr["b"], nr["c"]).pvalue)
    assert full.mean["a"] == pytest.approx(np.mean([6 / 8, 6.5 / 8]))  # worst initial value: 8 (7 + seed 1)


def test_a_task_without_a_range_is_left_out_and_nothing_left_is_an_error():
    flat = {"A": {"algo": "a", "steps": [(1, 1, 2.0)]}, "B": {"algo": "b", "steps": [(1, 1, 2.0)]}}
    with pytest.raises(st.ReportError, match="no task has a range"):
        cp.cost_runs(_study(flat), "full")


def test_run_lengths_and_data_profiles_over_another_axis():
    lengths = runtimes(np.array([[1.0, 0.5, 0.1]]), np.array([0.6, 0.2, 0.05]), x=np.array([[0.1, 0.3, 0.9]]))
    assert lengths.tolist() == [[0.3, 0.9, np.inf]]
    cr = cp.cost_runs(_study(MF, optimum=0.0), "full")
    prof = data_profiles(cp.profile_curves(cr), pd.DataFrame({"task_key": ["t"], "task": ["t"]}),
                         np.array([0.5, 0.2]), points=5, x="x")
    final = prof.final.set_index("algo")["fraction"]
    # A reaches 0.5 (its 1/3 at 1/2 of the budget), never 0.2; B reaches 0.5 at 6/8, its 1/6 is past the budget
    assert (final["mf"], final["random"]) == (0.5, 0.5)
    assert not prof.per_dimension and prof.curves["x"].min() == pytest.approx(0.5)  # the first value reached


@pytest.mark.parametrize(("report", "expected"), [
    ({}, cp.CostSettings()),
    ({"x": "cost", "fractions": "1/2,1/8", "reference": "sha", "incumbent": "any"},
     cp.CostSettings("cost", (0.125, 0.5), "sha", "any")),
    ({"fractions": [0.25, 1]}, cp.CostSettings(fractions=(0.25, 1.0))),
    ({"fractions": 0.5}, cp.CostSettings(fractions=(0.5,))),
])
def test_settings_parse(report, expected):
    assert cp.parse_settings(report) == expected


@pytest.mark.parametrize(("report", "message"), [
    ({"x": "time"}, "report.x=time is not allowed; use one of auto, cost, round"),
    ({"fractions": "1/8,2"}, "report.fractions: '2' is not allowed"),
    ({"fractions": "a"}, "report.fractions: 'a' is not allowed"),
    ({"incumbent": "best"}, "report.incumbent=best is not allowed; use one of full, any"),
])
def test_bad_settings_are_one_line_errors(report, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        cp.parse_settings(report)


def test_the_comparison_is_automatic_with_a_fidelity_or_a_cost_budget():
    data = _study(MF)
    assert cp.wanted(data, cp.CostSettings()) and not cp.wanted(data, cp.CostSettings(x="round"))
    plain = StudyData(data.runs.assign(**{"params.budget.cost": "None"}), data.curves.drop(columns="fidelity"),
                      data.parents, data.uri)
    assert not cp.wanted(plain, cp.CostSettings()) and cp.wanted(plain, cp.CostSettings(x="cost"))


def test_the_full_level_is_the_runs_tag_and_a_task_no_run_reached_is_left_out():
    data = _study(MF, optimum=0.0)
    data.runs["tags.final.incumbent_fidelity"] = "9.0"  # the task's full fidelity, as the runs wrote it
    other = _study({"C": {"algo": "random", "task": "u", "steps": [(3, 3, 6.0), (3, 6, 3.0)]}}, optimum=0.0)
    both = StudyData(pd.concat([data.runs, other.runs]), pd.concat([data.curves, other.curves]), pd.DataFrame(),
                     "sqlite://", "test")
    cr = cp.cost_runs(both, "full")
    assert set(cr.scales) == {"u"} and cr.scales["u"].max_fidelity == 3.0  # u: no tag, its highest logged level
    assert any("task 't' left out" in n and "no run evaluated at its full fidelity (9)" in n for n in cr.warnings)
    assert set(cp.cost_runs(both, "any").scales) == {"t", "u"}
