"""A task's fidelity: validation of the spec, levels, and Hyperband's rung levels."""
from __future__ import annotations

import pytest

from hpoflow.core.fidelity import Fidelity, curve_key, parse_fidelity, rung_levels


def test_rung_levels_are_min_times_powers_of_eta_ending_at_max():
    assert rung_levels(Fidelity("epochs", 1, 27), 3) == [1, 3, 9, 27]
    assert rung_levels(Fidelity("epochs", 1, 20), 3) == [1, 3, 9, 20]  # the top rung is always max
    assert rung_levels(Fidelity("epochs", 2, 27), 3) == [2, 6, 18, 27]
    assert rung_levels(Fidelity("epochs", 1, 81), 3, min_level=9) == [9, 27, 81]
    assert rung_levels(Fidelity("fraction", 0.1, 1.0, integer=False), 2) == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0])
    assert rung_levels(Fidelity("epochs", 5, 5), 3) == [5]


def test_integer_levels_round_and_never_repeat():
    assert rung_levels(Fidelity("steps", 1, 10), 1.5) == [1, 2, 3, 5, 8, 10]


@pytest.mark.parametrize("spec, message", [
    (("epochs", 5, 2), "min=5 > max=2"),
    (("epochs", 0, 2), "min=0 must be > 0"),
    (("epochs", -1, 2), "min=-1 must be > 0"),
    (("epochs", 1, 2.5, True), "max=2.5 is fractional"),
    (("1epochs", 1, 2), "must be an identifier"),
    (("epochs", 1, float("inf")), "must be a finite number"),
    (("epochs", 1), "is not a fidelity"),
    ({"name": "epochs", "min": 1}, "must have the keys"),
    ("epochs", "is not a fidelity"),
])
def test_a_bad_spec_is_one_line_naming_the_value(spec, message):
    with pytest.raises(ValueError, match=message) as info:
        parse_fidelity(spec)
    assert "\n" not in str(info.value)


def test_parse_infers_integer_from_the_bounds():
    assert parse_fidelity(("epochs", 1, 27)) == Fidelity("epochs", 1, 27, True)
    assert parse_fidelity(("fraction", 0.1, 1.0)).integer is False
    assert parse_fidelity({"name": "n", "min": 2, "max": 8}) == Fidelity("n", 2, 8, True)
    assert parse_fidelity(None) is None


def test_check_and_level():
    f = Fidelity("epochs", 1, 27)
    assert f.check(9) == 9 and isinstance(f.check(9.0), int)
    with pytest.raises(ValueError, match="outside"):
        f.check(28)
    with pytest.raises(ValueError, match="whole number"):
        f.check(2.5)
    assert f.level(100) == 27 and f.level(0.2) == 1 and f.level(4.6) == 5


def test_curve_key_names_one_metric_per_configuration():
    assert curve_key(7) == "lc/config_0007"
