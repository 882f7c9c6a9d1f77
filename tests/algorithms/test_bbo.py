"""bbo_ei / bbo_ucb: EI formula, posterior-mean incumbent, the paper's beta_t, returned points, CLI smoke."""
from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from mlflow.tracking import MlflowClient

from hpoflow.acquisition import functions as acq
from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.bbo import BBOEI, BBOUCB, expected_improvement_min, paper_beta
from hpoflow.algorithms.bbo_config import BBOConfig
from hpoflow.core.records import Direction, Evaluation, Suggestion
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.base import Task
from tests.conftest import mlflow_runs


class Quadratic(Task):
    """(x - 0.3)^2 plus seeded noise; says how many 'SGD steps' it runs, like a training task."""

    name = "quadratic"
    direction = Direction.MINIMIZE

    def __init__(self, noise: float = 0.0, inner_steps: int | None = 100) -> None:
        self.space = SearchSpace.of(Float("x", 0.0, 1.0))
        self.noise, self.inner_steps = noise, inner_steps
        self.gen = torch.Generator().manual_seed(0)

    def resolve_inner_steps(self, steps: int) -> None:
        self.inner_steps = steps

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        eps = self.noise * float(torch.randn(1, generator=self.gen))
        return Evaluation(value=(config["x"] - 0.3) ** 2 + eps, cost=float(self.inner_steps),
                          metrics={"test_loss": 10.0 * round})


def _ctx(task: Task, rounds: int = 8, gp: GPConfig | None = None) -> BuildContext:
    return BuildContext(task=task, rounds=rounds, seed=1, surrogate=lambda d: ExactGP(d, gp or GPConfig()))


def _tell(algo, xs: list[float], ys: list[float]) -> None:
    for x, y in zip(xs, ys):
        algo.tell(Suggestion({"x": x}, torch.tensor([x], dtype=torch.float64)), Evaluation(value=y))


# -- EI ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mean,var,incumbent", [(0.0, 1.0, 0.0), (1.0, 0.25, 0.3), (-0.5, 2.0, 0.7), (1.25, 0.01, 1.3)])
def test_minimisation_ei_matches_monte_carlo(mean, var, incumbent):
    g = torch.Generator().manual_seed(0)
    samples = mean + math.sqrt(var) * torch.randn(400_000, generator=g, dtype=torch.float64)
    mc = (incumbent - samples).clamp_min(0).mean()
    se = (incumbent - samples).clamp_min(0).std() / math.sqrt(samples.numel())
    ei = expected_improvement_min(torch.tensor([mean], dtype=torch.float64), torch.tensor([var], dtype=torch.float64),
                                  incumbent)
    assert abs(float(ei) - float(mc)) < 4 * float(se) + 1e-9


def test_ei_is_zero_without_variance_above_the_incumbent_and_the_gap_below():
    ei = expected_improvement_min(
        torch.tensor([2.0, 0.5], dtype=torch.float64), torch.zeros(2, dtype=torch.float64), 1.0
    )
    assert ei.tolist() == [0.0, 0.5]


def _noisy_case():
    """A lucky low draw at x=0.8 among high neighbours: best observed y is there, the posterior mean is not."""
    task = Quadratic()
    gp = GPConfig(fit="fixed", lengthscale=0.15, noise=0.5)
    algo = BBOEI(BBOConfig(name="bbo_ei"), _ctx(task, gp=gp))
    xs = [0.20, 0.25, 0.30, 0.35, 0.72, 0.80, 0.88]
    ys = [1.00, 0.95, 1.02, 0.98, 2.00, 0.50, 2.10]
    _tell(algo, xs, ys)
    return algo, xs, ys


def test_incumbent_is_the_best_posterior_mean_not_the_best_observation():
    algo, xs, ys = _noisy_case()
    X = torch.tensor(xs, dtype=torch.float64).reshape(-1, 1)
    mean_loss, _ = algo.model.posterior(X)          # reward units (reward = -loss)
    mu_plus = float((-mean_loss).min())
    _, info = algo.acquisition(len(xs) + 1)
    assert info["incumbent"] == pytest.approx(mu_plus, rel=1e-9)
    assert info["best_observed"] == pytest.approx(min(ys))
    assert info["incumbent"] > min(ys) + 0.2        # the noisy 0.50 is not trusted
    assert int((-mean_loss).argmin()) != ys.index(min(ys))


def test_acquisition_is_log_of_the_minimisation_ei_with_that_incumbent():
    algo, xs, _ = _noisy_case()
    fn, info = algo.acquisition(len(xs) + 1)
    grid = torch.linspace(0, 1, 11, dtype=torch.float64).reshape(-1, 1)
    mean, var = algo.model.posterior(grid)
    ei_loss_units = expected_improvement_min(-mean, var, info["incumbent"])
    # the algorithm works in standardised reward units: EI scales by y_std
    expected = torch.log(ei_loss_units / algo.model.y_std)
    assert torch.allclose(fn(grid), expected, atol=1e-6)


