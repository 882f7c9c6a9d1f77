"""The several-objectives maths of the report (hpoflow.report.pareto) on small cases worked by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.core.objectives import hypervolume
from hpoflow.report import pareto
from hpoflow.report.pareto import Box, attainment_surface, attainment_surface_2d, box_around, known_front
from hpoflow.tasks.multi_objective import MAX_HYPERVOLUME, PROBLEMS


@pytest.mark.parametrize("task", ["zdt1", "zdt2", "zdt3", "dtlz2"])
def test_the_known_fronts_have_the_published_hypervolume(task):
    # BoTorch's values for its reference points (ZDT: (11, 11), DTLZ2: (1.1, 1.1)): ZDT1 120 + 2/3, ZDT2 120 + 1/3,
    # ZDT3 128.77811613069076, DTLZ2 1.21 - pi/4; a dense staircase underestimates by O(1/n)
    front = known_front(task, 20001)
    ref = PROBLEMS[task][1]
    assert hypervolume(front.tolist(), ref) == pytest.approx(MAX_HYPERVOLUME[task], abs=2e-4)
    assert {"zdt1": 120 + 2 / 3, "zdt2": 120 + 1 / 3, "zdt3": 128.77811613069076,
            "dtlz2": 1.21 - math.pi / 4}[task] == pytest.approx(MAX_HYPERVOLUME[task], rel=1e-12)


def test_the_known_fronts_lie_on_their_formulas_and_are_non_dominated():
    f = known_front("zdt1", 11)
    assert f[:, 1] == pytest.approx(1 - np.sqrt(f[:, 0]))
    assert np.allclose(np.hypot(*known_front("dtlz2", 11).T), 1.0)
    z3 = known_front("zdt3")
    assert 0 < len(z3) < pareto.FRONT_POINTS and z3[:, 1].min() == pytest.approx(-0.7733, abs=1e-3)  # five pieces
    assert known_front("branin") is None
    # ZDT1 with the classic reference (1, 1): 2/3
    assert hypervolume(known_front("zdt1", 20001).tolist(), [1, 1]) == pytest.approx(2 / 3, abs=1e-4)


def test_hypervolume_regret_of_the_known_front_is_zero_and_of_one_point_is_known():
    front = known_front("zdt1")
    box, source = box_around(front, (11.0, 11.0))
    assert source == "the task's reference point" and box.volume == 121.0
    best = MAX_HYPERVOLUME["zdt1"] / box.volume
    assert best - box.hypervolume(front) == pytest.approx(0.0, abs=1e-5)
    # one point (1, 1): it dominates a 10 x 10 square of the 11 x 11 box
    assert best - box.hypervolume(np.array([[1.0, 1.0]])) == pytest.approx((120 + 2 / 3 - 100) / 121)
    assert box.hypervolume(np.zeros((0, 2))) == 0.0 and box.hypervolume(np.array([[12.0, 0.0]])) == 0.0


def test_without_a_reference_point_the_box_ends_a_tenth_beyond_the_nadir():
    box, source = box_around(np.array([[0.0, 4.0], [2.0, 0.0]]))
    assert source.startswith("nadir") and box.ideal.tolist() == [0, 0] and box.reference.tolist() == [2.2, 4.4]
    assert box.normalise(np.array([[2.2, 0.0]])).tolist() == [[1.0, 0.0]]
    # a maximised objective in minimisation form: the same arithmetic on -v
    assert Box(np.array([-3.0, 0.0]), np.array([-1.0, 1.0])).hypervolume(np.array([[-3.0, 0.0]])) == 1.0


def test_running_front_skips_missing_rounds_and_drops_dominated_points():
    pts = np.array([[2.0, 2.0], [np.nan, np.nan], [1.0, 3.0], [1.0, 1.0], [1.0, 1.0]])
    fronts = pareto.running_front(pts)
    assert [len(f) for f in fronts] == [1, 1, 2, 1, 1]
    assert fronts[-1].tolist() == [[1.0, 1.0]]
    assert pareto.running_front(np.full((2, 2), np.nan))[-1].shape == (0, 2)


A = np.array([[1.0, 3.0], [3.0, 1.0]])
B = np.array([[2.0, 2.0]])


def test_attainment_surfaces_of_two_tiny_fronts_by_hand():
    # attained by at least one of the two runs: the union's non-dominated points
    assert attainment_surface_2d([A, B], 1).tolist() == [[1, 3], [2, 2], [3, 1]]
    # by both: at f1 = 2 run A reaches f2 = 3 (its point (1, 3)), run B 2 -> (2, 3); at f1 = 3: A 1, B 2 -> (3, 2)
    assert attainment_surface_2d([A, B], 2).tolist() == [[2, 3], [3, 2]]
    # the 50% surface of two runs is the first (ceil(0.5 * 2) = 1); an empty front attains nothing
    assert attainment_surface([A, B], 50).tolist() == [[1, 3], [2, 2], [3, 1]]
    assert attainment_surface([A, np.zeros((0, 2))], 100).shape == (0, 2)


def test_the_hand_written_surface_agrees_with_moocore():
    moocore = pytest.importorskip("moocore")  # optional: pip install moocore
    rng = np.random.default_rng(0)
    fronts = []
    for _ in range(5):
        p = rng.random((6, 2))
        fronts.append(p[pareto.non_dominated(p.tolist())])
    for level in range(1, 6):
        sets = np.concatenate([np.full(len(f), i + 1) for i, f in enumerate(fronts)])
        theirs = moocore.eaf(np.vstack(fronts), sets, percentiles=[20.0 * level])[:, :2]
        ours = attainment_surface_2d(fronts, level)
        assert ours.tolist() == theirs[np.lexsort(theirs.T[::-1])].tolist()


def test_cost_regret_front_keeps_the_trade_off_points_by_cost():
    cost = np.array([1.0, 2.0, 3.0, 2.5, np.nan])
    regret = np.array([0.5, 0.2, 0.1, 0.3, 0.0])
    assert pareto.cost_regret_front(cost, regret).tolist() == [0, 1, 2]


def test_three_objectives_without_moocore_is_a_one_line_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "moocore", None)  # import moocore -> ImportError
    with pytest.raises(ValueError, match="attainment without moocore needs 2 objectives"):
        attainment_surface([np.ones((1, 3)), np.zeros((1, 3))], 50)
