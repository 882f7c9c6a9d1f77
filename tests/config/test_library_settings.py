"""The library's settings, built without Hydra, are the CLI's: the same config and the same one-line errors.

The reference is Hydra's own composition of ``conf/`` (:func:`hpoflow.config.compose.compose`, what
``python -m hpoflow`` and ``run_config`` use) for the overrides the same Python values spell.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from hpoflow.config import registry
from hpoflow.config.compose import compose
from hpoflow.config.library import library_settings, override_value, settings_items
from hpoflow.config.settings import ConfigError, validate

TASK = {"name": "f", "space": {"x": "float"}}


def _overrides(algo: str, seed: int = 0, rounds: int = 30, tracking: Any = None, surrogate: Any = None,
               hardware: str = "auto", on_error: str = "fail", checkpoint_every: int = 1,
               algo_settings: dict[str, Any] | None = None, workers: Any = 1, executor: Any = "thread") -> list[str]:
    """The command line the library's arguments stand for."""
    out = [f"algo={algo}"] + [f"{k}={override_value(v)}" for k, v in settings_items("algo", algo_settings or {})]
    chosen = {"name": surrogate} if isinstance(surrogate, str) else dict(surrogate or {})
    if chosen.get("name"):
        out.append(f"surrogate={chosen.pop('name')}")
    out += [f"{k}={override_value(v)}" for k, v in settings_items("surrogate", chosen)]
    if tracking is None or tracking is False:
        out.append("tracking=off")
    elif tracking is True:
        out.append("tracking=mlflow")
    else:
        out.append("tracking=mlflow")
        chosen = {"uri": tracking} if isinstance(tracking, str) else dict(tracking)
        out += [f"{k}={override_value(v)}" for k, v in settings_items("tracking", chosen)]
    return out + [f"hardware={hardware}", f"on_error={override_value(on_error)}", "progress=false",
                  f"seed={override_value(seed)}", f"budget.rounds={override_value(rounds)}",
                  f"budget.workers={override_value(workers)}", f"checkpoint_every={override_value(checkpoint_every)}",
                  f"budget.executor={override_value(executor)}"]


def _cli(algo: str, **kwargs: Any) -> str:
    """The composed, validated config (as JSON, key order included), or the CLI's one-line error."""
    try:
        raw = compose(_overrides(algo, **kwargs))
        raw["task"] = TASK
        return json.dumps(validate(raw, own_task=True).raw)
    except ConfigError as exc:
        return f"ConfigError: {exc}"


def _library(algo: str, **kwargs: Any) -> str:
    try:
        return json.dumps(library_settings(algo, TASK, **kwargs).raw)
    except ConfigError as exc:
        return f"ConfigError: {exc}"


@pytest.mark.parametrize("algo", [e.name for e in registry.entries("algorithm")])
def test_every_algorithms_library_settings_are_the_composed_config(algo):
    assert _library(algo) == _cli(algo)


CASES = [
    {"algo_settings": {"beta": 3, "optimizer": {"raw_samples": 64}}},  # 3 -> 3.0, as the schema converts it
    {"algo_settings": {"beta": "abc"}}, {"algo_settings": {"bogus": 1}}, {"algo_settings": {"beta": None}},
    {"algo_settings": {"beta": [1, 2]}}, {"algo_settings": {"optimizer": 3}}, {"algo_settings": {"n_init": "1e-3"}},
    {"algo_settings": {"optimizer": {"raw_samples": "abc"}}}, {"algo_settings": {"beta_schedule": "foo"}},
    {"algo_settings": {"init": "true"}}, {"algo_settings": {"beta": float("nan")}},
    {"surrogate": "tv_gp"}, {"surrogate": "nope"}, {"surrogate": {"name": "gp", "kernel": "rbf", "noise": 0.01}},
    {"surrogate": {"kernel": "foo"}}, {"surrogate": {"bogus": 1}},
    {"tracking": "sqlite:///x.db"}, {"tracking": {"uri": "sqlite:///x.db", "experiment": "e", "run_name": "it's"}},
    {"tracking": {"foo": 1}}, {"tracking": {"uri": ""}}, {"tracking": True}, {"tracking": False},
    {"workers": 4, "executor": "process"}, {"workers": "x"}, {"workers": 0}, {"executor": "gpu"},
    {"seed": -1}, {"seed": "x"}, {"seed": 2**40}, {"rounds": 0}, {"rounds": 5.5}, {"hardware": "cpu"},
    {"hardware": "gpu"}, {"on_error": "skip"}, {"on_error": "bogus"}, {"checkpoint_every": 0},
    {"checkpoint_every": -1},
]


@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_settings_and_bad_values_give_the_composed_config_or_its_one_line_error(kwargs):
    algo = "tv_gp_ucb" if kwargs.get("surrogate") == "tv_gp" else "gp_ucb"
    typed = {k: v for k, v in kwargs.items() if k in ("seed", "rounds", "workers") and not isinstance(v, int)}
    if typed:  # the library's integer arguments are type-checked first (issue 42); the CLI refuses them too
        key, value = next(iter(typed.items()))
        assert _library(algo, **kwargs) == f"ConfigError: {key}={value!r} ({type(value).__name__}) is not an " \
            "integer; allowed: an int (NumPy's integers too)"
        assert _cli(algo, **kwargs).startswith("ConfigError: ")
        return
    assert _library(algo, **kwargs) == _cli(algo, **kwargs)


def test_the_algorithms_yaml_picks_the_surrogate_and_an_explicit_one_wins():
    assert library_settings("tv_gp_ucb", TASK).surrogate.name == "tv_gp"
    assert library_settings("skopt_gp_ei", TASK).surrogate.learn_outputscale is True
    assert library_settings("gp_ucb", TASK, surrogate="nn").surrogate.name == "nn"


def test_names_no_setting_can_hold_are_refused_in_one_line():
    with pytest.raises(ConfigError, match=r"Could not find 'algo/nope'; allowed: .*gp_ei"):
        library_settings("nope", TASK)
    with pytest.raises(ConfigError, match=r"\{1, 2\} \(set\) is not a setting value"):
        library_settings("gp_ucb", TASK, algo_settings={"beta": {1, 2}})
    with pytest.raises(ConfigError, match=r"algo='' must name a registered algorithm"):
        library_settings("", TASK)


def test_no_hydra_is_needed(tmp_path):
    """In a fresh process, ``minimize`` builds its settings and runs without importing Hydra."""
    import subprocess

    from tests.conftest import cli_env

    code = ("import sys, hpoflow; hpoflow.minimize(lambda c: c['x'] ** 2, {'x': ('float', -1.0, 1.0)}, "
            "algo='random', rounds=2); print('hydra' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "False"
