"""The fuzz corpus of issue 42, in-process: a word or a NaN for every numeric setting of every registered algorithm
and surrogate (through the library: the CLI's type-checked nodes and validation), and the library's argument faults.

Every case raises its documented error type (ConfigError, SpaceError, TypeError, ValueError) in one line naming the
argument, and writes nothing to the store it names. The command line's part runs in subprocesses in
``tests/cli/test_bad_input.py`` (``ALL_CASES``); faults only a run meets (an objective's bad cost or non-finite
value, a Study's bad report) are ``_runtime_cases``; together they are the corpus of at least 300 cases.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hpoflow import Study, make_algorithm, minimize
from hpoflow.config import registry
from hpoflow.config.library import library_settings
from hpoflow.config.settings import ConfigError
from hpoflow.core.space import SpaceError, parse_space
from hpoflow.tasks.function import FunctionTask

SPACE = {"x": ("float", -1.0, 1.0), "n": ("int", 1, 4)}


def f(config: dict[str, Any]) -> float:
    return config["x"] ** 2 + config["n"]


def _numeric_cases() -> list[tuple[str, dict[str, Any], str]]:
    """(algo, library settings, key the message names): each numeric field of each installed algorithm and
    surrogate, given a word, a NaN (float fields) or a fraction (int fields)."""
    cases = []
    for kind, group in (("algorithm", "algo"), ("surrogate", "surrogate")):
        for entry in registry.entries(kind):
            if entry.missing():
                continue
            for i, field in enumerate(dataclasses.fields(entry.config)):
                kind_of = str(field.type).split(" |")[0]
                if kind_of not in ("int", "float") or field.name in entry.defaults:
                    continue
                bad = ("abc", math.nan if kind_of == "float" else 1.5)[i % 2]
                if group == "algo":
                    cases.append((entry.name, {"algo_settings": {field.name: bad}}, f"algo.{field.name}"))
                else:
                    cases.append(("random", {"surrogate": {"name": entry.name, field.name: bad}},
                                  f"surrogate.{field.name}"))
    return cases


NUMERIC = _numeric_cases()


def test_every_numeric_setting_of_every_component_refuses_a_word_or_a_nan():
    task = FunctionTask(parse_space(SPACE), None).description()
    problems = []
    for algo, kwargs, key in NUMERIC:
        try:
            library_settings(algo, task, **kwargs)
            problems.append(f"{algo} {kwargs}: accepted")
        except ConfigError as exc:
            if key not in str(exc) or "\n" in str(exc):
                problems.append(f"{algo} {kwargs}: {exc}")
    print(f"\nnumeric fuzz: {len(NUMERIC) - len(problems)} of {len(NUMERIC)} cases refused in one line")
    assert len(NUMERIC) >= 100 and not problems, "\n".join(problems)


def _library_cases(store: str) -> list[tuple[str, Callable[[], Any], type[BaseException], str]]:
    def run(**kwargs: Any) -> Callable[[], Any]:
        args = {"algo": "random", "rounds": 2, "tracking": store, **kwargs}
        return lambda: minimize(args.pop("fn", f), args.pop("space", SPACE), **args)

    def study(**kwargs: Any) -> Callable[[], Any]:
        return lambda: Study(kwargs.pop("space", SPACE), **{"algo": "random", "rounds": 2, "tracking": store, **kwargs})

    cases = [
        ("rounds as text", run(rounds="10"), ConfigError, "rounds='10'"),
        ("rounds as bool", run(rounds=True), ConfigError, "rounds=True"),
        ("rounds as float", run(rounds=3.0), ConfigError, "rounds=3.0"),
        ("cost as text", run(cost="5"), ConfigError, "cost='5'"),
        ("cost as bool", run(cost=True), ConfigError, "cost=True"),
        ("cost negative", run(cost=-1), ConfigError, "budget.cost"),
        ("fidelity min above max", run(fidelity=("epochs", 5, 2)), ConfigError, "min=5 > max=2"),
        ("fidelity as text", run(fidelity="epochs"), ConfigError, "is not a fidelity"),
        ("rounds zero", run(rounds=0), ConfigError, "budget.rounds"),
        ("rounds negative", run(rounds=-3), ConfigError, "budget.rounds"),
        ("rounds 2**70", run(rounds=2**70), ConfigError, "budget.rounds"),
        ("seed as text", run(seed="1"), ConfigError, "seed='1'"),
        ("seed as float", run(seed=1.5), ConfigError, "seed=1.5"),
        ("seed negative", run(seed=-1), ConfigError, "seed"),
        ("seed 2**40", run(seed=2**40), ConfigError, "seed"),
        ("workers as text", run(workers="4"), ConfigError, "workers='4'"),
        ("workers zero", run(workers=0), ConfigError, "workers"),
        ("progress as text", run(progress="yes"), ConfigError, "progress='yes'"),
        ("progress as int", run(progress=1), ConfigError, "progress=1"),
        ("empty name", run(name=""), ConfigError, "name=''"),
        ("blank name", run(name="   "), ConfigError, "name="),
        ("name as int", run(name=5), ConfigError, "name=5"),
        ("300-character name", run(name="x" * 300), ConfigError, "name="),
        ("on_error as int", run(on_error=1), ConfigError, "on_error=1"),
        ("unknown on_error", run(on_error="ignore"), ConfigError, "on_error"),
        ("executor as int", run(executor=4), ConfigError, "executor=4"),
        ("unknown executor", run(executor="gpu"), ConfigError, "executor"),
        ("hardware None", run(hardware=None), ConfigError, "hardware=None"),
        ("unknown hardware", run(hardware="tpu"), ConfigError, "hardware"),
        ("algo None", run(algo=None), ConfigError, "algo=None"),
        ("empty algo", run(algo=""), ConfigError, "algo=''"),
        ("unknown algo", run(algo="nope"), ConfigError, "algo/nope"),
        ("unknown algo setting", run(nope=1), ConfigError, "algo.nope"),
        ("setting of an object", run(beta=object()), ConfigError, "object"),
        ("tracking as int", run(tracking=5), ConfigError, "tracking=5"),
        ("tracking as list", run(tracking=["a"]), ConfigError, "tracking="),
        ("in-memory store", run(tracking="sqlite://"), ConfigError, "in-memory"),
        ("unknown surrogate", run(algo="gp_ei", surrogate="nope"), ConfigError, "surrogate/nope"),
        ("surrogate as int", run(algo="gp_ei", surrogate=5), ConfigError, "surrogate"),
        ("fn not callable", run(fn=None), ConfigError, "fn=None"),
        ("space as list", run(space=[1, 2]), SpaceError, "space"),
        ("empty space", run(space={}), SpaceError, "at least one parameter"),
        ("empty parameter name", run(space={"": ("float", 0, 1)}), SpaceError, "names"),
        ("inverted bounds", run(space={"x": ("float", 1.0, 0.0)}), SpaceError, "'x'"),
        ("unknown kind", run(space={"x": ("nope", 0, 1)}), SpaceError, "'x'"),
        ("duplicate choices", run(space={"act": ["relu", "relu"]}), SpaceError, "'relu' is given twice"),
        ("empty choices", run(space={"act": []}), SpaceError, "'act'"),
        ("20,000 dimensions", run(space={f"x{i}": ("float", 0, 1) for i in range(20_000)}), SpaceError,
         "20,000 parameters"),
        ("study rounds as text", study(rounds="10"), ConfigError, "rounds='10'"),
        ("study seed as text", study(seed="4"), ConfigError, "seed='4'"),
        ("study empty name", study(name=""), ConfigError, "name=''"),
        ("study direction", study(direction="up"), ConfigError, "direction='up'"),
        ("study duplicate choices", study(space={"a": [1, 1]}), SpaceError, "twice"),
        ("make_algorithm unknown", lambda: make_algorithm("nope", SPACE), ConfigError, "algo/nope"),
        ("make_algorithm seed text", lambda: make_algorithm("random", SPACE, seed="1"), ConfigError, "seed='1'"),
        ("make_algorithm rounds float", lambda: make_algorithm("random", SPACE, rounds=2.5), ConfigError, "rounds="),
        ("fidelity max 10**400", run(fidelity=("epochs", 1, 10**400)), ConfigError, "max=1000"),
        ("fidelity min -10**400", run(fidelity=("epochs", -(10**400), 5)), ConfigError, "min=-1000"),
    ]
    return cases


def _refusal_problems(cases: list) -> list[str]:
    """What is wrong with each ``(name, call, error, fragment)`` case: accepted, a multi-line message, a message
    without ``fragment``, or another error type."""
    problems = []
    for name, call, error, fragment in cases:
        try:
            call()
            problems.append(f"{name}: accepted")
        except error as exc:
            if fragment not in str(exc) or "\n" in str(exc):
                problems.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        except Exception as exc:  # noqa: BLE001 - the wrong error type is what this test reports
            problems.append(f"{name}: {type(exc).__name__} (expected {error.__name__}): {str(exc)[:300]}")
    return problems


def test_the_library_refuses_wrong_arguments_in_one_line_and_writes_nothing(tmp_path: Path):
    db = tmp_path / "m.db"
    cases = _library_cases(f"sqlite:///{db}")
    problems = _refusal_problems(cases)
    print(f"\nlibrary fuzz: {len(cases) - len(problems)} of {len(cases)} cases refused in one line")
    assert not problems, "\n".join(problems)
    assert not db.exists()  # refused before the store was opened
    total = len(cases) + len(NUMERIC) + len(_cli_cases()) + len(_runtime_cases())
    print(f"fuzz corpus: {total} cases (library {len(cases)}, numeric {len(NUMERIC)}, command line "
          f"{len(_cli_cases())}, run time {len(_runtime_cases())})")
    assert total >= 300


def _cli_cases() -> list[Any]:
    from tests.cli.test_bad_input import ALL_CASES

    return ALL_CASES


def test_numpy_integers_are_accepted_wherever_ints_are():
    result = minimize(f, SPACE, algo="random", rounds=np.int64(3), seed=np.int64(4), workers=np.int32(1))
    assert len(result.records) == 3
    reference = minimize(f, SPACE, algo="random", rounds=3, seed=4)
    assert [r.config for r in result.records] == [r.config for r in reference.records]
    study = Study(SPACE, algo="random", rounds=np.int64(2), seed=np.int32(1))
    trial = study.ask()
    assert study.tell(trial, np.int64(3)).value == 3.0
    make_algorithm("random", SPACE, seed=np.int64(2), rounds=np.int16(5))


def test_tell_of_a_value_beyond_a_float_is_a_failed_round_not_an_overflow():
    study = Study(SPACE, algo="random", rounds=3, on_error="skip")
    record = study.tell(study.ask(), 10**400)
    assert record.failed and "non-finite" in (record.error or "")
    assert study.tell(study.ask(), -(10**400)).failed
    with pytest.raises(TypeError):
        study.tell(study.ask(), "abc")


def _runtime_cases() -> list[tuple[str, Callable[[], Any], type[BaseException], str]]:
    """Faults that only the run meets (the objective's costs and values, a Study's reports): each ends with its
    one-line error, within seconds (before: several ran forever or finished with a wrong result)."""
    from hpoflow.core.records import Evaluation, ObjectiveFailed
    from hpoflow.runner.loop import CostNeverSpent, ObjectiveError

    def run(fn: Callable[[dict[str, Any]], Any], **kwargs: Any) -> Callable[[], Any]:
        return lambda: minimize(fn, SPACE, **{"algo": "random", "tracking": False, **kwargs})

    def cost(c: float) -> Callable[[dict[str, Any]], Any]:
        return lambda config: Evaluation(value=config["x"], cost=c)

    def failed(c: float) -> Callable[[dict[str, Any]], Any]:
        def fn(config: dict[str, Any]) -> Any:
            raise ObjectiveFailed("diverged", cost=c)
        return fn

    def report(*steps: Any, told: bool = False) -> Callable[[], Any]:
        def go() -> None:
            study = Study(SPACE, algo="random", rounds=3, fidelity=("epochs", 1, 9), tracking=None)
            trial = study.ask()
            if told:
                trial.report(1, 0.5)
                study.tell(trial)
            for step in steps:
                trial.report(step, 0.5)
        return go

    two = {"objectives": {"a": "min", "b": "min"}, "rounds": 3}
    constrained = {"objectives": {"a": "min"}, "constraints": {"g": ("<=", 0.0)}, "rounds": 3}
    return [
        ("Evaluation cost -1 under a cost budget", run(cost(-1.0), cost=50), ObjectiveError, "cost=-1.0 must be"),
        ("Evaluation cost nan under a cost budget", run(cost(math.nan), cost=50), ObjectiveError, "cost=nan must be"),
        ("Evaluation cost inf", run(cost(math.inf), rounds=3), ObjectiveError, "cost=inf must be"),
        ("Evaluation cost 0 under a cost budget", run(cost(0.0), cost=50), CostNeverSpent, "cannot be spent"),
        ("ObjectiveFailed cost -100", run(failed(-100)), ObjectiveError, "cost=-100 must be"),
        ("ObjectiveFailed cost nan", run(failed(math.nan)), ObjectiveError, "cost=nan must be"),
        ("NaN second objective", run(lambda c: {"a": c["x"], "b": math.nan}, **two), ObjectiveError, "b=nan"),
        ("inf second objective", run(lambda c: {"a": c["x"], "b": math.inf}, **two), ObjectiveError, "b=inf"),
        ("NaN constraint", run(lambda c: {"a": c["x"], "g": math.nan}, **constrained), ObjectiveError, "g=nan"),
        ("-inf constraint", run(lambda c: {"a": c["x"], "g": -math.inf}, **constrained), ObjectiveError, "g=-inf"),
        ("report step beyond the asked level", report(27), ValueError, "report(step=27)"),
        ("report step 0", report(0), ValueError, "report(step=0)"),
        ("report step -1", report(-1), ValueError, "report(step=-1)"),
        ("report step 2.5 of an integer fidelity", report(2.5), ValueError, "whole steps"),
        ("report after tell", report(2, told=True), ValueError, "was told already"),
    ]


def test_faults_only_the_run_meets_end_in_one_line():
    cases = _runtime_cases()
    problems = _refusal_problems(cases)
    print(f"\nrun-time fuzz: {len(cases) - len(problems)} of {len(cases)} cases end in one line")
    assert not problems, "\n".join(problems)
