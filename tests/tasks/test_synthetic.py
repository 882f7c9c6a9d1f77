import numpy as np
import pytest

from hpoflow.tasks import synthetic as syn


@pytest.mark.parametrize("fn,x,expected", [
    (syn.branin, np.array([np.pi, 2.275]), 0.39788735772973816),
    (syn.branin, np.array([-np.pi, 12.275]), 0.39788735772973816),
    (syn.styblinski_tang, np.full(4, -2.903534), -39.16616570377142 * 4),
    (syn.rastrigin, np.zeros(5), 0.0),
    (syn.hartmann6, np.array([0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]), -3.32237),
])
def test_known_optima(fn, x, expected):
    assert fn(x) == pytest.approx(expected, abs=1e-4)


def test_go_ucb_f1_is_the_all_ones_network():
    x = np.linspace(-1, 1, 20)
    assert syn.go_ucb_f1(x) == pytest.approx(25 / (1 + np.exp(-(x.sum() + 1))) + 1)
    task = syn.make_go_ucb_f1(20)
    assert task.optimum == pytest.approx(26.0) and task.direction.value == "maximize"


def test_task_optimum_is_below_random_values_and_noise_is_seeded():
    task = syn.make_styblinski_tang(dim=3, noise_std=0.5, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(200):
        cfg = {f"x{i}": v for i, v in enumerate(rng.uniform(-5, 5, 3))}
        ev = task.evaluate(cfg, round=1)
        assert ev.true_value >= task.optimum - 1e-9
    a = syn.make_branin(noise_std=1.0, seed=1).evaluate({"x0": 1.0, "x1": 2.0}, round=1)
    b = syn.make_branin(noise_std=1.0, seed=1).evaluate({"x0": 1.0, "x1": 2.0}, round=1)
    assert a.value == b.value != a.true_value


def test_custom_box_recomputes_the_optimum_and_rejects_inverted_bounds():
    assert syn.make_styblinski_tang(dim=2, low=0.0, high=1.0).optimum == pytest.approx(-10.0)
    with pytest.raises(ValueError, match="task.low=3.0 must be < task.high=1.0"):
        syn.make_rastrigin(dim=2, low=3.0, high=1.0)


def test_unobserved_evaluation_costs_nothing_but_reports_truth():
    ev = syn.make_branin().evaluate({"x0": 0.0, "x1": 0.0}, round=1, observe=False)
    assert np.isnan(ev.value) and ev.cost == 0.0 and ev.true_value == pytest.approx(syn.branin(np.zeros(2)))
