"""The peer adapters (Optuna, BoTorch, Nevergrad): space mapping, failures as each library expects, the
missing-extra error, and one CLI sweep over every adapter. Skipped cleanly without ``hpoflow[peers]``."""
from __future__ import annotations

import math

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.config.settings import ConfigError, validate
from hpoflow.core.records import Direction, Evaluation, OnError
from hpoflow.core.space import Categorical, Float, Int, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.base import Task
from tests.conftest import mlflow_runs

PEERS = ("optuna_tpe", "optuna_gp", "optuna_cmaes", "optuna_random", "botorch_logei", "nevergrad_ngopt")
MIXED = SearchSpace.of(Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 4), Int("width", 8, 256, log=True),
                       Categorical("act", ("relu", "tanh", "gelu")), Float("x", -1.0, 1.0))


class MixedTask(Task):
    """A mixed space whose 'gelu' configurations fail; maximise a smooth function of the rest."""

    name, direction = "mixed", Direction.MAXIMIZE

    def __init__(self) -> None:
        self.space, self.seen = MIXED, []

    def evaluate(self, config, *, round, observe=True):
        self.seen.append(config)
        if config["act"] == "gelu":
            raise RuntimeError("gelu diverged")
        return Evaluation(-(math.log10(config["lr"]) + 2) ** 2 - (config["x"] - 0.3) ** 2 - 0.1 * config["layers"])


def _build(name: str, task: Task, rounds: int, seed: int = 0):
    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip(f"{name} needs {entry.missing()} (pip install 'hpoflow[peers]')")
    cheap = (
        {"num_restarts": 2, "raw_samples": 64, "n_init": 6} if name == "botorch_logei" else {}
    )  # smoke, not benchmark
    return entry.load()(entry.make_config(**cheap), BuildContext(task=task, rounds=rounds, seed=seed))


@pytest.mark.parametrize("name", PEERS)
def test_mixed_space_maps_to_the_library_types_and_failures_are_survived(name):
    task = MixedTask()
    algo = _build(name, task, rounds=8)
    result = run(task, algo, budget=Budget(8), on_error=OnError.SKIP)
    assert len(result.records) == 8
    for cfg in task.seen:  # every proposal is a valid configuration of the declared types
        assert 1e-4 <= cfg["lr"] <= 1e-1 and isinstance(cfg["lr"], float)
        assert cfg["layers"] in range(1, 5) and isinstance(cfg["layers"], int)
        assert 8 <= cfg["width"] <= 256 and isinstance(cfg["width"], int)
        assert cfg["act"] in ("relu", "tanh", "gelu") and -1.0 <= cfg["x"] <= 1.0
    failed = [r for r in result.records if r.failed]
    assert all(r.config["act"] == "gelu" for r in failed)
    if name.startswith("optuna"):  # Optuna is told a FAIL trial for each failure, a COMPLETE one otherwise
        from optuna.trial import TrialState

        states = [t.state for t in algo.study.trials]
        assert states.count(TrialState.FAIL) == len(failed) and states.count(TrialState.COMPLETE) == 8 - len(failed)


def test_optuna_distributions_follow_the_space():
    pytest.importorskip("optuna")
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    from hpoflow.algorithms.peers.optuna_samplers import distributions

    d = distributions(MIXED)
    assert d["lr"] == FloatDistribution(1e-4, 1e-1, log=True) and d["x"] == FloatDistribution(-1.0, 1.0)
    assert d["layers"] == IntDistribution(1, 4) and d["width"] == IntDistribution(8, 256, log=True)
    assert d["act"] == CategoricalDistribution(("relu", "tanh", "gelu"))


def test_nevergrad_parametrization_is_seeded_and_typed():
    pytest.importorskip("nevergrad")
    from hpoflow.algorithms.peers.nevergrad_ngopt import parametrization

    a, b = parametrization(MIXED, 5), parametrization(MIXED, 5)
    samples_a = [a.sample().value for _ in range(20)]
    assert samples_a == [b.sample().value for _ in range(20)]
    assert all(isinstance(s["width"], int) and 8 <= s["width"] <= 256 and s["act"] in ("relu", "tanh", "gelu")
               for s in samples_a)


def test_botorch_coordinates_round_trip_and_bounds():
    pytest.importorskip("botorch")
    from hpoflow.algorithms.peers.botorch_logei import MixedCoordinates

    c = MixedCoordinates(MIXED)
    assert c.int_dims == [1, 2] and c.cat_dims == [3]
    assert c.bounds.tolist() == [[0.0, 1.0, 8.0, 0.0, 0.0], [1.0, 4.0, 256.0, 2.0, 1.0]]
    cfg = {"lr": 1e-3, "layers": 3, "width": 64, "act": "tanh", "x": 0.5}
    x = c.to_point(cfg)
    assert x[1:4].tolist() == [3.0, 64.0, 1.0]
    back = c.to_config(x)
    assert back["layers"] == 3 and back["width"] == 64 and back["act"] == "tanh"
    assert math.isclose(back["lr"], 1e-3) and math.isclose(back["x"], 0.5)
    assert c.categories() == {3: [0.0, 1.0, 2.0]} and c.discrete_values()[1] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.integration  # the peers' own GP optimisers for real: make test, not test-fast
