"""task=gramacy (hpoflow.tasks.constrained): the formula, the declared constraints, the known constrained optimum."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from hpoflow.tasks.constrained import GRAMACY_ARGMIN, GRAMACY_OPTIMUM, gramacy, make_gramacy


def test_values_and_declared_constraints():
    task = make_gramacy()
    ev = task.evaluate({"x1": 0.5, "x2": 0.25}, round=1)
    # c1 = 1.5 - 0.5 - 0.5 - 0.5 sin(2 pi (0.25 - 0.5)) = 0.5 - 0.5 sin(-pi/2) = 1.0; c2 = 0.3125 - 1.5
    assert ev.value == 0.75 and ev.values == pytest.approx({"f": 0.75, "c1": 1.0, "c2": -1.1875})
    assert task.objectives is not None and task.objectives.constraints == {"c1": ("<=", 0.0), "c2": ("<=", 0.0)}
    assert not task.objectives.feasible(gramacy(0.0, 0.0))  # the unconstrained minimum (f = 0) is infeasible
    assert task.reference_values() == {"constrained_optimum": GRAMACY_OPTIMUM}


def test_the_constrained_optimum_is_the_papers_and_feasible():
    values = gramacy(*GRAMACY_ARGMIN)
    assert values["f"] == pytest.approx(0.5998, abs=1e-4)  # Gramacy et al. (2016), Sec. 4.1
    assert values["c1"] <= 1e-7 and values["c2"] <= 0
    # no feasible point of a fine grid is better, and SLSQP from the grid's best feasible point returns to it
    g = np.linspace(0, 1, 801)
    X1, X2 = np.meshgrid(g, g)
    c1 = 1.5 - X1 - 2 * X2 - 0.5 * np.sin(2 * np.pi * (X1**2 - 2 * X2))
    ok = (c1 <= 0) & (X1**2 + X2**2 <= 1.5)
    assert (X1 + X2)[ok].min() >= GRAMACY_OPTIMUM - 1e-9
    i = np.argmin(np.where(ok, X1 + X2, np.inf))
    res = minimize(lambda x: x[0] + x[1], [X1.flat[i], X2.flat[i]], method="SLSQP", bounds=[(0, 1)] * 2,
                   constraints=[{"type": "ineq", "fun": lambda x: -gramacy(*x)["c1"]},
                                {"type": "ineq", "fun": lambda x: -gramacy(*x)["c2"]}])
    assert res.fun == pytest.approx(GRAMACY_OPTIMUM, abs=1e-6)
