"""GO-UCB's confidence ellipsoid ``Sigma_t = lam I + H^T H`` kept as its gradient rows ``H`` (``r x d_w``).

Why not the dense matrix: Phase II has ``r <= T`` rows and the network ``d_w`` weights, typically ``r << d_w``
(Styblinski-Tang-20: ``r <= 64``, ``d_w = 551``). From the thin SVD ``H = U S V^T`` (``V``: ``d_w x k``,
``k = min(r, d_w)``), ``Sigma^{-1} = (I - V diag(s^2 / (lam + s^2)) V^T) / lam`` and the symmetric inverse root
``A = Sigma^{-1/2} = (I + V diag(sqrt(lam / (lam + s^2)) - 1) V^T) / sqrt(lam)`` cost ``O(d_w r)`` a vector, where
a Cholesky factor and its inverse cost ``O(d_w^3)`` once and ``O(d_w^2)`` a vector. Any ``A`` with
``A A^T = Sigma^{-1}`` whitens the ball (``w = w_t + sqrt(beta) A z``, ``||z|| <= 1``); the symmetric one needs
no triangular factor. Written by hand: torch / scipy offer no "identity plus low rank" operator with a root.
"""
from __future__ import annotations

import torch
from torch import Tensor


class ConfidenceEllipsoid:
    """``Sigma = lam I + H^T H`` (``d_w x d_w``) from the rows ``g_i`` of ``H``; factorised lazily on first use."""

    def __init__(self, lam: float, d_w: int, dtype: torch.dtype) -> None:
        self.lam, self.d_w, self.dtype = float(lam), d_w, dtype
        self.H = torch.zeros(0, d_w, dtype=dtype)
        self._factors: tuple[Tensor, Tensor, Tensor] | None = None

    def reset(self, H: Tensor | None = None) -> None:
        """Start again from ``lam I`` (+ ``H^T H`` for rows ``H``, ``r x d_w``)."""
        self.H = torch.zeros(0, self.d_w, dtype=self.dtype) if H is None else H.to(self.dtype).clone()
        self._factors = None

    def add(self, g: Tensor) -> None:
        """The rank-one update ``Sigma += g g^T`` (``g``: ``d_w``)."""
        self.H = torch.cat([self.H, g.reshape(1, -1).to(self.dtype)])
        self._factors = None

    @property
    def matrix(self) -> Tensor:
        """The dense ``Sigma`` (``d_w x d_w``), for checks and diagnostics only (``O(d_w^2 r)``)."""
        return self.lam * torch.eye(self.d_w, dtype=self.dtype) + self.H.T @ self.H

    def _factor(self) -> tuple[Tensor, Tensor, Tensor]:
        """``V`` (``d_w x k``), ``s^2 / (lam + s^2)`` and ``sqrt(lam / (lam + s^2)) - 1`` (``k`` each)."""
        if self._factors is None:
            if len(self.H):
                _, s, Vh = torch.linalg.svd(self.H, full_matrices=False)
                V, s2 = Vh.T, s * s
            else:
                V, s2 = torch.zeros(self.d_w, 0, dtype=self.dtype), torch.zeros(0, dtype=self.dtype)
            self._factors = V, s2 / (self.lam + s2), torch.sqrt(self.lam / (self.lam + s2)) - 1.0
        return self._factors

    def solve(self, rhs: Tensor) -> Tensor:
        """``Sigma^{-1} rhs`` (``rhs``: ``d_w``)."""
        V, shrink, _ = self._factor()
        return (rhs - V @ (shrink * (V.T @ rhs))) / self.lam

    def whiten(self, M: Tensor) -> Tensor:
        """``M A`` for the rows of ``M`` (``k x d_w``), ``A = Sigma^{-1/2}`` symmetric: maps ``z`` to ``w - w_t`` (up to
        ``sqrt(beta)``), a gradient in ``w`` to one in ``z``, and ``g`` to ``A g`` with ``||A g|| =
        ||g||_{Sigma^-1}``."""
        V, _, coef = self._factor()
        return (M + ((M @ V) * coef) @ V.T) / self.lam**0.5
