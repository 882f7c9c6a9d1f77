"""Every algorithm x surrogate pair of the registry runs, or is refused in one line before any run exists; and
every member of the surrogate an algorithm touches is one its declared protocol names."""
from __future__ import annotations

import math
from typing import Any

import pytest

import hpoflow
from hpoflow.config import registry
from hpoflow.config.settings import ConfigError, validate
from hpoflow.surrogates.base import (
    KernelSurrogate,
    NetworkSurrogate,
    StandardizedSurrogate,
    TimeVaryingSurrogate,
    _nested,
    protocol_members,
)

ALGORITHMS = [e.name for e in registry.entries("algorithm")]
SURROGATES = [e.name for e in registry.entries("surrogate")]
ALL = set(SURROGATES)
# what each family is documented to need (README, the algorithms' docstrings); every other algorithm builds no model
EXPECTED = {"gp_ucb": StandardizedSurrogate, "gp_ei": StandardizedSurrogate, "gp_pi": StandardizedSurrogate,
            "skopt_gp_ucb": StandardizedSurrogate, "skopt_gp_ei": StandardizedSurrogate,
            "skopt_gp_pi": StandardizedSurrogate, "bbo_ei": StandardizedSurrogate, "bbo_ucb": StandardizedSurrogate,
            "turbo": KernelSurrogate, "auto": KernelSurrogate, "tv_gp_ucb": TimeVaryingSurrogate,
            "r_gp_ucb": TimeVaryingSurrogate,
            "ce_gp_ucb": TimeVaryingSurrogate, "go_ucb": NetworkSurrogate, "go_ucb_paper": NetworkSurrogate,
            "mf_gp": StandardizedSurrogate, "parego": StandardizedSurrogate}
ACCEPTS = {StandardizedSurrogate: {"gp", "skopt_gp", "nn"}, KernelSurrogate: {"gp", "skopt_gp"},
           TimeVaryingSurrogate: {"tv_gp"}, NetworkSurrogate: {"nn"}}


def _raw(algo: str, surrogate: str | None, rounds: int) -> dict[str, Any]:
    """The algorithm's smoke config (its registered overrides, as in tests/test_contract.py) with ``surrogate``."""
    raw: dict[str, Any] = {"algo": {"name": algo}, "surrogate": {"name": "gp"}, "task": {"name": "branin"},
                           "hardware": {"name": "cpu", "device": "cpu"}, "tracking": {"enabled": False},
                           "budget": {"rounds": rounds}, "seed": 1, "progress": False}
    for override in registry.get("algorithm", algo).smoke:
        key, value = override.split("=", 1)
        if key in ("task", "surrogate", "algo"):
            raw[key] = {"name": value}
            continue
        group, *path = key.split(".")
        node = raw.setdefault(group, {})
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = int(value) if value.isdigit() else value
    raw["budget"]["rounds"] = rounds  # over a smoke's own budget (turbo's 8)
    if str(raw["task"]["name"]).endswith("_mf"):  # two rungs (1 and 3): a full-fidelity evaluation by round 4
        raw["task"]["max_resource"] = 3
    if surrogate is not None:
        raw["surrogate"] = {"name": surrogate}
    return raw


def _skip_without_extra(algo: str) -> None:
    entry = registry.get("algorithm", algo)
    if entry.missing():
        pytest.skip(f"{algo} needs {entry.missing()} (pip install 'hpoflow[{entry.extra}]')")


def test_each_surrogate_entrys_declared_model_and_protocols_are_its_class_and_what_it_provides():
    """The declarations validation reads instead of importing the surrogate's module (torch, gpytorch)."""
    from hpoflow.config.pairing import built_class
    from hpoflow.surrogates import base

    protocols = [p for p in vars(base).values() if isinstance(p, type) and getattr(p, "_is_runtime_protocol", False)
                 and base.Surrogate in p.__mro__]
    assert {p.__name__ for p in (base.Surrogate, base.KernelSurrogate, base.TimeVaryingSurrogate)} <= {
        p.__name__ for p in protocols}
    for name in SURROGATES:
        entry = registry.get("surrogate", name)
        cls = built_class(entry.load())
        assert cls is not None and entry.model_class == cls.__name__, name
        assert set(entry.model_provides) == {p.__name__ for p in protocols if base.provides(cls, p)}, name


def test_each_algorithm_declares_the_protocol_its_family_needs():
    for name in ALGORITHMS:
        entry = registry.get("algorithm", name)
        if entry.missing():  # a peer whose library is not installed (dehb): its class cannot be imported
            continue
        assert getattr(entry.load(), "surrogate_protocol", None) is EXPECTED.get(name), name


