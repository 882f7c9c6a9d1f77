"""The end-of-run summary: a constrained run prints its best feasible point, a maximised objective its own sign,
several objectives their front as a table; counts are integers."""
from __future__ import annotations

from hpoflow.cli.summary import FRONT_ROWS, summary_lines
from hpoflow.core.objectives import Objectives, ParetoBook
from hpoflow.core.records import Record


def rec(i: int, config: dict, values: dict, failed: bool = False) -> Record:
    return Record(round=i, config=config, value=None if failed else 0.0, failed=failed, values=values)


def test_one_objective_prints_best_value_and_config():
    lines = summary_lines({"best_value": 0.5, "best_config": {"x": 1}, "query_cost": 3.0, "failed": 0})
    assert lines == ["best value: 0.5", "best config: {'x': 1}", "query cost: 3.0   failed evaluations: 0"]


def test_constrained_run_prints_the_best_feasible_point_never_the_infeasible_one():
    spec = Objectives({"f": "min"}, {"c": ("<=", 0.0)})
    records = [rec(1, {"x": 0.0}, {"f": 0.0, "c": 1.0}),  # the smallest f, infeasible
               rec(2, {"x": 0.6}, {"f": 0.6, "c": -1.0}), rec(3, {"x": 0.9}, {"f": 0.9, "c": -2.0}),
               rec(4, {"x": 0.1}, {}, failed=True)]
    text = "\n".join(summary_lines({"best_value": 0.0, "best_config": {"x": 0.0}, "query_cost": 4.0, "failed": 1},
                                   spec, records))
    assert "best feasible value: 0.6 (f, minimised)   (2 of 3 evaluations feasible)" in text
    assert "best feasible config: {'x': 0.6}" in text
    assert "'x': 0.0" not in text and "best value:" not in text


def test_constrained_run_without_a_feasible_point_says_so():
    spec = Objectives({"f": "min"}, {"c": ("<=", 0.0)})
    lines = summary_lines({"query_cost": 1.0, "failed": 0}, spec, [rec(1, {"x": 0.0}, {"f": 0.0, "c": 1.0})])
    assert lines[0] == "best feasible value: none   (0 of 1 evaluations feasible)"
    assert not any("config" in line for line in lines)


def test_a_maximised_objective_prints_in_its_own_sign():
    spec = Objectives({"acc": "max"}, {"mem": ("<=", 5.0)})
    records = [rec(1, {"x": 1}, {"acc": 0.97, "mem": 9.0}), rec(2, {"x": 2}, {"acc": 0.91, "mem": 4.0}),
               rec(3, {"x": 3}, {"acc": 0.93, "mem": 5.0})]
    text = "\n".join(summary_lines({"best_value": -0.97, "query_cost": 3.0, "failed": 0.0}, spec, records))
    assert "best feasible value: 0.93 (acc, maximised)" in text and "-0.9" not in text
    assert "failed evaluations: 0" in text and "0.0" not in text.split("failed evaluations:")[1]


def test_several_objectives_print_the_front_as_a_table_not_a_best_config():
    spec = Objectives({"acc": "max", "size": "min"})
    records = [rec(1, {f"p{k}": k for k in range(30)}, {"acc": 0.90, "size": 10.0}),
               rec(2, {"p0": 1}, {"acc": 0.95, "size": 50.0}),
               rec(3, {"p0": 2}, {"acc": 0.80, "size": 60.0})]  # dominated by round 2
    lines = summary_lines({"best_value": -0.95, "best_config": {"p0": 1}, "query_cost": 3.0, "failed": 0,
                           "pareto_size": 2, "hypervolume": 1.5}, spec, records)
    assert lines[0] == "pareto front: 2 points   hypervolume: 1.5"
    assert lines[1].split() == ["round", "acc", "(max)", "size", "(min)"]
    assert [line.split() for line in lines[2:4]] == [["2", "0.95", "50"], ["1", "0.9", "10"]]  # best acc first
    assert not any("best" in line or "p29" in line or "-0.95" in line for line in lines)


def test_a_long_front_is_cut_to_a_few_rows_with_where_to_find_the_rest():
    spec = Objectives({"f1": "min", "f2": "min"})
    n = FRONT_ROWS + 5
    records = [rec(i, {"x": i}, {"f1": float(i), "f2": float(n - i)}) for i in range(n)]
    lines = summary_lines({"query_cost": float(n), "failed": 0}, spec, records)
    assert lines[0] == f"pareto front: {n} points"
    assert len([line for line in lines if line.startswith("  ") and line.split()[0].isdigit()]) == FRONT_ROWS
    assert "... 5 more (all of them: the run's pareto.csv artifact)" in lines[-2]


def test_pareto_size_is_an_integer():
    book = ParetoBook(Objectives({"f1": "min", "f2": "min"}))
    book.add({"f1": 1.0, "f2": 2.0})
    book.add({"f1": 2.0, "f2": 1.0})
    assert book.summary()["pareto_size"] == 2 and isinstance(book.summary()["pareto_size"], int)


def test_cli_prints_the_best_feasible_point_and_the_front(run_cli, store):
    """A constrained task whose unconstrained minimum (0, 0) is infeasible, and a two-objective one, end to end."""
    from tests.conftest import mlflow_runs

    out = run_cli("algo=random", "task=gramacy", "budget.rounds=8", f"tracking.uri={store}").stdout
    (run,) = mlflow_runs(store, "gramacy")
    assert f"best feasible value: {run.data.metrics['best_feasible']:.6g} (f, minimised)" in out
    assert "best feasible config: {'x1': " in out and "best value:" not in out
    out = run_cli("algo=random", "task=zdt1", "budget.rounds=6", f"tracking.uri={store}").stdout
    (run,) = mlflow_runs(store, "zdt1")
    size = int(run.data.tags["final.pareto_size"])  # "3", not "3.0"
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("pareto front: "))
    assert lines[head].startswith(f"pareto front: {size} points") and "best config" not in out and "x29" not in out
    assert lines[head + 1].split() == ["round", "f1", "(min)", "f2", "(min)"]
    assert len(lines[head + 2].split()) == 3  # a round and two values per point


def test_a_run_without_a_full_fidelity_evaluation_says_it_has_no_incumbent():
    lines = summary_lines({"best_value": None, "best_config": None, "query_cost": 9.0, "failed": 0,
                           "incumbent_fidelity": 27.0})
    assert lines[0] == ("best value: none yet: no evaluation reached the full fidelity (27), the only level an "
                        "incumbent is taken from")
    assert not any("best config" in line for line in lines)
    lines = summary_lines({"best_value": 0.1, "best_config": {"x": 2}, "query_cost": 36.0, "failed": 0,
                           "incumbent_fidelity": 27.0})
    assert lines[:2] == ["best value: 0.1", "best config: {'x': 2}"]
