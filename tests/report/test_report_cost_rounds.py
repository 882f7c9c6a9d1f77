"""A report over runs stopped by their cost budget, whose ``budget.rounds`` is 10^6 (the loop's "no round limit"):
its per-round arrays end at the last round a run logged (not at 10^6), and it prints the numbers the same runs give
under a real round limit."""
from __future__ import annotations

import numpy as np
from mlflow.tracking import MlflowClient

from hpoflow.report import statistics as st
from hpoflow.report.aggregate import summarise
from hpoflow.report.build import build
from hpoflow.report.loading import load_study, to_run_curves
from tests.report.study_store import add_run

UNLIMITED = 1_000_000
RUNS = {("random", 0): [5.0, 3.0, 4.0], ("random", 1): [4.0, 4.5, 2.0, 3.0], ("random", 2): [6.0, 2.5, 2.6],
        ("hyperband", 0): [6.0, 2.0, 2.5, 1.0, 1.5], ("hyperband", 1): [3.0, 2.8, 1.2, 1.1],
        ("hyperband", 2): [7.0, 0.9, 0.8, 0.85, 0.7]}   # 3 to 5 rounds each: the longest logged 5


def _studies(uri: str) -> None:
    """The same runs twice: experiment "cost" with budget.rounds = 10^6, "limited" with budget.rounds = 5."""
    client = MlflowClient(tracking_uri=uri)
    for name, rounds in (("cost", UNLIMITED), ("limited", 5)):
        exp = client.create_experiment(name)
        for (algo, seed), values in RUNS.items():
            costs = list(np.cumsum([27.0 if algo == "random" else 9.0 * (t % 3 + 1) for t in range(len(values))]))
            add_run(client, exp, algo=algo, task="t", seed=seed, values=values, optimum=0.5, rounds=rounds,
                    costs=costs, sweep_id=name)


def test_a_cost_budgeted_report_stays_as_wide_as_its_longest_run_and_prints_the_same_numbers(store, tmp_path):
    _studies(store)
    data, limited = load_study(store, experiment="cost"), load_study(store, experiment="limited")
    assert set(data.runs["rounds"]) == {UNLIMITED}
    assert [len(c.values) for c in to_run_curves(data)] == [5] * len(RUNS)
    assert all(len(c.query_cost) == 5 and len(c.regret) == 5 for c in to_run_curves(data))
    norm = st.normalise(data)
    assert len(norm.curves) == 5 * len(RUNS) and norm.references["t"].rounds == 5
    (cost_rows,), (limited_rows,) = summarise(to_run_curves(data)).values(), summarise(to_run_curves(limited)).values()
    for a, b in zip(cost_rows, limited_rows):
        assert a.curves.shape == b.curves.shape == (3, 5)
        assert (a.algo, a.cumulative, a.simple, a.query_cost) == (b.algo, b.cumulative, b.simple, b.query_cost)
    got, want = build(data, tmp_path / "cost", best_configs=False), build(limited, tmp_path / "limited",
                                                                          best_configs=False)
    assert _named(got.text, data) == _named(want.text, limited)
    references = "| t | minimize | 0.5 | known optimum | 2.5 | random search median final | 5 | 1.25 |"  # rounds: 5
    assert references in got.markdown.read_text()


def _named(text: str, data) -> str:
    """``text`` with each run id (as the tables shorten it) replaced by its run name (the same in both studies)."""
    for run_id, name in zip(data.runs["run_id"], data.runs["run_name"]):
        text = text.replace(run_id[:12], name)
    return text
