"""scripts/go_ucb_gap.py: its error measures on hand-made cases and one short run of each method's probes."""
from __future__ import annotations

import numpy as np
import pytest

from scripts import go_ucb_gap as gap


def test_errors_perfect_mean_and_reversed_predictions():
    f = np.array([1.0, 2.0, 3.0, 4.0])
    assert gap.errors(f, f) == {"rho": pytest.approx(1.0), "nrmse": pytest.approx(0.0)}
    assert gap.errors(np.full(4, f.mean()) + 1e-9 * f, f)["nrmse"] == pytest.approx(1.0)   # the mean: NRMSE 1
    assert gap.errors(-f, f)["rho"] == pytest.approx(-1.0)


def test_a_short_run_records_checkpoints_ascent_and_behaviour(monkeypatch):
    monkeypatch.setattr(gap, "T", 11)
    monkeypatch.setattr(gap, "CHECKPOINTS", (8, 10))
    monkeypatch.setattr(gap, "HELD_OUT", 32)
    go = gap.run_one("go_ucb", "rastrigin", 0)
    assert set(go["checkpoints"]) == {"8", "10"} and len(go["values"]) == 11
    for key in ("own_global", "own_local", "other_global", "other_local"):
        assert -1.0 <= go["checkpoints"]["8"][key]["rho"] <= 1.0 and go["checkpoints"]["8"][key]["nrmse"] >= 0
    assert len(go["rounds"]) == 3 and all("true_gain" in r and "ball_radius" in r for r in go["rounds"])
    assert go["d_w"] == 25 * 20 + 25 + 25 + 1
    assert go["cumulative"] == pytest.approx(sum(v - 0.0 for v in go["values"]))   # Rastrigin's optimum is 0
    gp = gap.run_one("gp_pi", "rastrigin", 0)
    assert set(gp["checkpoints"]) == {"8", "10"} and 0.0 <= gp["improving_share"] <= 1.0
