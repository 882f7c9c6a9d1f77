"""task=branin_mf|hartmann6_mf: the augmented functions' values, fidelity bias, and continued-trial costs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.tasks.multi_fidelity import (
    BRANIN_OPTIMUM,
    HARTMANN6_OPTIMUM,
    augmented_branin,
    augmented_hartmann6,
    make_branin_mf,
    make_hartmann6_mf,
)
from hpoflow.tasks.synthetic import branin, hartmann6
from hpoflow.tasks.trial_states import TrialStates

BRANIN_MINIMISERS = [(-math.pi, 12.275), (math.pi, 2.275), (9.42478, 2.475)]
HARTMANN6_MINIMISER = np.array([0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573])


def test_full_fidelity_is_the_plain_function_with_its_known_optimum():
    rng = np.random.default_rng(0)
    for x in rng.uniform([-5, 0], [10, 15], size=(20, 2)):
        assert augmented_branin(x, 1.0) == pytest.approx(branin(x))
    for x in rng.uniform(0, 1, size=(20, 6)):
        assert augmented_hartmann6(x, 1.0) == pytest.approx(hartmann6(x))
    for x in BRANIN_MINIMISERS:
        assert augmented_branin(np.array(x), 1.0) == pytest.approx(BRANIN_OPTIMUM, abs=1e-5)
    assert augmented_hartmann6(HARTMANN6_MINIMISER, 1.0) == pytest.approx(HARTMANN6_OPTIMUM, abs=1e-5)


def test_the_fidelity_bias_is_the_documented_coefficient_shift():
    x = np.array([2.0, 3.0])
    # d/ds of the b coefficient is 0.1: the low-fidelity value differs as the formula says
    b1, b0 = 5.1 / (4 * math.pi**2), 5.1 / (4 * math.pi**2) - 0.1
    inner = lambda b: (3.0 - b * 4.0 + 5 / math.pi * 2.0 - 6) ** 2
    assert augmented_branin(x, 0.0) - augmented_branin(x, 1.0) == pytest.approx(inner(b0) - inner(b1))
    # Hartmann-6 at s=0: alpha_1 = 0.9, so the minimiser's value rises by 0.1 * exp(-inner_1)
    assert augmented_hartmann6(HARTMANN6_MINIMISER, 0.0) > HARTMANN6_OPTIMUM


def test_continuing_a_trial_costs_only_the_new_levels_and_truth_is_full_fidelity():
    task = make_hartmann6_mf(max_resource=27)
    config = dict(zip(task.space.names, HARTMANN6_MINIMISER.tolist()))
    costs = [task.evaluate_at(config, fidelity=r, config_id=5, round=i).cost for i, r in enumerate((1, 3, 9, 27))]
    assert costs == [1, 2, 6, 18]
    ev = task.evaluate_at(config, fidelity=3, config_id=6, round=5)
    assert ev.value == pytest.approx(augmented_hartmann6(HARTMANN6_MINIMISER, 3 / 27))
    assert ev.true_value == pytest.approx(HARTMANN6_OPTIMUM, abs=1e-5) and ev.fidelity == 3
    assert task.evaluate_at(config, fidelity=9, config_id=None, round=6).cost == 9  # no id: from scratch
    assert task.evaluate(config, round=7).cost == 27 and task.evaluate(config, round=7).fidelity == 27


def test_a_level_outside_the_range_is_refused():
    task = make_branin_mf()
    with pytest.raises(ValueError, match="outside the fidelity's range"):
        task.evaluate_at({"x0": 0.0, "x1": 0.0}, fidelity=500, config_id=1, round=1)


def test_trial_states_drop_the_least_recently_used():
    states = TrialStates(capacity=2)
    states.put(1, "a")
    states.put(2, "b")
    assert states.get(1) == "a"  # 1 is now the most recent
    states.put(3, "c")
    assert states.get(2) is None and states.get(1) == "a" and len(states) == 2
    states.put(None, "x")
    assert states.get(None) is None


def test_trial_states_live_beside_the_checkpoint_and_a_resumed_task_continues_them(tmp_path):
    """The process after a crash (a new task object, resumed after round 2) continues config 5 from level 3: it pays
    6 units for 3 -> 9, not 9; a state it does not know about (config 6, round 3 > 2, at another level) is
    retrained from scratch."""
    config = {"x0": 1.0, "x1": 2.0}
    first = make_branin_mf(max_resource=27, noise_std=0.1, seed=4)
    first.set_state_folder(tmp_path, 0)
    costs = [first.evaluate_at(config, fidelity=r, config_id=5, round=i).cost for i, r in ((1, 1), (2, 3))]
    first.evaluate_at(config, fidelity=3, config_id=6, round=3)  # lost with the crash
    assert costs == [1, 2] and sorted(p.name[:20] for p in tmp_path.iterdir()) == [
        "config_0005_r0000001", "config_0005_r0000002", "config_0006_r0000003"]  # nothing committed: both of 5
    again = make_branin_mf(max_resource=27, noise_std=0.1, seed=4)
    again.set_state_folder(tmp_path, 2)
    ev = again.evaluate_at(config, fidelity=9, config_id=5, round=4)
    assert ev.cost == 6 and ev.true_value == pytest.approx(augmented_branin(np.array([1.0, 2.0]), 1.0))
    assert again.evaluate_at(config, fidelity=9, config_id=6, round=5).cost == 9