@pytest.mark.parametrize("surrogate", SURROGATES)
@pytest.mark.parametrize("algo", ALGORITHMS)
def test_every_pair_runs_a_few_rounds_or_is_refused_in_one_line(algo, surrogate):
    _skip_without_extra(algo)
    raw = _raw(algo, surrogate, rounds=3)
    accepted = surrogate in ACCEPTS.get(EXPECTED.get(algo), ALL)
    if not accepted:
        with pytest.raises(ConfigError) as info:
            validate(raw)  # composition refuses it: no task, model or run is built
        message = str(info.value)
        assert "\n" not in message and message.startswith(f"algo '{algo}' needs ")
        assert f"(surrogate={surrogate})" in message and message.split(", got ")[0].endswith(")")
        return
    rounds = 4 if raw["task"]["name"].endswith("_mf") else 3  # the incumbent counts full-fidelity evaluations only
    raw["budget"]["rounds"] = rounds
    result = hpoflow.run_config(raw)  # the library path, tracking off
    assert [r.round for r in result.records] == list(range(1, rounds + 1))
    assert math.isfinite(result.summary["best_value"])
    top = result.summary.get("incumbent_fidelity")  # the full fidelity of a multi-fidelity task (3 here)
    if top is not None:  # the incumbent is the best (branin_mf: smallest) evaluation at the full fidelity
        full = [r.value for r in result.records if r.queried and (r.fidelity is None or r.fidelity >= top)]
        assert result.summary["best_value"] == min(v for v in full if v is not None and math.isfinite(v))


@pytest.mark.cli
def test_turbo_with_the_network_is_refused_by_the_cli_in_one_line(run_cli):
    proc = run_cli("algo=turbo", "surrogate=nn", "task=branin", "tracking=off", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == ("Error: algo 'turbo' needs an exact GP surrogate it can sample "
                                                    "jointly (surrogate=gp or skopt_gp), got NeuralSurrogate "
                                                    "(surrogate=nn)")


class Recorder:
    """Forwards every attribute of a model, noting its name (``model.value`` for a nested protocol's members)."""

    def __init__(self, target: Any, protocol: type | None, seen: set[str], prefix: str = "") -> None:
        object.__setattr__(self, "_hidden", (target, protocol, seen, prefix))

    def __getattr__(self, name: str) -> Any:
        target, protocol, seen, prefix = object.__getattribute__(self, "_hidden")
        seen.add(prefix + name)
        value = getattr(target, name)
        inner = _nested(protocol).get(name) if protocol is not None else None
        return Recorder(value, inner, seen, f"{prefix}{name}.") if inner is not None else value

    def __setattr__(self, name: str, value: Any) -> None:
        target, _, seen, prefix = object.__getattribute__(self, "_hidden")
        seen.add(prefix + name)
        setattr(target, name, value)


def _declared(protocol: type) -> set[str]:
    names = set(protocol_members(protocol))
    for name, inner in _nested(protocol).items():
        names |= {f"{name}.{member}" for member in protocol_members(inner)}
    return names


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_an_algorithm_touches_only_the_surrogate_members_its_protocols_declare(algo, monkeypatch):
    """Six rounds (past every initial design) with the model behind a recorder of the members used."""
    import hpoflow.runner.build as build
    from hpoflow.runner.loop import Budget, run

    _skip_without_extra(algo)
    cls = registry.get("algorithm", algo).load()
    protocol, extras = cls.surrogate_protocol, cls.surrogate_extras
    seen: set[str] = set()
    built = []
    real = build._build_surrogate

    def recorded(entry: Any, config: Any, dim: int, **kwargs: Any) -> Recorder:
        built.append(entry.name)
        return Recorder(real(entry, config, dim, **kwargs), protocol, seen)

    monkeypatch.setattr(build, "_build_surrogate", recorded)
    surrogate = sorted(ACCEPTS[protocol])[0] if protocol is not None else None
    s = validate(_raw(algo, surrogate, rounds=6))
    task, algorithm, _ = build.build_components(s)
    result = run(task, algorithm, budget=Budget(6))
    assert len(result.records) == 6
    if protocol is None:
        assert built == [], f"{algo} declares no surrogate protocol but built {built}"
        return
    allowed = _declared(protocol).union(*(_declared(extra) for extra in extras))
    assert built and seen, f"{algo} never used its surrogate"
    assert seen <= allowed, f"{algo} uses {sorted(seen - allowed)}, which {protocol.__name__} does not declare"
