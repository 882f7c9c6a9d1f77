"""A robust output transform for the GP: Yeo-Johnson's power transform, fitted to the observed outputs.

HEBO's recipe (Cowen-Rivers et al., 2022, sec. 4.1): heavy-tailed or skewed outputs (BBOB's ill-conditioned
functions span orders of magnitude within one run) break a stationary GP's Gaussian likelihood; a monotone power
transform chosen by maximum likelihood makes them closer to normal before the usual standardisation. Here ``y`` is
first scaled to zero mean and unit spread (the transform is not shift or scale invariant), then
``T_lambda`` (Yeo & Johnson, 2000) with ``lambda`` from ``scipy.stats.yeojohnson_normmax``. The transform is
strictly increasing for every ``lambda``, so the best point and every improvement keep their order.

Hand-written inverse: scipy has the forward map and the fit, not the inverse (the kriging believer reports its
posterior mean in ``y``'s units).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

LAMBDA_RANGE = (-3.0, 5.0)  # keeps (lambda t + 1)^(1 / lambda) finite over any standardised range seen in practice
MIN_POINTS = 3  # a power fitted to fewer points is noise: the identity until then


class YeoJohnson:
    """``t = T_lambda((y - shift) / scale)``, elementwise; ``y`` of any shape."""

    def __init__(self, shift: float = 0.0, scale: float = 1.0, lmbda: float = 1.0) -> None:
        self.shift, self.scale, self.lmbda = shift, scale, lmbda

    @classmethod
    def fit(cls, y: Tensor) -> YeoJohnson:
        """The transform that makes ``y`` (``n``) most nearly normal (the identity map, scaled, for n < 3 or no
        spread)."""
        values = y.detach().cpu().double().numpy().reshape(-1)
        if values.size < MIN_POINTS or not np.ptp(values) > 0:
            return cls()
        shift, scale = float(values.mean()), float(values.std(ddof=1))
        from scipy import stats  # here: scipy.stats costs ~0.3 CPU s to import, and a run's first points need no fit

        with np.errstate(all="ignore"):
            lmbda = float(stats.yeojohnson_normmax((values - shift) / scale))
        if not math.isfinite(lmbda):
            lmbda = 1.0
        return cls(shift, scale, min(max(lmbda, LAMBDA_RANGE[0]), LAMBDA_RANGE[1]))

    def __call__(self, y: Tensor) -> Tensor:
        x = (y - self.shift) / self.scale
        lam = self.lmbda
        pos = x >= 0
        xp, xn = x.clamp_min(0.0), x.clamp_max(0.0)
        tp = torch.log1p(xp) if abs(lam) < 1e-12 else ((1 + xp) ** lam - 1) / lam
        tn = -torch.log1p(-xn) if abs(lam - 2) < 1e-12 else -((1 - xn) ** (2 - lam) - 1) / (2 - lam)
        return torch.where(pos, tp, tn)

    def inverse(self, t: Tensor) -> Tensor:
        """``y`` with ``T(y) = t``; ``t`` beyond the transform's range maps to the range's end (a huge ``y``)."""
        lam, tiny = self.lmbda, 1e-12
        tp, tn = t.clamp_min(0.0), t.clamp_max(0.0)
        if abs(lam) < 1e-12:
            xp = torch.expm1(tp)
        else:
            xp = (lam * tp + 1).clamp_min(tiny) ** (1 / lam) - 1
        if abs(lam - 2) < 1e-12:
            xn = -torch.expm1(-tn)
        else:
            xn = 1 - (1 - (2 - lam) * tn).clamp_min(tiny) ** (1 / (2 - lam))
        return torch.where(t >= 0, xp, xn) * self.scale + self.shift

    def derivative(self, y: Tensor) -> Tensor:
        """``dT/dy`` at ``y`` (positive): the delta method's factor for a variance in ``y``'s units."""
        x = (y - self.shift) / self.scale
        lam = self.lmbda
        return torch.where(x >= 0, (1 + x.clamp_min(0.0)) ** (lam - 1),
                           (1 - x.clamp_max(0.0)) ** (1 - lam)) / self.scale
