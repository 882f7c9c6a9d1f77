"""The library API's rough edges (issue 29), each as a newcomer meets it: spaces written in JSON/YAML, tracking=False,
plain numbers for tell, ask() without a round, NumPy/float integer bounds, decoded values in bounds, artifacts."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml

import hpoflow
from hpoflow import Study
from hpoflow.core.space import Categorical, Float, Int, SearchSpace, SpaceError, describe_space, parse_space

MIXED = {"x": ("float", -1.0, 1.0), "lr": ("log", 1e-5, 1e-1), "layers": ("int", 1, 4),
         "width": ("logint", 8, 512), "act": ["relu", "tanh"],
         "dtype": {"type": "categorical", "choices": ["float", "int"]}}


def test_a_list_starting_with_a_type_name_is_refused_showing_the_tuple_and_dict_forms():
    with pytest.raises(SpaceError) as info:
        parse_space({"lr": ["log", 1e-3, 0.5]})
    message = str(info.value)
    assert "\n" not in message and "space['lr']=['log', 0.001, 0.5]" in message
    assert "('log', 0.001, 0.5)" in message and "{'type': 'log', 'low': 0.001, 'high': 0.5}" in message
    assert "{'type': 'categorical', 'choices':" in message  # how to mean choices that start with "log"


def test_the_dict_form_is_accepted_and_unknown_keys_are_refused():
    assert parse_space({"lr": {"type": "log", "low": 1e-3, "high": 0.5}}) == \
        SearchSpace.of(Float("lr", 1e-3, 0.5, log=True))
    assert parse_space({"n": {"type": "int", "low": 1, "high": 9}}).parameters == (Int("n", 1, 9),)
    assert parse_space({"c": {"type": "categorical", "choices": ["log", "int"]}}).parameters == \
        (Categorical("c", ("log", "int")),)
    for bad, match in (({"type": "log", "low": 1e-3}, "is not a parameter"),
                       ({"type": "log", "low": 1e-3, "high": 1.0, "step": 2}, "unknown key 'step'"),
                       ({"type": "categorical", "choices": []}, "non-empty list")):
        with pytest.raises(SpaceError, match=match) as info:
            parse_space({"p": bad})
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("dump, load", [(json.dumps, json.loads),
                                        (lambda d: yaml.safe_dump(d, sort_keys=False), yaml.safe_load)])
def test_describe_space_round_trips_through_json_and_yaml(dump, load):
    space = parse_space(MIXED)
    assert parse_space(load(dump(describe_space(space)))) == space


def test_tracking_false_means_off_and_true_the_default_store(tmp_path, monkeypatch):
    result = hpoflow.minimize(lambda c: c["x"] ** 2, {"x": ("float", -1.0, 1.0)}, algo="random", rounds=2,
                              tracking=False)
    assert result.run_id is None and result.uri is None and len(result.records) == 2
    with pytest.raises(hpoflow.ConfigError, match="tracking=3 is not a tracking setting"):
        hpoflow.minimize(lambda c: c["x"], {"x": ("float", -1.0, 1.0)}, algo="random", rounds=2, tracking=3)


@pytest.mark.parametrize("value", [0.5, np.float64(0.5), np.float32(0.5), np.array(0.5), np.array([0.5]),
                                   torch.tensor([0.5]), 1])
def test_tell_takes_plain_numbers_everywhere(value):
    algo = hpoflow.make_algorithm("gp_ei", {"x": ("float", -1.0, 1.0)}, rounds=4)
    for _ in range(3):
        algo.tell(algo.ask(), value)
    assert len(algo.y) == 3
    study = Study({"x": ("float", -1.0, 1.0)}, algo="random", rounds=2)
    assert study.tell(study.ask(), value).value == pytest.approx(float(np.asarray(value).reshape(())))


def test_tell_refuses_arrays_of_several_numbers():
    study = Study({"x": ("float", -1.0, 1.0)}, algo="random", rounds=2)
    with pytest.raises(TypeError, match="expected a float or an Evaluation"):
        study.tell(study.ask(), np.array([0.5, 0.6]))


def test_ask_needs_no_round_and_refuses_round_zero():
    algo = hpoflow.make_algorithm("grid", {"n": ("int", 1, 4)}, rounds=4)
    configs = [algo.ask().config["n"] for _ in range(4)]
    assert sorted(configs) == [1, 2, 3, 4]  # ask() took rounds 1..4: every cell once
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="rounds are 1-based integers"):
            algo.ask(bad)


def test_integer_bounds_accept_numpy_integers_and_integral_floats():
    expected = (Int("n", 4, 128),)
    assert parse_space({"n": ("int", np.int64(4), 128)}).parameters == expected
    assert parse_space({"n": ("int", 4, 128.0)}).parameters == expected
    assert parse_space({"n": ("int", np.float32(4.0), np.uint16(128))}).parameters == expected
    assert type(parse_space({"n": ("int", np.int64(4), 128)}).parameters[0].low) is int
    with pytest.raises(SpaceError, match="low and high must be integers"):
        parse_space({"n": ("int", 4.5, 128)})


def test_decoded_values_stay_inside_the_users_bounds():
    space = parse_space({"lr": ("log", 1e-5, 1e-1), "m": ("float", 0.1, 0.3), "w": ("log", 3e-4, 7e-2)})
    low, high = space.decode([0.0, 0.0, 0.0]), space.decode([1.0, 1.0, 1.0])
    assert low == {"lr": 1e-5, "m": 0.1, "w": 3e-4} and high == {"lr": 1e-1, "m": 0.3, "w": 7e-2}
    for u in torch.rand(200, 3, generator=torch.Generator().manual_seed(0)):
        c = space.decode(u)
        assert 1e-5 <= c["lr"] <= 1e-1 and 0.1 <= c["m"] <= 0.3 and 3e-4 <= c["w"] <= 7e-2


def test_artifacts_of_a_new_store_land_beside_it_not_in_the_working_directory(tmp_path, monkeypatch):
    from mlflow import MlflowClient

    cwd, store = tmp_path / "cwd", tmp_path / "store"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    uri = f"sqlite:///{store / 'runs.db'}"
    for experiment in ("Default", "mine"):  # MLflow's own Default experiment too
        result = hpoflow.minimize(lambda c: c["x"] ** 2, {"x": ("float", -1.0, 1.0)}, algo="random", rounds=2,
                                  tracking={"uri": uri, "experiment": experiment})
        artifacts = MlflowClient(uri).get_run(result.run_id).info.artifact_uri
        assert artifacts.startswith((store / "mlartifacts").as_uri()), artifacts
    assert list(cwd.iterdir()) == []
