"""Whole-config sanity checks (hpoflow.config.validation) and resume's override comparison
(hpoflow.store.resume_guard)."""

from __future__ import annotations

import math

import pytest

from hpoflow.config.validation import MAX_DIM, MAX_ROUNDS, MAX_SEED, check_config, check_task
from hpoflow.store.resume_guard import differing_override, redacted_keys, secret_overrides

BASE = {"algo": {"name": "gp_ucb", "beta": 2.0}, "task": {"name": "branin", "dim": 2, "low": None},
        "budget": {"rounds": 30, "cost": None}, "seed": 0, "tracking": {"uri": None, "run_name": None}}


def _with(**changes):
    raw = {k: dict(v) if isinstance(v, dict) else v for k, v in BASE.items()}
    for dotted, value in changes.items():
        group, _, key = dotted.replace("__", ".").partition(".")
        if key:
            raw[group][key] = value
        else:
            raw[group] = value
    return raw


@pytest.mark.parametrize("changes,message", [
    ({"budget__cost": math.nan}, "budget.cost=nan must be a finite number"),
    ({"algo__beta": math.inf}, "algo.beta=inf must be a finite number"),
    ({"foo": 1}, "'foo' is not a setting"),
    ({"budget__rounds": MAX_ROUNDS + 1}, "budget.rounds=1000001 is beyond the maximum 1,000,000"),
    ({"seed": MAX_SEED + 1}, "seed=4294967296 is beyond"),
    ({"task__dim": MAX_DIM + 1}, "task.dim=10001 is beyond"),
    ({"tracking__uri": "  "}, "tracking.uri is empty"),
    ({"tracking__run_name": "x" * 251}, "tracking.run_name must be 1 to 250 characters"),
])
def test_nonsense_is_one_clear_error(changes, message):
    check_config(BASE)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("*", r"\*")):
        check_config(_with(**changes))


def test_limits_themselves_are_allowed():
    check_config(_with(budget__rounds=MAX_ROUNDS, seed=MAX_SEED, task__dim=MAX_DIM))


def test_a_fixed_dimension_task_refuses_another_dim():
    from hpoflow.tasks.synthetic import make_hartmann6, make_rastrigin

    check_task({"dim": 6}, make_hartmann6())
    check_task({"dim": 3}, make_rastrigin(dim=3))
    with pytest.raises(ValueError, match="task.dim=3: hartmann6 has a fixed dimension of 6"):
        check_task({"dim": 3}, make_hartmann6())


RECORDED = {"algo": {"name": "random"}, "task": {"name": "branin", "noise_std": 0.5}, "seed": 3,
            "budget": {"rounds": 4, "cost": None}, "tracking": {"uri": "sqlite:///a.db", "password": "***"},
            "resume": None}


def test_overrides_equal_to_the_recorded_config_are_accepted_and_others_refused():
    composed = {**RECORDED, "resume": "x", "tracking": {"uri": "sqlite:///b.db", "password": "pw"}}
    same = ["algo=random", "task=branin", "task.noise_std=0.5", "seed=3", "budget.rounds=4", "resume=x",
            "tracking.uri=sqlite:///b.db", "tracking.password=pw"]
    assert differing_override(same, composed, RECORDED) is None
    assert differing_override(["seed=4"], {**composed, "seed": 4}, RECORDED) == "seed=4"
    assert differing_override(["algo=gp_ei"], {**composed, "algo": {"name": "gp_ei"}}, RECORDED) == "algo=gp_ei"
    assert differing_override(["+foo=1"], {**composed, "foo": 1}, RECORDED) == "+foo=1"
    assert differing_override(["~seed"], composed, RECORDED) == "~seed"


def test_secrets_are_never_recorded_and_must_be_given_again():
    assert redacted_keys(RECORDED) == ["tracking.password"]
    assert redacted_keys({"tracking": {"uri": "http://bob:***@host"}}) == ["tracking.uri"]
    given = secret_overrides(["tracking.password=pw"], {"tracking": {"password": "pw"}}, RECORDED)
    assert given["tracking"]["password"] == "pw" and RECORDED["tracking"]["password"] == "***"
    assert redacted_keys(given) == []
