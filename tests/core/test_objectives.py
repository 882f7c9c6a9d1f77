"""The objectives spec, Pareto dominance, feasibility and exact hypervolume (hpoflow.core.objectives)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.core.objectives import (
    ParetoBook,
    dominates,
    hypervolume,
    non_dominated,
    pareto_front,
    parse_objectives,
)
from hpoflow.core.records import Evaluation


def test_parse_spec_and_first_value_in_minimisation_form() -> None:
    spec = parse_objectives({"acc": "max", "fit_s": "min"}, {"mem_mb": ("<=", 512)}, {"acc": 0.0, "fit_s": 10.0})
    assert spec is not None and spec.names == ["acc", "fit_s"] and spec.constraints == {"mem_mb": ("<=", 512.0)}
    assert spec.reference == (0.0, 10.0) and spec.reference_minimised() == (-0.0, 10.0)
    ev = spec.evaluation({"acc": 0.9, "fit_s": 2.0, "mem_mb": 100})
    assert ev.value == -0.9 and ev.values == {"acc": 0.9, "fit_s": 2.0, "mem_mb": 100.0}
    assert parse_objectives(None) is None


@pytest.mark.parametrize(("objectives", "constraints", "reference", "message"), [
    ({"f1": "minimize"}, None, None, "objectives['f1']='minimize' is not a direction; allowed: 'min', 'max'"),
    ({}, None, None, "objectives={} is not an objectives spec"),
    (None, {"m": ("<=", 1)}, None, "objectives=None is not an objectives spec"),
    ({"f1": "min"}, {"m": ("==", 1)}, None, "constraints['m']=('==', 1) is not a constraint; allowed: (op, bound)"),
    ({"f1": "min"}, {"m": ("<=", "a")}, None, "constraints['m'] bound 'a' is not a finite number"),
    ({"f1": "min"}, {"m": ("<=", math.inf)}, None, "constraints['m'] bound inf is not a finite number"),
    ({"f1": "min", "f2": "min"}, None, [1.0], "reference=[1.0] is not a reference point; allowed: 2 finite numbers"),
])
def test_bad_specs_are_one_line(objectives: object, constraints: object, reference: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_objectives(objectives, constraints, reference)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_value_the_task_does_not_return_is_named() -> None:
    spec = parse_objectives({"f1": "min", "f3": "min"}, {"mem": ("<=", 1)})
    assert spec is not None
    with pytest.raises(ValueError, match=r"^objective 'f3' is not among the values the task returned \(f1, mem\)"):
        spec.evaluation({"f1": 1.0, "mem": 0.5})
    spec = parse_objectives({"f1": "min"}, {"mem": ("<=", 1)})
    assert spec is not None
    with pytest.raises(ValueError, match=r"^constraint 'mem' is not among the values the task returned \(f1\)"):
        spec.evaluation({"f1": 1.0})
    with pytest.raises(TypeError, match="with objectives it must return a dict of values"):
        spec.evaluation(1.5)
    assert spec.evaluation(Evaluation(value=0.0, cost=3.0, values={"f1": 2.0, "mem": 0.0})).value == 2.0


def test_feasibility_operators() -> None:
    spec = parse_objectives({"f": "min"}, {"a": ("<=", 1), "b": (">", 0)})
    assert spec is not None
    assert spec.feasible({"f": 0, "a": 1.0, "b": 0.1})
    assert not spec.feasible({"f": 0, "a": 1.01, "b": 0.1})
    assert not spec.feasible({"f": 0, "a": 1.0, "b": 0.0})
    assert not spec.feasible({"f": 0, "a": math.nan, "b": 1.0})


def test_dominance_and_non_dominated_filter() -> None:
    assert dominates((1, 2), (2, 2)) and not dominates((1, 2), (1, 2)) and not dominates((1, 3), (2, 2))
    pts = [(1, 3), (2, 2), (3, 1), (2, 3), (3, 3), (1, 3)]
    assert non_dominated(pts) == [0, 1, 2, 5]


def test_hypervolume_known_values() -> None:
    # 2-d staircase: (1,3),(2,2),(3,1) against (4,4): 3*1 + 2*1 + 1*1 ... = 6
    assert hypervolume([(1, 3), (2, 2), (3, 1)], (4, 4)) == pytest.approx(6.0)
    assert hypervolume([(1, 3), (2, 2), (3, 1), (3, 3), (5, 0)], (4, 4)) == pytest.approx(6.0)  # dominated / outside
    assert hypervolume([], (1, 1)) == 0.0
    assert hypervolume([(0, 0, 0)], (1, 2, 3)) == pytest.approx(6.0)
    # 3-d: two boxes [0,2]x[0,1]x[0,1] and [0,1]x[0,2]x[0,1] ... union = 2 + 2 - 1 = 3 (ref (2,2,1))
    assert hypervolume([(0, 1, 0), (1, 0, 0)], (2, 2, 1)) == pytest.approx(3.0)
    # 3-d union of three points by inclusion-exclusion
    pts = [(1, 2, 3), (2, 3, 1), (3, 1, 2)]
    ref = (4, 4, 4)
    vol = lambda p: math.prod(r - v for r, v in zip(ref, p))  # noqa: E731
    meet = lambda *ps: tuple(max(c) for c in zip(*ps))  # noqa: E731
    expect = (sum(vol(p) for p in pts) - vol(meet(pts[0], pts[1])) - vol(meet(pts[0], pts[2]))
              - vol(meet(pts[1], pts[2])) + vol(meet(*pts)))
    assert hypervolume(pts, ref) == pytest.approx(expect)


def test_hypervolume_matches_monte_carlo_in_3d() -> None:
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 1, size=(12, 3))
    samples = rng.uniform(0, 1, size=(200_000, 3))
    covered = (samples[:, None, :] >= pts[None, :, :]).all(-1).any(-1).mean()
    assert hypervolume(pts.tolist(), (1, 1, 1)) == pytest.approx(covered, abs=5e-3)


def test_pareto_book_and_front_respect_direction_and_constraints() -> None:
    spec = parse_objectives({"acc": "max", "t": "min"}, {"mem": ("<=", 10)}, [0.0, 5.0])
    assert spec is not None
    book = ParetoBook(spec)
    assert book.add({"acc": 0.5, "t": 1.0, "mem": 1}) == {"feasible": 1.0, "hypervolume": pytest.approx(2.0)}
    assert book.add({"acc": 0.9, "t": 0.5, "mem": 11}) == {"feasible": 0.0, "hypervolume": pytest.approx(2.0)}
    assert book.add({"acc": 0.8, "t": 3.0, "mem": 1})["hypervolume"] == pytest.approx(2.0 + 0.3 * 2.0)
    assert book.add(None) == {"hypervolume": pytest.approx(2.6)}  # a failed round: the front stays
    rows = [({"x": 1}, {"acc": 0.5, "t": 1.0, "mem": 1}), ({"x": 2}, {"acc": 0.9, "t": 0.5, "mem": 11}),
            ({"x": 3}, {"acc": 0.8, "t": 3.0, "mem": 1}), ({"x": 4}, {"acc": 0.4, "t": 2.0, "mem": 1})]
    assert [p["config"]["x"] for p in pareto_front(spec, rows)] == [1, 3]
