"""Constrained acquisition (hpoflow.algorithms.constrained, GP-EI/PI/ParEGO): the probability of feasibility against
scipy by hand, the best-feasible incumbent rule, PoF alone before any feasible point, and runs that end feasible."""
from __future__ import annotations

import math

import pytest
import torch
from scipy.stats import norm

import hpoflow
from hpoflow.acquisition.functions import log_probability_of_feasibility
from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPEIConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.core.objectives import Objectives, ParetoBook
from hpoflow.core.records import Evaluation, Suggestion
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.constrained import make_gramacy

D = torch.float64


def test_log_pof_is_the_normal_cdf_by_hand():
    mean, var = torch.tensor([0.0, 1.0, -2.0], dtype=D), torch.tensor([1.0, 4.0, 0.25], dtype=D)
    # P(c <= 0.5) = Phi((0.5 - mu) / sigma); P(c >= 0.5) = Phi((mu - 0.5) / sigma)
    below = [norm.cdf((0.5 - 0.0) / 1.0), norm.cdf((0.5 - 1.0) / 2.0), norm.cdf((0.5 + 2.0) / 0.5)]
    above = [1 - p for p in below]
    assert log_probability_of_feasibility(mean, var, "<=", 0.5).exp().tolist() == pytest.approx(below, rel=1e-12)
    assert log_probability_of_feasibility(mean, var, ">=", 0.5).exp().tolist() == pytest.approx(above, rel=1e-12)
    assert log_probability_of_feasibility(mean, var, "<", 0.5).tolist() == pytest.approx(
        [math.log(p) for p in below])
    far = log_probability_of_feasibility(torch.tensor([40.0], dtype=D), torch.tensor([1.0], dtype=D), "<=", 0.0)
    assert float(far) == pytest.approx(norm.logcdf(-40.0), rel=1e-9)  # finite far in the tail (log_ndtr)
    with pytest.raises(ValueError, match="constraint op '=' is unknown"):
        log_probability_of_feasibility(mean, var, "=", 0.0)


def _gp_ei(spec: Objectives, points: list[tuple[float, dict[str, float]]]) -> GPEI:
    """A GP-EI on a 1-d task with ``spec``, told ``(x, values)`` pairs (value = values["f"])."""
    space = hpoflow.core.space.SearchSpace((hpoflow.core.space.Float("x", 0.0, 1.0),))

    class Fake(hpoflow.Task):
        name = "fake"

        def __init__(self) -> None:
            self.space, self.objectives = space, spec

        def evaluate(self, config, *, round, observe=True):  # pragma: no cover - never called
            raise AssertionError

    task = Fake()
    algo = GPEI(GPEIConfig(n_init=2), BuildContext(task, rounds=10, seed=0, surrogate=lambda d: ExactGP(d)))
    for x, values in points:
        s = Suggestion({"x": x}, torch.tensor([x], dtype=D))
        algo.tell(s, Evaluation(value=values["f"], values=values))
    return algo


SPEC = Objectives({"f": "min"}, {"c": ("<=", 0.0)})


def test_incumbent_is_the_best_feasible_reward():
    # the lowest f (0.1 at x = 0.2) is infeasible; the best feasible f is 0.5 (reward -0.5)
    algo = _gp_ei(SPEC, [(0.2, {"f": 0.1, "c": 1.0}), (0.5, {"f": 0.5, "c": -1.0}), (0.9, {"f": 0.9, "c": -2.0})])
    assert algo.constraints is not None and algo.constraints.feasible() == [False, True, True]
    assert float(algo.incumbent()) == pytest.approx(float(algo.model.standardize(torch.tensor(-0.5, dtype=D))))
    assert algo.best_index() == 1
    unconstrained = _gp_ei(Objectives({"f": "min"}), [(0.2, {"f": 0.1}), (0.5, {"f": 0.5})])
    assert unconstrained.constraints is None and unconstrained.best_index() == 0


def test_before_any_feasible_point_the_acquisition_is_the_probability_of_feasibility():
    algo = _gp_ei(SPEC, [(0.1, {"f": 0.1, "c": 2.0}), (0.5, {"f": 0.5, "c": 1.0}), (0.9, {"f": 0.9, "c": 0.5})])
    assert float(algo.incumbent()) == -math.inf
    fn, info = algo.constrain(*algo.acquisition(4))
    X = torch.linspace(0, 1, 7, dtype=D).reshape(-1, 1)
    assert info["n_feasible"] == 0.0
    assert fn(X).tolist() == pytest.approx(algo.constraints.log_pof(X).tolist())  # type: ignore[union-attr]
    # the proposal climbs the PoF: far more likely feasible than any point seen (all infeasible; c falls with x)
    x = algo._propose(4).x.reshape(1, -1)
    pof = algo.constraints.log_pof  # type: ignore[union-attr]  # (the models _propose refitted)
    seen = torch.tensor([[0.1], [0.5], [0.9]], dtype=D)
    assert float(pof(x)) > float(pof(seen).max()) + 1.0 and float(x[0, 0]) > 0.5


