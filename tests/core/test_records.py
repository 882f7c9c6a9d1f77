import math

import pytest

from hpoflow.core.records import Direction, Record, RegretBook


def test_regret_uses_true_value_and_direction():
    book = RegretBook(Direction.MINIMIZE, optimum=1.0)
    m1 = book.add(Record(1, {}, value=3.5, cost=2.0, true_value=3.0))
    m2 = book.add(Record(2, {}, value=0.5, cost=1.0, true_value=1.5))
    assert m1["regret"] == 2.0 and m2["regret"] == 0.5
    assert m2["cumulative_regret"] == 2.5 and m2["simple_regret"] == 0.5
    assert m2["best_value"] == 0.5 and m2["query_cost"] == 3.0


def test_maximise_regret_is_non_negative_and_skipped_rounds_are_charged():
    book = RegretBook(Direction.MAXIMIZE, optimum=10.0)
    book.add(Record(1, {}, value=7.0))
    m = book.add(Record(2, {}, value=None, queried=False, true_value=9.0, cost=0.0))
    assert m["regret"] == 1.0 and m["cumulative_regret"] == 4.0
    assert "value" not in m and m["query_cost"] == 0.0 and m["best_value"] == 7.0


def test_round_specific_optimum_overrides_task_optimum():
    book = RegretBook(Direction.MAXIMIZE, optimum=None)
    m = book.add(Record(1, {}, value=0.2, optimum=0.9))
    assert m["regret"] == pytest.approx(0.7)


def test_unknown_optimum_logs_no_regret_and_failures_are_counted():
    book = RegretBook(Direction.MAXIMIZE, optimum=None)
    m = book.add(Record(1, {}, value=None, failed=True, error="boom"))
    assert "regret" not in m and m["failed"] == 1.0
    assert book.summary()["failed"] == 1 and math.isinf(book.simple_regret)


def test_the_incumbent_and_simple_regret_count_only_full_fidelity_evaluations():
    book = RegretBook(Direction.MINIMIZE, 0.0, full_fidelity=27.0)
    low = book.add(Record(1, {"x": 1}, value=0.05, cost=9.0, fidelity=9.0, config_id=0))
    assert "best_value" not in low and "simple_regret" not in low and low["cumulative_regret"] == 0.05
    assert book.summary()["best_value"] is None and book.summary()["incumbent_fidelity"] == 27.0
    full = book.add(Record(2, {"x": 2}, value=0.10, cost=27.0, fidelity=27.0, config_id=1))
    assert full["best_value"] == 0.10 and full["simple_regret"] == 0.10
    book.add(Record(3, {"x": 1}, value=0.07, cost=18.0, fidelity=27.0, config_id=0))  # x=1 continued to 27
    s = book.summary()
    assert s["best_value"] == 0.07 and s["best_config"] == {"x": 1} and s["simple_regret"] == 0.07
    assert math.isclose(s["cumulative_regret"], 0.05 + 0.10 + 0.07)


def test_without_a_fidelity_every_evaluation_counts():
    book = RegretBook(Direction.MAXIMIZE, 1.0)
    book.add(Record(1, {}, value=0.4, fidelity=3.0))
    assert book.summary()["best_value"] == 0.4 and "incumbent_fidelity" not in book.summary()
