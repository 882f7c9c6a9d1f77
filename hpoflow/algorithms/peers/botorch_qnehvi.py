"""BoTorch's multi-objective loop: qLogNEHVI on a ModelListGP of SingleTaskGPs, maximised by ``optimize_acqf``.

As BoTorch's multi-objective tutorials do: one ``SingleTaskGP`` (``MixedSingleTaskGP`` with categoricals) per
objective and per constraint, gathered in a ``ModelListGP`` and fitted by ``fit_gpytorch_mll`` on a
``SumMarginalLogLikelihood``; the acquisition is ``qLogNoisyExpectedHypervolumeImprovement`` (Ament et al. 2023)
with the task's declared reference point (objectives negated: BoTorch maximises), the constraints through its own
``constraints=`` callables (feasible where ``c <= 0``: ``v - b`` for ``v <= b``, ``b - v`` for ``v >= b``) and an
``IdentityMCMultiOutputObjective`` picking the objective outputs. Mixed spaces use ``MixedCoordinates`` and
``optimize_acqf_mixed_alternating`` as ``botorch_logei`` does. A failed point is left out of the data.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP
from botorch.models.transforms.outcome import Standardize
from botorch.sampling.normal import SobolQMCNormalSampler
from gpytorch.mlls import SumMarginalLogLikelihood
from torch import Tensor

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.botorch_logei import MixedCoordinates, SobolThenBoTorch
from hpoflow.algorithms.peers.mo_config import BoTorchQNEHVIConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion


def _output(j: int) -> Callable[[Tensor], Tensor]:
    """The ``j``-th model output of BoTorch's samples (``... x m``): a constraint, feasible where <= 0."""
    return lambda Z: Z[..., j]


class BoTorchQNEHVI(SobolThenBoTorch):
    """Sobol initial design, then one qLogNEHVI candidate (q = 1) per round from a refitted ModelListGP."""

    name = "botorch_qnehvi"
    pending_refusal = "it proposes one point (q=1) from every earlier observation"

    def __init__(self, config: BoTorchQNEHVIConfig, ctx: BuildContext) -> None:
        super().__init__(ctx)
        spec = ctx.task.objectives
        if spec is None or len(spec.directions) < 2 or spec.reference is None:
            raise ValueError(f"algo=botorch_qnehvi needs a task with at least two objectives and a reference point; "
                             f"task '{ctx.task.name}' has "
                             f"{'one value' if spec is None else f'{len(spec.directions)} objective(s)'}"
                             f"{'' if spec is None or spec.reference is not None else ' and no reference'}: use "
                             "task=zdt1|zdt2|zdt3|dtlz2, or objectives= with reference=")
        self.spec, self.config, self.seed = spec, config, ctx.seed
        d = self.space.dim
        self.n_init = 2 * (d + 1) if config.n_init is None else config.n_init
        self.n_init = max(2, min(self.n_init, ctx.rounds // 2))
        self.coords = MixedCoordinates(self.space)
        self.sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=ctx.seed)
        ref = spec.reference_minimised()
        assert ref is not None
        self.ref_point = [-r for r in ref]  # maximised objectives
        self.X: list[Tensor] = []
        self.Y: list[list[float]] = []  # per point: negated minimised objectives, then constraint values (c <= 0)
        self.asked = 0

    def outcomes(self, values: dict[str, float]) -> list[float]:
        """The model's outputs of one evaluation: each objective to maximise, then each constraint as ``c <= 0``."""
        out = [-v for v in self.spec.minimised(values)]
        for name, (op, bound) in self.spec.constraints.items():
            v = float(values[name])
            out.append(v - bound if op in ("<=", "<") else bound - v)
        return out

    def _maximise(self, X: Tensor, Y: Tensor) -> Tensor:
        models = [self._gp(X, Y[:, j: j + 1], outcome_transform=Standardize(1)) for j in range(Y.shape[-1])]
        model = ModelListGP(*models)
        fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
        m = len(self.spec.directions)
        constraints: list[Callable[[Tensor], Tensor]] | None = [
            _output(j) for j in range(m, Y.shape[-1])] or None
        acqf = qLogNoisyExpectedHypervolumeImprovement(
            model, ref_point=self.ref_point, X_baseline=X, prune_baseline=True,
            sampler=SobolQMCNormalSampler(torch.Size([self.config.mc_samples])),
            objective=IdentityMCMultiOutputObjective(outcomes=list(range(m))), constraints=constraints)
        return self._optimise(acqf)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if isinstance(outcome, Failure) or not math.isfinite(outcome.value):
            return
        if not all(n in outcome.values for n in (*self.spec.directions, *self.spec.constraints)):
            return
        row = self.outcomes(outcome.values)
        if all(math.isfinite(v) for v in row):
            self.X.append(self.coords.to_point(suggestion.config))
            self.Y.append(row)
