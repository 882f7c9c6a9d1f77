"""SMAC3 as a peer (algo=smac_hpo): space mapping, failures told as SMAC's crashed trials, seeding, a quadratic
it must improve on, and one CLI run into MLflow. Skipped cleanly without ``hpoflow[peers]`` (smac)."""
from __future__ import annotations

import pytest

pytest.importorskip("smac")

from ConfigSpace import Categorical as CSCategorical  # noqa: E402
from ConfigSpace import Float as CSFloat  # noqa: E402
from ConfigSpace import Integer as CSInteger  # noqa: E402
from smac.runhistory.enumerations import StatusType  # noqa: E402

from hpoflow.algorithms.base import BuildContext  # noqa: E402
from hpoflow.algorithms.peers.configspace import configuration_space, to_config  # noqa: E402
from hpoflow.config import registry  # noqa: E402
from hpoflow.config.settings import ConfigError, validate  # noqa: E402
from hpoflow.core.records import Direction, Evaluation, OnError  # noqa: E402
from hpoflow.core.space import Categorical, Float, SearchSpace  # noqa: E402
from hpoflow.runner.loop import Budget, run  # noqa: E402
from hpoflow.tasks.base import Task  # noqa: E402
from tests.algorithms.test_peers import MIXED, MixedTask  # noqa: E402
from tests.conftest import mlflow_runs  # noqa: E402


def _smac(task: Task, rounds: int, seed: int = 0, **settings):
    entry = registry.get("algorithm", "smac_hpo")
    return entry.load()(entry.make_config(**settings), BuildContext(task=task, rounds=rounds, seed=seed))


def test_space_maps_to_configspace_types_and_back():
    cs = configuration_space(MIXED, seed=0)
    assert cs["lr"] == CSFloat("lr", (1e-4, 1e-1), log=True) and cs["x"] == CSFloat("x", (-1.0, 1.0))
    assert cs["layers"] == CSInteger("layers", (1, 4)) and cs["width"] == CSInteger("width", (8, 256), log=True)
    assert cs["act"] == CSCategorical("act", [0, 1, 2])   # positions, so any Python value can be a choice
    space = SearchSpace.of(Categorical("flag", (True, None, "sqrt")))
    got = {to_config(space, c)["flag"] for c in configuration_space(space, 1).sample_configuration(30)}
    assert got == {True, None, "sqrt"}


def test_mixed_space_proposals_are_typed_and_failures_are_crashed_trials():
    task = MixedTask()
    algo = _smac(task, rounds=12)
    result = run(task, algo, budget=Budget(12), on_error=OnError.SKIP)
    assert len(result.records) == 12
    for cfg in task.seen:
        assert 1e-4 <= cfg["lr"] <= 1e-1 and isinstance(cfg["lr"], float)
        assert cfg["layers"] in range(1, 5) and isinstance(cfg["layers"], int)
        assert 8 <= cfg["width"] <= 256 and isinstance(cfg["width"], int)
        assert cfg["act"] in ("relu", "tanh", "gelu") and -1.0 <= cfg["x"] <= 1.0
    failed = sum(r.failed for r in result.records)
    statuses = [v.status for v in algo.smac.runhistory.values()]
    assert statuses.count(StatusType.CRASHED) == failed and statuses.count(StatusType.SUCCESS) == 12 - failed
    # a maximised value is told as its negative cost
    ok = [r for r in result.records if not r.failed]
    costs = sorted(v.cost for v in algo.smac.runhistory.values() if v.status == StatusType.SUCCESS)
    assert costs == pytest.approx(sorted(-r.value for r in ok))


class Bowl(Task):
    name, direction, optimum = "bowl", Direction.MINIMIZE, 0.0
    space = SearchSpace.of(Float("a", -2.0, 2.0), Float("b", -2.0, 2.0))

    def evaluate(self, config, *, round, observe=True):
        return Evaluation((config["a"] - 0.7) ** 2 + (config["b"] + 0.4) ** 2)


def _values(seed: int, facade: str, rounds: int = 20) -> list[float]:
    return [r.value for r in run(Bowl(), _smac(Bowl(), rounds, seed, n_init=5, facade=facade),
                                 budget=Budget(rounds)).records]


@pytest.mark.integration  # SMAC's own optimiser for 12-20 rounds: make test, not test-fast
def test_same_seed_same_trajectory_and_the_forest_proposes_better_points_than_its_sobol_design():
    a = _values(3, "hpo")
    assert a == _values(3, "hpo")
    # SMAC's HPO facade interleaves random configurations and its forest exploits slowly on a smooth bowl:
    # what it must do is propose better points than its initial design does, in the median
    assert sorted(a[10:])[5] < 0.5 * sorted(a[:5])[2]


@pytest.mark.integration  # SMAC's own optimiser for 12-20 rounds: make test, not test-fast
def test_the_gp_facade_finds_the_bowls_minimum():
    # 16 rounds, not 12: SMAC's GP facade is not bit-reproducible across BLAS thread counts and runs (seed 0 after
    # 12 rounds: 0.056, 0.033 or 0.005; CI failed once at 0.055); after 16 rounds every seed 0-2 was below 1e-4
    assert min(_values(0, "blackbox", 16)) < 0.05


def test_unknown_facade_is_a_config_error_naming_the_allowed():
    with pytest.raises(ConfigError, match=r"algo.facade='rf' is not a SMAC facade; allowed: hpo, blackbox"):
        validate({"algo": {"name": "smac_hpo", "facade": "rf"}, "surrogate": {"name": "gp"},
                  "task": {"name": "branin"}})


@pytest.mark.cli
def test_smac_runs_through_the_cli_into_mlflow(run_cli, store):
    run_cli("algo=smac_hpo", "task=branin", "budget.rounds=5", f"tracking.uri={store}")
    runs = mlflow_runs(store)
    assert len(runs) == 1 and runs[0].info.status == "FINISHED" and runs[0].data.tags["algo"] == "smac_hpo"
