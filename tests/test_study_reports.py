"""Study trials with a fidelity: report() checks its step against the asked level and the fidelity's type, is an
error after tell(), a non-finite report stops the trial, and a trial continued by the user is charged the steps it
trained (not its whole level)."""
from __future__ import annotations

import math

import pytest

from hpoflow import Study

SPACE = {"x": ("float", 0.0, 1.0)}


def _study(**kwargs):
    return Study(SPACE, tracking=None, **kwargs)


def test_a_step_beyond_the_asked_level_or_not_positive_is_refused():
    """Before: asked 1, reported up to 27 (recorded as fidelity 27 in the lowest rung); steps 0 and -1 accepted."""
    with _study(algo="hyperband", fidelity=("epochs", 1, 27), cost=200) as s:
        t = s.ask()
        assert t.fidelity == 1
        for bad in (2, 27, 0, -1):
            with pytest.raises(ValueError, match=r"report\(step=.*\): the step must be in \(0, 1\]"):
                t.report(bad, 0.5)
        t.report(1, 0.5)
        s.tell(t)


def test_a_fractional_step_of_an_integer_fidelity_is_refused():
    with _study(algo="random", fidelity=("epochs", 1, 9), rounds=2) as s:
        t = s.ask()
        with pytest.raises(ValueError, match=r"report\(step=2.5\): the fidelity counts whole steps"):
            t.report(2.5, 0.1)
        t.report(2.0, 0.1)  # a float that is a whole number is fine
        s.tell(t)


def test_report_after_tell_is_an_error():
    """Before: accepted, and it still moved later should_stop() verdicts."""
    with _study(algo="random", fidelity=("epochs", 1, 9), rounds=3) as s:
        t = s.ask()
        t.report(1, 0.3)
        s.tell(t)
        with pytest.raises(ValueError, match=f"trial {t.number} was told already"):
            t.report(2, 0.2)


def test_a_nan_report_stops_the_trial():
    """Before: should_stop() stayed False after a NaN report."""
    with _study(algo="random", fidelity=("epochs", 1, 9), rounds=2, prune="none") as s:
        t = s.ask()
        t.report(1, 0.3)
        assert not t.should_stop()
        t.report(2, math.nan)
        assert t.should_stop()
        s.tell(t, failed="diverged")


def test_a_continued_trial_is_charged_the_steps_it_trained():
    """Hyperband promotes configurations; the user continues each from the level it reached (reports only the new
    steps). Before: a promoted trial was charged its whole level (51 units trained, 60 counted)."""
    trained = 0
    reached: dict[int, int] = {}
    with _study(algo="hyperband", fidelity=("epochs", 1, 9), cost=60, seed=3) as s:
        while not s.done:
            t = s.ask()
            start = reached.get(t.config_id, 0)
            for step in range(start + 1, int(t.fidelity) + 1):
                t.report(step, (t.config["x"] - 0.3) ** 2 + 1 / step)
                trained += 1
            reached[t.config_id] = int(t.fidelity)
            s.tell(t)
        spent = s.result().summary["query_cost"]
    assert spent == trained and any(r.fidelity > 1 for r in s.records)


def test_a_trial_retrained_from_scratch_is_charged_its_whole_level():
    with _study(algo="hyperband", fidelity=("epochs", 1, 9), cost=40, seed=3) as s:
        counted = 0.0
        while not s.done:
            t = s.ask()
            for step in range(1, int(t.fidelity) + 1):  # every trial from step 1: the user keeps no state
                t.report(step, t.config["x"] + 1 / step)
            counted += t.fidelity
            s.tell(t)
        assert s.result().summary["query_cost"] == counted