def test_with_a_feasible_point_the_acquisition_is_log_ei_plus_log_pof():
    algo = _gp_ei(SPEC, [(0.1, {"f": 0.1, "c": 2.0}), (0.5, {"f": 0.5, "c": -1.0}), (0.9, {"f": 0.9, "c": -3.0})])
    ei, _ = algo.acquisition(4)
    fn, info = algo.constrain(ei, {})
    X = torch.linspace(0, 1, 5, dtype=D).reshape(-1, 1)
    assert info["n_feasible"] == 2.0
    assert fn(X).tolist() == pytest.approx((ei(X) + algo.constraints.log_pof(X)).tolist())  # type: ignore[union-attr]


def test_a_failed_point_is_infeasible_and_left_out_of_the_constraint_gps():
    algo = _gp_ei(SPEC, [(0.1, {"f": 0.1, "c": -1.0}), (0.5, {"f": 0.5, "c": -1.0})])
    s = Suggestion({"x": 0.9}, torch.tensor([0.9], dtype=D))
    algo.tell(s, Evaluation(value=math.nan))
    assert algo.constraints.feasible() == [True, True, False]  # type: ignore[union-attr]
    algo.constraints.fit(torch.stack(algo.X))  # type: ignore[union-attr]
    assert algo.constraints.models[0].n == 2  # type: ignore[union-attr]


def test_pareto_book_logs_the_best_feasible_value_of_one_objective():
    book = ParetoBook(Objectives({"acc": "max"}, {"mem": ("<=", 5.0)}))
    assert book.add({"acc": 0.9, "mem": 9.0}) == {"feasible": 0.0}  # nothing feasible yet: no best_feasible
    assert book.add({"acc": 0.7, "mem": 4.0}) == {"feasible": 1.0, "best_feasible": 0.7}
    assert book.add({"acc": 0.8, "mem": 5.0}) == {"feasible": 1.0, "best_feasible": 0.8}
    assert book.add({"acc": 0.75, "mem": 1.0})["best_feasible"] == 0.8
    assert book.summary() == {"pareto_size": 1.0, "best_feasible": 0.8}


def test_gp_ei_ends_feasible_near_the_constrained_optimum_where_the_unconstrained_one_is_infeasible():
    r = hpoflow.minimize(lambda c: make_gramacy().evaluate(c, round=0).values,
                         {"x1": ("float", 0.0, 1.0), "x2": ("float", 0.0, 1.0)}, algo="gp_ei", rounds=25, seed=0,
                         objectives={"f": "min"}, constraints={"c1": ("<=", 0.0), "c2": ("<=", 0.0)})
    # the loosest of seeds 0-4 at 25 rounds: 0.606 (the constrained optimum 0.5998; random search's median 0.79)
    assert r.metrics[-1]["best_feasible"] < 0.65
    assert min(rec.value for rec in r.records) < 0.5  # the best value seen is infeasible: the constraint bites


def test_cli_runs_gp_ei_on_the_constrained_task(run_cli, tmp_path):
    # the command of the user text (docs: constraints on the GP methods)
    proc = run_cli("algo=gp_ei", "task=gramacy", "budget.rounds=15", f"tracking.uri=sqlite:///{tmp_path}/m.db")
    assert "best feasible value: " in proc.stdout and "best feasible config: {'x1': " in proc.stdout
    assert "best value:" not in proc.stdout  # the infeasible best is not printed


def test_parego_weighs_its_scalarised_ei_by_the_probability_of_feasibility():
    def fn(c):  # a convex front along y = 0; x above 0.5 is infeasible
        return {"f1": c["x"] + c["y"], "f2": (1 - c["x"]) + c["y"], "m": c["x"]}

    r = hpoflow.minimize(fn, {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}, algo="parego", rounds=16,
                         seed=0, objectives={"f1": "min", "f2": "min"}, constraints={"m": ("<=", 0.5)})
    guided = [m for m in r.metrics if m.get("phase") == 1.0]
    assert guided and all("n_feasible" in m for m in guided)
    # seeds 0-2: all 13 guided points feasible (random search: half of them)
    assert sum(m["feasible"] for m in r.metrics[-8:]) >= 7
    assert all(p["values"]["m"] <= 0.5 for p in r.pareto)


def test_a_resumed_constrained_gp_ei_run_equals_an_uninterrupted_one(tmp_path):
    from hpoflow.tasks.constrained import gramacy

    space = {"x1": ("float", 0.0, 1.0), "x2": ("float", 0.0, 1.0)}
    kwargs = dict(algo="gp_ei", rounds=9, seed=2, objectives={"f": "min"},
                  constraints={"c1": ("<=", 0.0), "c2": ("<=", 0.0)})
    whole = hpoflow.minimize(lambda c: gramacy(c["x1"], c["x2"]), space, **kwargs)
    calls = []

    def stops(c):
        calls.append(1)
        if len(calls) == 6:
            raise KeyboardInterrupt
        return gramacy(c["x1"], c["x2"])

    checkpoint = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):
        hpoflow.minimize(stops, space, checkpoint=checkpoint, name="g", **kwargs)
    resumed = hpoflow.minimize(lambda c: gramacy(c["x1"], c["x2"]), space, checkpoint=checkpoint, name="g", **kwargs)
    assert [r.config for r in resumed.records] == [r.config for r in whole.records]  # the constraint GPs replayed
    assert resumed.metrics[-1]["best_feasible"] == whole.metrics[-1]["best_feasible"]
