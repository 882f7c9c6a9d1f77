"""GO-UCB's confidence ellipsoid from its gradient rows: solve and the symmetric inverse root against dense algebra."""
from __future__ import annotations

import pytest
import torch

from hpoflow.algorithms.go_ucb_ellipsoid import ConfidenceEllipsoid

D = torch.float64


def _ball(rows: int, d_w: int = 9, lam: float = 0.7, seed: int = 0) -> ConfidenceEllipsoid:
    ball = ConfidenceEllipsoid(lam, d_w, D)
    ball.reset(torch.randn(rows, d_w, generator=torch.Generator().manual_seed(seed), dtype=D))
    return ball


@pytest.mark.parametrize("rows", [0, 1, 4, 9, 15])  # none, fewer rows than weights, square, more rows
def test_solve_and_whiten_match_the_dense_matrix(rows):
    ball = _ball(rows)
    Sigma = ball.matrix
    rhs = torch.randn(9, generator=torch.Generator().manual_seed(1), dtype=D)
    assert torch.allclose(ball.solve(rhs), torch.linalg.solve(Sigma, rhs), rtol=1e-10, atol=1e-12)
    A = ball.whiten(torch.eye(9, dtype=D))  # the root itself: symmetric, A A = Sigma^{-1}
    assert torch.allclose(A, A.T, atol=1e-13)
    assert torch.allclose(A @ A, torch.linalg.inv(Sigma), rtol=1e-10, atol=1e-12)
    # ||A g|| is the Sigma^{-1} norm of g: the linearised UCB's width does not depend on which root is used
    g = torch.randn(3, 9, generator=torch.Generator().manual_seed(2), dtype=D)
    width = (g @ torch.linalg.solve(Sigma, g.T)).diagonal()
    assert torch.allclose((ball.whiten(g) ** 2).sum(1), width, rtol=1e-10)


def test_unit_ball_in_z_is_the_ellipsoid_in_w():
    ball, beta = _ball(4), 2.3
    Z = torch.randn(50, 9, generator=torch.Generator().manual_seed(3), dtype=D)
    Z = Z / Z.norm(dim=1, keepdim=True)
    W = beta**0.5 * ball.whiten(Z)  # w - w_t for ||z|| = 1
    assert torch.allclose(((W @ ball.matrix) * W).sum(1), torch.full((50,), beta, dtype=D))


def test_add_is_the_rank_one_update_and_refactorises():
    ball = _ball(3)
    before = ball.solve(torch.ones(9, dtype=D))  # factorised for 3 rows
    g = torch.arange(9, dtype=D) / 9
    dense = ball.matrix + torch.outer(g, g)
    ball.add(g)
    assert ball.H.shape == (4, 9) and torch.allclose(ball.matrix, dense)
    after = ball.solve(torch.ones(9, dtype=D))
    assert not torch.allclose(before, after)
    assert torch.allclose(after, torch.linalg.solve(dense, torch.ones(9, dtype=D)), rtol=1e-10)
    ball.reset()
    assert torch.allclose(ball.solve(torch.ones(9, dtype=D)), torch.full((9,), 1 / 0.7, dtype=D))


def test_rank_deficient_rows_still_give_the_exact_root():
    g = torch.randn(9, generator=torch.Generator().manual_seed(4), dtype=D)
    ball = ConfidenceEllipsoid(0.5, 9, D)
    ball.reset(torch.stack([g, g, 2 * g]))  # rank 1: two singular values are (numerically) zero
    A = ball.whiten(torch.eye(9, dtype=D))
    assert torch.allclose(A @ A, torch.linalg.inv(ball.matrix), rtol=1e-10, atol=1e-12)
