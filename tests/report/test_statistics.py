"""Each statistic on a tiny case computed by hand or by the library directly."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hpoflow.report import statistics as st
from hpoflow.report.loading import StudyData, logged_rounds


def _study(runs: list[dict], curves: dict[str, list[float | None]], regret_optimum: float | None = None) -> StudyData:
    """A StudyData from per-run values (round 1..T); regret logged against ``regret_optimum`` when given."""
    table = pd.DataFrame([{"run_id": r["run_id"], "status": r.get("status", "FINISHED"), "algo": r["algo"],
                           "task_key": r.get("task", "t"), "seed": str(r["seed"]),
                           "direction": r.get("direction", "minimize"),
                           "regret_reference": "optimum" if regret_optimum is not None else "none",
                           "rounds": r.get("rounds", len(curves[r["run_id"]]))} for r in runs])
    rows = []
    for run_id, values in curves.items():
        for step, v in enumerate(values, start=1):
            row = {"run_id": run_id, "step": step, "value": np.nan if v is None else v, "query_cost": float(step)}
            if regret_optimum is not None and v is not None:
                row["regret"] = abs(v - regret_optimum)
            rows.append(row)
    return StudyData(table, pd.DataFrame(rows), pd.DataFrame(), "sqlite://", "test selection")


def test_normalised_regret_uses_random_median_as_reference_and_known_optimum():
    runs = [{"run_id": "r0", "algo": "random", "seed": 0}, {"run_id": "r1", "algo": "random", "seed": 1},
            {"run_id": "r2", "algo": "random", "seed": 2}, {"run_id": "g0", "algo": "gp", "seed": 0}]
    # optimum 1.0; random finals (best so far) 5, 3, 9 -> reference median 5
    data = _study(runs, {"r0": [6, 5, 7], "r1": [3, 4, 8], "r2": [9, 10, 11], "g0": [4, None, 2]},
                  regret_optimum=1.0)
    norm = st.normalise(data)
    ref = norm.references["t"]
    assert (ref.f_star, ref.f_star_source, ref.f_ref, ref.f_ref_source) == \
        (1.0, "known optimum", 5.0, "random search median final")
    g0 = norm.curves[norm.curves["run_id"] == "g0"]["nr"].to_numpy()
    np.testing.assert_allclose(g0, [(4 - 1) / 4, (4 - 1) / 4, (2 - 1) / 4])  # best so far 4, 4, 2
    final = norm.final.set_index("run_id")["nr"]
    assert final["r1"] == pytest.approx(0.5) and final["r2"] == pytest.approx(2.0)
    assert ref.worst == pytest.approx(2.0)  # what a failed run would count as: max(1, worst final)


def test_maximisation_best_seen_f_star_median_initial_reference_and_failed_runs_count_as_worst():
    runs = [{"run_id": "a0", "algo": "a", "seed": 0, "direction": "maximize"},
            {"run_id": "a1", "algo": "a", "seed": 1, "direction": "maximize"},
            {"run_id": "b0", "algo": "b", "seed": 0, "direction": "maximize", "status": "FAILED",
             "rounds": 2}]
    data = _study(runs, {"a0": [0.5, 0.9], "a1": [0.7, 0.8], "b0": [0.6]})
    norm = st.normalise(data)
    ref = norm.references["t"]
    # loss = -value: f* = -0.9 (best seen), reference = median first loss = median(-0.5, -0.7, -0.6) = -0.6
    assert ref.f_star == pytest.approx(0.9) and ref.f_star_source == "best seen in the study"
    assert ref.f_ref == pytest.approx(0.6) and ref.f_ref_source == "median initial value"
    final = norm.final.set_index("run_id")["nr"]
    assert final["a0"] == pytest.approx(0.0) and final["a1"] == pytest.approx((0.9 - 0.8) / 0.3)
    assert ref.worst == 1.0 and final["b0"] == 1.0  # failed: max(1, worst finished final)
    b0 = norm.curves[norm.curves["run_id"] == "b0"]["nr"].to_numpy()
    np.testing.assert_allclose(b0, [(0.9 - 0.6) / 0.3, 1.0])  # its logged round, then the worst


def test_a_task_random_search_solves_falls_back_to_the_initial_median_and_a_flat_task_is_left_out():
    # task "easy": random's median final (1.0) is the best seen -> reference = median first value (3.0)
    # task "flat": values 1.0 and 1.0 + 2e-16 (rounding) -> no spread: left out with a warning; task "t" is kept
    runs = [{"run_id": f"{t}{a}", "algo": a, "seed": 0, "task": t}
            for t in ("easy", "flat", "t") for a in ("random", "gp")]
    curves = {"easyrandom": [3.0, 1.0], "easygp": [3.0, 2.0], "flatrandom": [1.0 + 2e-16] * 2, "flatgp": [1.0, 1.0],
              "trandom": [5.0, 4.0], "tgp": [5.0, 2.0]}
    norm = st.normalise(_study(runs, curves))
    easy = norm.references["easy"]
    assert (easy.f_star, easy.f_ref) == (1.0, 3.0)
    assert easy.f_ref_source == "median initial value (random search reached f*)"
    final = norm.final.set_index("run_id")["nr"]
    assert final["easygp"] == pytest.approx(0.5) and final["easyrandom"] == 0.0
    assert "flat" not in norm.references and set(norm.final["task"]) == {"easy", "t"}
    assert any("task 'flat' left out of the normalised statistics" in n for n in norm.warnings)
    with pytest.raises(st.ReportError, match="no task has a reference worse than f"):
        st.normalise(_study(runs[2:4], {k: curves[k] for k in ("flatrandom", "flatgp")}))


def test_bad_input_mixed_directions_is_an_error_and_mixed_budgets_a_warning():
    mixed = _study([{"run_id": "a", "algo": "x", "seed": 0}, {"run_id": "b", "algo": "y", "seed": 0,
                                                              "direction": "maximize"}], {"a": [1.0], "b": [2.0]})
    with pytest.raises(st.ReportError, match="task 't' mixes directions.*maximize: runs b.*minimize: runs a"):
        st.normalise(mixed)
    budgets = _study([{"run_id": "a", "algo": "x", "seed": 0}, {"run_id": "b", "algo": "x", "seed": 1},
                      {"run_id": "c", "algo": "y", "seed": 0}], {"a": [3.0, 2.0], "b": [4.0, 1.0, 0.5], "c": [5, 6]})
    norm = st.normalise(budgets)
    (warning,) = norm.warnings
    assert warning.startswith("Warning: task 't', algorithm 'x' mixes budgets (2 rounds: runs a; 3 rounds: runs b)")
    assert norm.references["t"].rounds == 2 and norm.curves["step"].max() == 2
    empty = StudyData(pd.DataFrame(columns=["run_id"]), pd.DataFrame(), pd.DataFrame(), "u", "sel X")
    with pytest.raises(st.ReportError, match=r"no runs match \(sel X\)"):
        st.normalise(empty)


def test_ranks_with_ties_share_the_average_rank():
    table = pd.DataFrame({"task": "t", "seed": ["0"] * 3 + ["1"] * 3 + ["2"] * 2, "algo": list("abcabcab"),
                          "nr": [0.1, 0.1, 0.5, 0.3, 0.2, 0.1, 0.0, 0.0]})
    ranks = st.block_ranks(table)
    assert list(ranks.index.get_level_values("seed")) == ["0", "1"]  # seed 2 lacks c: not a complete block
    np.testing.assert_allclose(ranks.loc[("t", "0")], [1.5, 1.5, 3.0])
    np.testing.assert_allclose(ranks.loc[("t", "1")], [3.0, 2.0, 1.0])
    over = st.ranks_over(table.assign(step=1), "step").set_index("algo")
    assert over.loc["a", "mean"] == pytest.approx(2.25) and over.loc["a", "n"] == 2
    assert over.loc["a", "half"] == pytest.approx(1.96 * np.std([1.5, 3.0], ddof=1) / math.sqrt(2))


def test_holm_correction_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, 2*0.03, 1*0.04 -> monotone: 0.03, 0.06, 0.06
    np.testing.assert_allclose(st.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(st.holm([0.5, 0.9]), [1.0, 1.0])  # 2*0.5, then max(1.0, 0.9)


def test_holm_equals_statsmodels_multipletests(monkeypatch):
    """Our Holm against statsmodels' own, ties and all. statsmodels runs gc.collect() per call (the reason for
    ours): up to seconds each in a test worker's large heap, so it is a no-op here."""
    import gc

    from statsmodels.stats.multitest import multipletests

    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(0)
    for m in (1, 2, 3, 7, 20):
        for _ in range(20):
            for p in (rng.uniform(0, 0.2, m), np.round(rng.uniform(0, 1, m), 1)):  # the second with ties
                np.testing.assert_allclose(st.holm(p), multipletests(p, method="holm")[1], rtol=0, atol=1e-15)
    assert st.holm([]).size == 0


