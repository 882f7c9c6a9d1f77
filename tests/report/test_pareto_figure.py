"""The Pareto figure's grey reference front: found points (in whatever order the runs gave them) are drawn as the
staircase they dominate, not joined in list order (which drew a triangle across the plot)."""
from __future__ import annotations

import numpy as np

from hpoflow.report import pareto_figures


def _grey_lines(monkeypatch, tmp_path, reference: np.ndarray, label: str, signs: np.ndarray) -> list[np.ndarray]:
    seen = {}
    monkeypatch.setattr(pareto_figures, "_finish", lambda fig, title, out, stem: seen.setdefault("fig", fig) and [])
    front = {"parego": np.array([[-0.97, 40.0]])}
    pareto_figures.plot_pareto("t", ["accuracy", "size"], signs, front, front, reference, label, tmp_path)
    ax = seen["fig"].axes[0]
    return [np.asarray(line.get_xydata()) for line in ax.get_lines() if line.get_label() == label]


def test_a_found_front_is_drawn_as_a_monotone_staircase(monkeypatch, tmp_path):
    found = np.array([[-0.97, 40.0], [-0.627, 20.0], [-0.98, 130.0]])  # minimisation form, unsorted
    (xy,) = _grey_lines(monkeypatch, tmp_path, found, "best front found", np.array([-1.0, 1.0]))  # max acc, min size
    # raw units: the boundary of what the points dominate (less accurate, larger), from (0.98, 130) down to
    # (0.627, 20), each step along one axis only, with the corners (0.97, 130) and (0.627, 40)
    assert np.all(np.diff(xy[:, 0]) <= 0) and np.all(np.diff(xy[:, 1]) <= 0)
    assert np.all((np.diff(xy, axis=0) == 0).any(axis=1))
    assert sorted(map(tuple, xy.tolist())) == sorted([(0.98, 130.0), (0.97, 130.0), (0.97, 40.0), (0.627, 40.0),
                                                      (0.627, 20.0)])


def test_a_known_front_is_drawn_as_a_curve_in_order(monkeypatch, tmp_path):
    t = np.linspace(0, 1, 5)
    known = np.column_stack([t, 1 - np.sqrt(t)])[[3, 0, 4, 1, 2]]  # ZDT1's front, shuffled
    (xy,) = _grey_lines(monkeypatch, tmp_path, known, "known front", np.ones(2))
    assert len(xy) == 5 and np.all(np.diff(xy[:, 0]) > 0)  # no corners added, sorted along f1
