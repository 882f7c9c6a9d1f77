"""The power statement: A/A twins (sweep.twin) measure the smallest mean-rank difference a comparison detects."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hpoflow.report.statistics import ALPHA, POWER, block_ranks, twin_power


def _final(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """n blocks; 'good' clearly best, 'random' and its twin the same distribution."""
    rows = []
    for b in range(n):
        for algo, shift in (("good", -1.0), ("random", 0.0), ("random twin1", 0.0)):
            rows.append({"task": "t", "seed": str(b), "algo": algo, "nr": shift + rng.normal(), "failed": False})
    return pd.DataFrame(rows)


def test_the_detectable_difference_follows_the_twins_noise_and_the_strictest_holm_step():
    final = _final(400, np.random.default_rng(0))
    (tp,) = twin_power(final)
    assert (tp.original, tp.twin, tp.n_blocks, tp.methods) == ("random", "random twin1", 400, 3)
    ranks = block_ranks(final)
    d = ranks["random twin1"] - ranks["random"]
    assert tp.gap == pytest.approx(d.mean()) and tp.sd == pytest.approx(d.std(ddof=1))
    z = stats.norm.ppf(1 - ALPHA / 6) + stats.norm.ppf(POWER)  # 3 methods: 3 pairs
    assert tp.detectable == pytest.approx(z * d.std(ddof=1) / math.sqrt(400))
    assert abs(tp.gap) < tp.detectable  # one method against itself: within the noise
    # the real difference (good against random: about 0.7 mean ranks) is far above what it can detect
    assert ranks["random"].mean() - ranks["good"].mean() > 3 * tp.detectable
    assert "detects a mean-rank difference of" in tp.line() and math.isnan(tp.p_holm)


def test_four_times_the_blocks_halve_the_detectable_difference():
    small = twin_power(_final(100, np.random.default_rng(1)))[0].detectable
    large = twin_power(_final(400, np.random.default_rng(1)))[0].detectable
    assert large == pytest.approx(small / 2, rel=0.2)


def test_no_twin_no_statement():
    final = _final(10, np.random.default_rng(2))
    assert twin_power(final[final["algo"] != "random twin1"]) == []
