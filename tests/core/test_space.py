import math

import pytest
import torch

from hpoflow.core.space import Bool, Categorical, Float, Int, SearchSpace, SpaceError


def test_float_linear_and_log_round_trip():
    lin, log = Float("a", -2.0, 6.0), Float("b", 1e-6, 1e-2, log=True)
    for u in (0.0, 0.25, 0.5, 1.0):
        assert lin.encode(lin.decode(u)) == pytest.approx(u)
        assert log.encode(log.decode(u)) == pytest.approx(u)
    assert log.decode(0.5) == pytest.approx(1e-4)


def test_categorical_uses_equal_width_bins():
    c = Categorical("c", ("x", "y", "z"))
    assert [c.decode(u) for u in (0.0, 0.33, 0.34, 0.66, 0.67, 1.0)] == ["x", "x", "y", "y", "z", "z"]
    b = Bool("b")  # paper 004 D.2: [0, 0.5) is True, [0.5, 1] is False
    assert b.decode(0.49) is True and b.decode(0.5) is False


def test_int_bins_are_equal_width_and_cover_every_value():
    p = Int("n", 2, 10)
    us = torch.linspace(0, 1, 9001)
    counts = {}
    for u in us.tolist():
        counts[p.decode(u)] = counts.get(p.decode(u), 0) + 1
    assert sorted(counts) == list(range(2, 11))
    assert max(counts.values()) - min(counts.values()) <= 2
    assert all(p.decode(p.encode(v)) == v for v in range(2, 11))


def test_space_encode_decode_snap():
    space = SearchSpace.of(Float("lr", 1e-4, 1.0, log=True), Int("depth", 1, 5), Categorical("act", ("a", "b")))
    cfg = space.decode(torch.tensor([0.5, 0.5, 0.9]))
    assert cfg["depth"] == 3 and cfg["act"] == "b" and math.isclose(cfg["lr"], 1e-2)
    assert space.decode(space.encode(cfg)) == cfg
    assert space.finite_size() is None
    assert SearchSpace.of(Int("a", 1, 3), Bool("b")).finite_size() == 6


@pytest.mark.parametrize("make", [lambda: Float("x", 1.0, 1.0), lambda: Int("x", 3, 2),
                                  lambda: Float("x", 0.0, 1.0, log=True), lambda: Categorical("x", ())])
def test_invalid_parameters_raise_naming_the_parameter(make):
    with pytest.raises(SpaceError, match="'x'"):
        make()


def test_grid_enumerates_all_discrete_values():
    space = SearchSpace.of(Int("a", 1, 3), Bool("b"))
    grid = space.grid(10)
    assert grid.shape == (6, 2)
    assert {tuple(space.decode(row).values()) for row in grid} == {(a, b) for a in (1, 2, 3) for b in (True, False)}