@pytest.mark.parametrize("name", ["botorch_logei", "optuna_gp"])
def test_model_based_peers_beat_their_initial_design_on_a_quadratic(name):
    class Bowl(Task):
        name, direction, optimum = "bowl", Direction.MINIMIZE, 0.0
        space = SearchSpace.of(Float("a", -2.0, 2.0), Float("b", -2.0, 2.0))

        def evaluate(self, config, *, round, observe=True):
            return Evaluation((config["a"] - 0.7) ** 2 + (config["b"] + 0.4) ** 2)

    task = Bowl()
    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip("needs hpoflow[peers]")
    config = entry.make_config(n_init=4) if name == "botorch_logei" else entry.make_config(n_startup_trials=4)
    result = run(task, entry.load()(config, BuildContext(task=task, rounds=14, seed=1)), budget=Budget(14))
    values = [r.value for r in result.records]
    assert min(values[4:]) < 0.5 * min(values[:4]) and min(values) < 0.05


def test_missing_extra_is_a_config_error_naming_the_install():
    registry.register("algorithm", "needs_missing_lib", "no_such_module:Algo", type(registry.get("algorithm", "random")
                      .make_config()), requires=("hpoflow_no_such_module",), extra="peers")
    try:
        with pytest.raises(ConfigError, match=r"algo=needs_missing_lib needs 'hpoflow_no_such_module'.*"
                                              r"pip install 'hpoflow\[peers\]'"):
            validate({"algo": {"name": "needs_missing_lib"}, "surrogate": {"name": "gp"}, "task": {"name": "branin"}})
    finally:
        registry._REGISTRY["algorithm"].pop("needs_missing_lib")


def test_cli_without_the_extra_lists_the_peer_and_fails_in_one_line(run_cli, store, tmp_path):
    (tmp_path / "no_optuna.py").write_text(  # the CLI as it runs where Optuna is not installed
        "import runpy, sys\nsys.modules['optuna'] = None\nsys.argv[0] = 'hpoflow'\n"
        "runpy.run_module('hpoflow', run_name='__main__', alter_sys=True)\n")
    assert "optuna_tpe" in run_cli("--help", module="no_optuna").stdout
    proc = run_cli("algo=optuna_tpe", "task=branin", f"tracking.uri={store}", module="no_optuna", check=False)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("Error: algo=optuna_tpe needs 'optuna'") and "pip install 'hpoflow[peers]'" in lines[0]
    assert not mlflow_runs(store)


def test_every_peer_runs_through_the_cli_into_mlflow(run_cli, store):
    for module in ("optuna", "botorch", "nevergrad", "cmaes"):
        pytest.importorskip(module)
    run_cli("-m", f"algo={','.join(PEERS)}", "task=branin", "budget.rounds=4", f"tracking.uri={store}")
    runs = mlflow_runs(store, "branin")
    assert sorted(r.data.tags["algo"] for r in runs) == sorted(PEERS)
    for r in runs:
        assert r.info.status == "FINISHED" and r.data.metrics["query_cost"] == 4
        assert math.isfinite(r.data.metrics["simple_regret"]) and "decision_time" in r.data.metrics


def test_peers_are_deterministic_given_the_seed_and_differ_across_seeds():
    pytest.importorskip("optuna")

    def trajectory(seed: int) -> list[dict]:
        task = MixedTask()
        run(task, _build("optuna_tpe", task, rounds=12, seed=seed), budget=Budget(12), on_error=OnError.SKIP)
        return task.seen

    assert trajectory(3) == trajectory(3) and trajectory(3) != trajectory(4)


@pytest.mark.parametrize("name", PEERS)
def test_interrupted_then_resumed_peer_run_equals_uninterrupted(tmp_path, name):
    """Resume replays the history into a fresh adapter (asks again, tells the recorded outcomes): exact when the
    library is deterministic given the seed, which each adapter ensures."""
    from hpoflow.core.checkpoint import Checkpointer, load
    from hpoflow.core.hardware import seed_everything
    from tests.core.test_checkpoint import Noisy, _trajectory

    def fresh(task: Task):
        return _build(name, task, rounds=8, seed=2)

    seed_everything(3)
    task = Noisy()
    reference = run(task, fresh(task), None, Budget(8))
    seed_everything(3)
    task = Noisy(interrupt_at=6)
    with pytest.raises(KeyboardInterrupt):
        run(task, fresh(task), None, Budget(8), checkpoint=Checkpointer(tmp_path / "ck.json"))
    seed_everything(3)
    task = Noisy()
    resumed = run(task, fresh(task), None, Budget(8), resume=load(tmp_path / "ck.json"))
    assert _trajectory(resumed.records) == _trajectory(reference.records)