def test_bootstrap_interval_is_seeded_and_equals_scipys():
    x = [0.1, 0.4, 0.35, 0.8, 0.2, 0.55]
    m, lo, hi = st.bootstrap_ci(x, seed=3)
    ref = stats.bootstrap((np.asarray(x),), np.mean, n_resamples=2000, confidence_level=0.95, method="percentile",
                          rng=np.random.default_rng(3)).confidence_interval
    assert m == pytest.approx(np.mean(x)) and (lo, hi) == pytest.approx((ref.low, ref.high))
    assert st.bootstrap_ci(x, seed=3) == (m, lo, hi) and min(x) < lo < m < hi < max(x)
    assert st.bootstrap_ci(x, seed=4) != (m, lo, hi)
    assert st.bootstrap_ci([2.0, 2.0]) == (2.0, 2.0, 2.0)
    one = st.bootstrap_ci([1.5])
    assert one[0] == 1.5 and math.isnan(one[1])


def _paired_t_power(n: int, dz: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with n pairs (noncentral t, scipy)."""
    t = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = dz * math.sqrt(n)
    return float(1 - stats.nct.cdf(t, n - 1, nc) + stats.nct.cdf(-t, n - 1, nc))


@pytest.mark.parametrize("dz", [0.3, 0.8, 1.5])
def test_seeds_needed_reaches_80_percent_power_and_not_one_seed_earlier(dz):
    n = math.ceil(st.seeds_needed(dz))
    assert _paired_t_power(n, dz) >= 0.8 > _paired_t_power(n - 1, dz)
    normal = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / dz) ** 2  # textbook large-sample formula
    assert normal <= n <= normal + 3
    assert math.isinf(st.seeds_needed(0.0))


def test_seed_adequacy_line_from_paired_differences():
    final = pd.DataFrame(
        {
            "task": "t",
            "seed": [str(s) for s in range(3)] * 3,
            "algo": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "nr": [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 5.0, 5.0, 5.0],
            "failed": False,
        }
    )
    (s,) = st.seed_adequacy(final)
    assert (s.first, s.second, s.n) == ("a", "b", 3)
    assert s.effect == pytest.approx(2.0) and s.dz == pytest.approx(2.0)  # d = 1, 2, 3: mean 2, sd 1
    assert math.ceil(s.needed) == math.ceil(st.seeds_needed(2.0))
    assert s.line().startswith("t: b − a = +2 [") and "3 are" in s.line()


def test_versus_best_wilcoxon_holm_marks_winners_and_ties():
    seeds = [str(s) for s in range(8)]
    a = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    b = [x + 0.8 + 0.01 * i for i, x in enumerate(a)]                # always worse: exact p = 2/2^8
    c = [x + (0.05 if i % 2 else -0.04) for i, x in enumerate(a)]     # about as good
    final = pd.DataFrame({"task": "t", "seed": seeds * 3, "algo": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
                          "nr": a + b + c, "failed": [False] * 23 + [True]})
    rows = st.versus_best(final).set_index("algo")
    p_b, p_c = stats.wilcoxon(a, b).pvalue, stats.wilcoxon(a, c).pvalue
    assert p_b == pytest.approx(2 / 2**8)
    np.testing.assert_allclose(rows.loc[["b", "c"], "p_holm"], st.holm([p_b, p_c]))
    assert rows.loc["a", "best"] and not rows.loc["b", "tie"] and rows.loc["c", "tie"]
    assert rows.loc["c", "failed"] == 1 and rows.loc["a", "n"] == 8


def test_critical_difference_uses_friedman_then_wilcoxon_holm_or_nemenyi_by_block_count():
    rng = np.random.default_rng(0)
    blocks = [(f"t{t}", str(s)) for t in range(2) for s in range(4)]   # 8 blocks
    rows = [{"task": t, "seed": s, "algo": a, "nr": base + rng.normal(0, 0.05)}
            for t, s in blocks for a, base in (("a", 0.1), ("b", 0.5), ("c", 0.9))]
    final = pd.DataFrame(rows)
    cd = st.critical_difference(final)
    wide = final.pivot_table(index=["task", "seed"], columns="algo", values="nr")
    assert cd.method == "Wilcoxon–Holm" and cd.n_blocks == 8
    assert cd.friedman_p == pytest.approx(stats.friedmanchisquare(wide.a, wide.b, wide.c).pvalue)
    assert list(cd.mean_ranks) == [1.0, 2.0, 3.0]
    few = st.critical_difference(final[final["seed"].isin(["0", "1"])])  # 4 blocks
    import scikit_posthocs as sp

    sub = wide[wide.index.get_level_values("seed").isin(["0", "1"])]
    assert few.method == "Nemenyi"
    np.testing.assert_allclose(few.pvalues.to_numpy(), sp.posthoc_nemenyi_friedman(sub.to_numpy()).to_numpy())
    with pytest.raises(st.ReportError, match="needs >= 2 algorithms"):
        st.critical_difference(final[final["algo"] == "a"])


def test_cost_grid_is_a_step_function_of_the_budget_fraction():
    runs = [{"run_id": "a", "algo": "x", "seed": 0}, {"run_id": "b", "algo": "y", "seed": 0}]
    norm = st.normalise(_study(runs, {"a": [4.0, 2.0, 1.0, 0.0], "b": [3.0, 3.0, 3.0, 3.0]}))
    grid = st.on_cost_grid(norm, points=7)  # from the first round's .25 of a 4-round budget to 1, step .125
    a = grid[grid["run_id"] == "a"]["nr"].to_numpy()
    np.testing.assert_allclose(grid["cost_fraction"].unique(), np.linspace(0.25, 1.0, 7))
    # f* = 0, reference = median first value = 3.5; the value after the last round within the budget fraction
    np.testing.assert_allclose(a, np.array([4, 4, 2, 2, 1, 1, 0]) / 3.5)


UNLIMITED = 1_000_000  # budget.rounds of a run stopped by its cost budget (the loop's "no round limit")


def test_a_cost_budgeted_group_is_as_wide_as_its_longest_logged_run_with_the_same_finals():
    runs = [{"run_id": "a", "algo": "random", "seed": 0}, {"run_id": "b", "algo": "gp", "seed": 0},
            {"run_id": "c", "algo": "random", "seed": 1}]
    curves = {"a": [5.0, 3.0, 4.0], "b": [6.0, 2.0, 2.5, 1.0, 1.5], "c": [4.0, 4.5, 2.0, 3.0]}
    data = _study([{**r, "rounds": UNLIMITED} for r in runs], curves, regret_optimum=0.5)
    ids = ["a", "b", "c"]
    width = logged_rounds(data.curves, ids, UNLIMITED)
    assert width == 5 and st._matrix(data.curves, ids, "value", width).shape == (3, 5)
    assert logged_rounds(data.curves, ["a"], UNLIMITED) == 3 and logged_rounds(data.curves, ["a"], 2) == 2
    norm = st.normalise(data)
    assert norm.references["t"].rounds == 5 and len(norm.curves) == 3 * 5 and norm.curves["step"].max() == 5
    # the same runs under a real 5-round limit: the same normalisation and finals (values carry forward)
    limited = st.normalise(_study([{**r, "rounds": 5} for r in runs], curves, regret_optimum=0.5))
    pd.testing.assert_frame_equal(norm.final, limited.final)
    np.testing.assert_allclose(norm.curves["nr"], limited.curves["nr"])
    # the cost fraction's budget is the median final cost of the runs wherever each stopped: median(3, 5, 4) = 4
    frac = norm.curves.set_index(["run_id", "step"])["cost_fraction"]
    assert frac["a", 3] == 0.75 and frac["b", 5] == 1.25 and frac["c", 4] == 1.0


def test_seed_adequacy_says_plainly_when_two_methods_tie():
    from hpoflow.report.statistics import SeedAdequacy

    tie = SeedAdequacy("t", "a", "b", 3, 0.0, 0.0, 0.0, 0.0, math.inf).line()
    assert tie == ("t: b − a = +0 [0, 0] over 3 paired seeds: no mean difference (d_z = 0); they do equally well "
                   "in these seeds, and more seeds would not tell them apart")
    assert "infinite" not in tie and "needs" not in tie


def _with_levels(data: StudyData, levels: dict[str, list[float]], tagged: float | None = None) -> StudyData:
    curves = data.curves.copy()
    curves["fidelity"] = [levels[r][s - 1] for r, s in zip(curves["run_id"], curves["step"])]
    runs = data.runs.copy()
    if tagged is not None:  # runs that ended after the full-fidelity rule: the task's full level is their tag
        runs["tags.final.incumbent_fidelity"] = repr(float(tagged))
    return StudyData(runs, curves, data.parents, data.uri, data.selection)


def test_on_a_task_with_a_fidelity_only_full_fidelity_rounds_count_towards_the_best_so_far():
    runs = [{"run_id": "a0", "algo": "a", "seed": 0}, {"run_id": "b0", "algo": "b", "seed": 0}]
    # a: 1.0 at level 1 only (not its best), then 4 and 3 at level 3; b: 6 then 2 at level 3
    data = _with_levels(_study(runs, {"a0": [1.0, 4.0, 3.0], "b0": [6.0, 2.0, 5.0]}, regret_optimum=0.0),
                        {"a0": [1, 3, 3], "b0": [3, 3, 1]})
    norm = st.normalise(data)
    ref = norm.references["t"]
    assert ref.f_ref == pytest.approx(5.0) and ref.f_ref_source == "median initial value"  # firsts 4 (a), 6 (b)
    a0 = norm.curves[norm.curves["run_id"] == "a0"]["nr"].to_numpy()
    np.testing.assert_allclose(a0, [ref.worst, 4 / 5, 3 / 5])  # no incumbent in round 1: the worst
    anyway = st.normalise(data, incumbent="any").curves
    np.testing.assert_allclose(anyway[anyway["run_id"] == "a0"]["nr"].to_numpy(), [1 / 3.5] * 3)
    # the full level is the runs' tag where they have one: here 9, which no round reached
    tagged = _with_levels(_study(runs, {"a0": [1.0, 4.0, 3.0], "b0": [6.0, 2.0, 5.0]}, regret_optimum=0.0),
                          {"a0": [1, 3, 3], "b0": [3, 3, 1]}, tagged=9)
    with pytest.raises(st.ReportError):
        st.normalise(tagged)
    assert "no run evaluated at its full fidelity (9)" in st.normalise(
        StudyData(pd.concat([tagged.runs, _study([{"run_id": "c0", "algo": "c", "seed": 0, "task": "u"}],
                                                 {"c0": [2.0, 1.0]}, regret_optimum=0.0).runs]),
                  pd.concat([tagged.curves, _study([{"run_id": "c0", "algo": "c", "seed": 0, "task": "u"}],
                                                   {"c0": [2.0, 1.0]}, regret_optimum=0.0).curves]),
                  tagged.parents, tagged.uri)).warnings[-1]
