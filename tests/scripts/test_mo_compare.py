"""scripts/mo_compare.py: Holm's correction, normalised hypervolume and regret against the known or the best front."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scripts.mo_compare import holm, normalised_hv, regrets


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.02), max(0.04, 1 x 0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.6]) == [1.0, 1.0]


def test_normalised_hypervolume_by_hand():
    # (1, 1) in the box [0, 2]^2 -> (0.5, 0.5): a quarter of the unit square
    assert normalised_hv(np.array([[1.0, 1.0]]), np.zeros(2), np.array([2.0, 2.0])) == pytest.approx(0.25)
    assert normalised_hv(np.zeros((0, 2)), np.zeros(2), np.ones(2)) == 0.0


def test_regret_against_the_true_front_and_against_the_best_front_of_all_methods():
    ref = [1.1, 1.1]
    rows = [{"task": "dtlz2", "seed": 0, "method": m, "points": pts, "feasible": [True] * len(pts), "reference": ref}
            for m, pts in (("parego", [[1.0, 0.0], [0.0, 1.0]]), ("random", [[1.0, 1.0]]))]
    reg = regrets(rows)[("dtlz2", 0)]
    best = (1.21 - math.pi / 4) / 1.21  # DTLZ2's front (the quarter circle) in the box [0, 1.1]^2
    assert reg["parego"] == pytest.approx(best - 2 * 0.1 * 1.1 / 1.21 + 0.01 / 1.21)
    assert reg["random"] == pytest.approx(best - 0.01 / 1.21)
    # a classifier: the ideal is the best of each objective over all methods, the best front theirs together
    rows = [{"task": "breast_cancer_gb", "seed": 1, "method": m, "points": pts, "feasible": [True] * len(pts),
             "reference": [0.0, 10.0]} for m, pts in (("parego", [[-1.0, 5.0]]), ("random", [[-0.5, 0.0]]))]
    reg = regrets(rows)[("breast_cancer_gb", 1)]
    # box: ideal (-1, 0), reference (0, 10); parego's point (0, 0.5), random's (0.5, 0); together 0.5 + 0.5 - 0.25
    assert reg["parego"] == pytest.approx(0.75 - 0.5) and reg["random"] == pytest.approx(0.75 - 0.5)


def test_the_classifier_rows_are_dataset_and_model_with_accuracy_against_size():
    from scripts.mo_compare import CLASSIFIERS, MO_TASKS, make_task

    assert set(CLASSIFIERS) <= set(MO_TASKS)
    task = make_task("wine_gb", 0)
    assert (task.dataset, task.model) == ("wine", "gb")
    assert task.objectives.names == ["accuracy", "size"] and task.objectives.signs() == [-1.0, 1.0]