def test_returned_point_is_the_posterior_mean_argmin_and_logs_its_observed_value():
    algo, xs, ys = _noisy_case()
    s = algo.ask(len(xs) + 1)
    cands = torch.tensor([*xs, float(s.x[0])], dtype=torch.float64).reshape(-1, 1)
    i = int(algo.model.posterior(cands)[0].argmax())  # max reward mean = min loss mean
    assert s.info["returned_index"] == i + 1
    assert s.info["returned_x"] == pytest.approx(float(cands[i, 0]))
    algo.tell(s, Evaluation(value=0.7, metrics={"test_loss": 3.0}))
    observed = [*ys, 0.7]
    assert s.info["returned_value"] == pytest.approx(observed[i])
    assert s.info["returned_value"] != min(observed)


# -- UCB -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "t,N,B,sigma,c", [(1, 100, 1.0, 1.0, 1.0), (20, 3000, 2.0, 0.5, 0.3), (60, 6000, 0.0, 0.1, 2.0)]
)
def test_paper_beta_matches_the_formula(t, N, B, sigma, c):
    expected = math.sqrt(B**2 + sigma ** -2 * t * (c * math.log(N)) ** 2 / N)
    assert paper_beta(t, N, B, sigma, c) == pytest.approx(expected, rel=1e-12)


def test_ucb_uses_the_tasks_inner_steps_and_multiplies_sigma_by_beta():
    task = Quadratic(inner_steps=400)
    algo = BBOUCB(BBOConfig(name="bbo_ucb", B=1.5, noise_sigma=0.7, phi_c=0.5), _ctx(task))
    _tell(algo, [0.1, 0.5, 0.9], [0.04, 0.04, 0.36])
    fn, info = algo.acquisition(7)
    beta = math.sqrt(1.5**2 + 7 * (0.5 * math.log(400)) ** 2 / (0.7**2 * 400))
    assert info["beta"] == pytest.approx(beta)
    X = torch.rand(5, 1, dtype=torch.float64)
    mean, var = algo.model.posterior(X, standardized=True)
    assert torch.allclose(fn(X), mean + beta * var.sqrt())     # reward UCB = -(loss LCB)


def test_srinivas_and_constant_schedules():
    task = Quadratic()
    sri = BBOUCB(BBOConfig(name="bbo_ucb", beta_schedule="srinivas", delta=0.1), _ctx(task))
    assert sri.beta_t(9) == pytest.approx(math.sqrt(acq.srinivas_beta(9, 1, 0.1)))
    const = BBOUCB(BBOConfig(name="bbo_ucb", beta_schedule="constant", beta=1.7), _ctx(task))
    assert const.beta_t(9) == 1.7
    assert paper_beta(50, 100) < sri.beta_t(50)   # the paper's beta grows slower than Srinivas'


def test_auto_inner_steps_is_steps_per_round_times_rounds():
    task = Quadratic(inner_steps=None)
    algo = BBOUCB(BBOConfig(name="bbo_ucb", steps_per_round=7), _ctx(task, rounds=6))
    assert task.inner_steps == 42 and algo.n_inner == 42


@pytest.mark.parametrize("cls,returned", [(BBOEI, "mean"), (BBOUCB, "queried")])
def test_loop_logs_the_returned_points_observed_value(cls, returned):
    task = Quadratic(noise=0.05)
    algo = cls(BBOConfig(name=cls.name, returned=returned), _ctx(task, rounds=6))
    result = run(task, algo, budget=Budget(6))
    values = [r.value for r in result.records]
    for t, m in enumerate(result.metrics):
        i = int(m["returned_index"]) - 1
        assert i <= t and m["returned_value"] == pytest.approx(values[i])
        assert m["returned_test_loss"] == pytest.approx(10.0 * (i + 1))
        if returned == "queried":
            assert i == t
    assert result.metrics[-1]["query_cost"] == 600


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="algo.beta_schedule='fast'"):
        BBOConfig(beta_schedule="fast")
    with pytest.raises(ValueError, match="algo.noise_sigma=0"):
        BBOConfig(noise_sigma=0)


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_bbo_ucb_counts_sgd_steps_as_query_cost(run_cli, store):
    run_cli("algo=bbo_ucb", "task=digits_cnn", "budget.rounds=3", "task.inner_steps=50", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "digits_cnn")
    assert run.info.status == "FINISHED"
    history = MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "query_cost")
    last = max(history, key=lambda m: m.step)
    assert (last.step, last.value) == (3, 150)
    for key in ("returned_value", "returned_lr", "test_loss", "test_accuracy", "value"):
        assert key in run.data.metrics, key


def test_cli_auto_inner_steps(run_cli, store):
    run_cli("algo=bbo_ei", "task=digits_mlp", "budget.rounds=3", "task.inner_steps=auto", "algo.steps_per_round=4",
            f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "digits_mlp")
    assert run.data.metrics["query_cost"] == 3 * 12 and run.data.metrics["inner_steps"] == 12
