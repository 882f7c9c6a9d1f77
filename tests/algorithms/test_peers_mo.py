"""Multi-objective peers through their own interfaces: Optuna NSGA-II / MOTPE (constraints via
Trial.set_constraint) and BoTorch qLogNEHVI (constraints=); skipped where the `peers` extra is absent."""
from __future__ import annotations

import math

import pytest

import hpoflow
from hpoflow.config.settings import ConfigError
from hpoflow.core.objectives import Objectives

SPACE = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}
SPEC = {"objectives": {"f1": "min", "f2": "min"}, "constraints": {"m": ("<=", 0.8)}, "reference": [1.1, 2.2]}


def zdt1_like(c):
    g = 1 + c["y"]
    return {"f1": c["x"], "f2": g * (1 - math.sqrt(c["x"] / g)), "m": c["x"]}


def test_optuna_constraint_convention_by_hand():
    pytest.importorskip("optuna")
    from hpoflow.algorithms.peers.optuna_mo import constraint_values

    spec = Objectives({"f": "min"}, {"a": ("<=", 2.0), "b": (">=", 1.0)})
    assert constraint_values(spec, {"a": 3.0, "b": 4.0}) == {"a": 1.0, "b": -3.0}  # a violated by 1, b met
    assert constraint_values(spec, {"a": math.nan}) == {"a": math.inf, "b": math.inf}


@pytest.mark.parametrize("algo", ["optuna_nsga2", "optuna_motpe"])
def test_optuna_multi_objective_samplers_get_directions_values_and_constraints(algo):
    pytest.importorskip("optuna")
    settings = {"population_size": 4} if algo == "optuna_nsga2" else {"n_startup_trials": 4}
    r = hpoflow.minimize(zdt1_like, SPACE, algo=algo, rounds=12, seed=0, **SPEC, **settings)
    assert r.pareto and all(p["values"]["m"] <= 0.8 for p in r.pareto)
    assert r.summary["hypervolume"] > 0 and len(r.records) == 12


def test_optuna_study_is_told_raw_values_and_constraints():
    pytest.importorskip("optuna")
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.algorithms.peers.mo_config import OptunaMOTPEConfig
    from hpoflow.algorithms.peers.optuna_mo import OptunaMOTPE
    from hpoflow.api import function_task
    from hpoflow.core.records import Evaluation

    task = function_task(lambda c: {"acc": c["x"], "t": c["y"], "m": c["x"]}, SPACE, "minimize", None, None, None,
                         ({"acc": "max", "t": "min"}, {"m": ("<=", 0.5)}, None))
    algo = OptunaMOTPE(OptunaMOTPEConfig(), BuildContext(task, rounds=3, seed=0))
    s = algo.ask(1)
    algo.tell(s, Evaluation(value=-0.7, values={"acc": 0.7, "t": 0.2, "m": 0.7}))
    trial = algo.study.trials[0]
    assert [d.name for d in algo.study.directions] == ["MAXIMIZE", "MINIMIZE"]
    assert trial.values == [0.7, 0.2] and trial.constraints == pytest.approx({"m": 0.2})  # m - 0.5 > 0: infeasible


def test_multi_objective_peers_refuse_a_single_valued_task():
    pytest.importorskip("optuna")
    with pytest.raises(ConfigError, match="algo=optuna_nsga2 needs a task with objectives"):
        hpoflow.minimize(lambda c: c["x"], SPACE, algo="optuna_nsga2", rounds=2)


def test_botorch_qnehvi_outcomes_and_a_short_run():
    pytest.importorskip("botorch")
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.algorithms.peers.botorch_qnehvi import BoTorchQNEHVI
    from hpoflow.algorithms.peers.mo_config import BoTorchQNEHVIConfig
    from hpoflow.api import function_task

    task = function_task(zdt1_like, SPACE, "minimize", None, None, None,
                         (SPEC["objectives"], SPEC["constraints"], SPEC["reference"]))
    algo = BoTorchQNEHVI(BoTorchQNEHVIConfig(), BuildContext(task, rounds=8, seed=0))
    assert algo.ref_point == [-1.1, -2.2] and algo.n_init == 4  # 2 (d + 1) = 6, at most rounds // 2
    assert algo.outcomes({"f1": 0.5, "f2": 0.25, "m": 0.9}) == pytest.approx([-0.5, -0.25, 0.9 - 0.8])
    r = hpoflow.minimize(zdt1_like, SPACE, algo="botorch_qnehvi", rounds=7, seed=0, **SPEC,
                         raw_samples=32, num_restarts=2, mc_samples=16)
    assert len(r.records) == 7 and r.pareto and r.summary["hypervolume"] > 0


def test_botorch_qnehvi_refuses_one_objective():
    pytest.importorskip("botorch")
    with pytest.raises(ConfigError, match="algo=botorch_qnehvi needs a task with at least two objectives"):
        hpoflow.minimize(lambda c: {"f": c["x"]}, SPACE, algo="botorch_qnehvi", rounds=2, objectives={"f": "min"})


def test_cli_motpe_on_zdt1(run_cli, tmp_path):
    pytest.importorskip("optuna")
    # the command of the user text (docs: multi-objective peers)
    proc = run_cli("algo=optuna_motpe", "task=zdt1", "budget.rounds=20", f"tracking.uri=sqlite:///{tmp_path}/m.db")
    assert "pareto front: " in proc.stdout and "hypervolume: " in proc.stdout
