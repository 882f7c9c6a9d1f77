"""BoTorch's documented BO loop: SingleTaskGP + LogExpectedImprovement, maximised by ``optimize_acqf``.

The space maps to BoTorch's mixed-space conventions: real parameters live on ``[0, 1]`` (log scale where
declared), integers are discrete dimensions with their own values, categoricals are categorical dimensions
(category index). Without categoricals the model is ``SingleTaskGP``; with them ``MixedSingleTaskGP``
(its categorical kernel). Without discrete dimensions the acquisition is maximised by ``optimize_acqf``,
otherwise by ``optimize_acqf_mixed_alternating``. BoTorch has no notion of a failed evaluation: a failed
point is left out of the training data. Random draws are seeded per round (``botorch.utils.sampling.manual_seed``)
so that the same seed gives the same trajectory.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import MixedSingleTaskGP, SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.optim import optimize_acqf, optimize_acqf_mixed_alternating
from botorch.utils.sampling import manual_seed
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.base import PeerAlgorithm
from hpoflow.algorithms.peers.configs import BoTorchConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.core.space import Float, Int, SearchSpace


class MixedCoordinates:
    """A configuration <-> BoTorch's point (shape ``d``): reals on [0, 1], integers as values, categories as indices."""

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        self.int_dims = [i for i, p in enumerate(space.parameters) if isinstance(p, Int)]
        self.cat_dims = [i for i, p in enumerate(space.parameters) if not isinstance(p, (Float, Int))]
        lows = [float(p.low) if isinstance(p, Int) else 0.0 for p in space.parameters]
        highs = [float(p.high) if isinstance(p, Int) else 1.0 if isinstance(p, Float) else p.cardinality - 1.0
                 for p in space.parameters]
        self.bounds = torch.tensor([lows, highs], dtype=torch.float64)  # 2 x d

    def discrete_values(self) -> dict[int, list[float]]:
        return {i: [float(v) for v in range(int(self.bounds[0, i]), int(self.bounds[1, i]) + 1)]
                for i in self.int_dims}

    def categories(self) -> dict[int, list[float]]:
        return {i: [float(v) for v in range(int(self.bounds[1, i]) + 1)] for i in self.cat_dims}

    def to_point(self, config: dict[str, Any]) -> Tensor:
        out = []
        for p in self.space.parameters:
            v = config[p.name]
            out.append(p.encode(v) if isinstance(p, Float) else float(v) if isinstance(p, Int)
                       else float(p.choices.index(v)))
        return torch.tensor(out, dtype=torch.float64)

    def to_config(self, x: Tensor) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, v, lo, hi in zip(self.space.parameters, x.tolist(), self.bounds[0].tolist(), self.bounds[1].tolist()):
            v = min(hi, max(lo, v))
            out[p.name] = p.decode(v) if isinstance(p, Float) else round(v) if isinstance(p, Int) \
                else p.choices[round(v)]
        return out


class SobolThenBoTorch(PeerAlgorithm):
    """What botorch_logei and botorch_qnehvi share: ``n_init`` Sobol points, then one candidate per round that the
    subclass's ``_maximise(X, Y)`` takes from a BoTorch model refitted on the successful evaluations (``X``:
    points, ``n x d``; ``Y``: rewards, ``n`` or ``n x m``), over ``coords`` (mixed spaces for BoTorch's mixed
    optimiser)."""

    config: Any     # num_restarts, raw_samples: the acquisition optimiser's settings
    coords: MixedCoordinates
    sobol: torch.quasirandom.SobolEngine
    n_init: int
    seed: int
    asked: int
    X: list[Tensor]
    Y: list[Any]

    def ask(self, round: int) -> Suggestion:
        self.asked += 1
        if self.asked <= self.n_init or len(self.Y) < 2:
            u = self.sobol.draw(1, dtype=torch.float64)[0]
            return self.suggestion(self.space.decode(u))
        with manual_seed(self.seed * 1_000_003 + round), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BoTorch's input/optimisation warnings on tiny data sets
            candidate = self._maximise(torch.stack(self.X), torch.tensor(self.Y, dtype=torch.float64))
        return self.suggestion(self.coords.to_config(candidate))

    def _maximise(self, X: Tensor, Y: Tensor) -> Tensor:
        raise NotImplementedError

    def _gp(self, X: Tensor, y: Tensor, **kwargs: Any) -> SingleTaskGP:
        """A GP of one output column ``y`` (``n x 1``): MixedSingleTaskGP with categoricals, integers normalised."""
        c = self.coords
        discrete = c.int_dims
        transform = Normalize(X.shape[-1], indices=discrete, bounds=c.bounds[:, discrete]) if discrete else None
        if c.cat_dims:
            return MixedSingleTaskGP(X, y, cat_dims=c.cat_dims, input_transform=transform, **kwargs)
        return SingleTaskGP(X, y, input_transform=transform, **kwargs)

    def _optimise(self, acqf: Any) -> Tensor:
        """The acquisition's maximiser (one point, ``d``): the mixed alternating optimiser on integer/categorical
        spaces, ``optimize_acqf`` on continuous ones."""
        c, cfg = self.coords, self.config
        if c.int_dims or c.cat_dims:
            cand, _ = optimize_acqf_mixed_alternating(
                acqf, bounds=c.bounds, discrete_dims=c.discrete_values() or None, cat_dims=c.categories() or None,
                num_restarts=cfg.num_restarts, raw_samples=cfg.raw_samples)
        else:
            cand, _ = optimize_acqf(acqf, bounds=c.bounds, q=1, num_restarts=cfg.num_restarts,
                                    raw_samples=cfg.raw_samples)
        return cand[0].detach()


class BoTorchLogEI(SobolThenBoTorch):
    """Sobol initial design, then one LogEI candidate per round from a GP refitted on every observation."""

    name = "botorch_logei"
    pending_refusal = "its analytic LogEI proposes one point (q=1) from every earlier observation"

    def __init__(self, config: BoTorchConfig, ctx: BuildContext) -> None:
        super().__init__(ctx)
        self.config, self.seed = config, ctx.seed
        d = self.space.dim
        self.n_init = max(2, min(d + 1, ctx.rounds // 2)) if config.n_init is None else config.n_init
        self.coords = MixedCoordinates(self.space)
        self.sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=ctx.seed)
        self.X: list[Tensor] = []   # BoTorch points of the successful evaluations
        self.Y: list[float] = []    # their values as rewards (larger is better)
        self.asked = 0

    def _maximise(self, X: Tensor, y: Tensor) -> Tensor:
        Y = y.unsqueeze(-1)
        model = self._gp(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return self._optimise(LogExpectedImprovement(model, best_f=Y.max()))

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if isinstance(outcome, Failure) or not math.isfinite(outcome.value):
            return  # BoTorch has no failed-trial notion: the point is left out of the model
        self.X.append(self.coords.to_point(suggestion.config))
        self.Y.append(-self.loss(outcome))
