"""Config of the parametric (neural-network) model f_w(x) (no torch import: composed by Hydra)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import surrogate

ACTIVATIONS = ("sigmoid", "tanh", "relu", "softplus")
OPTIMIZERS = ("sgd", "adam", "lbfgs")


@dataclass(frozen=True)
class ParametricConfig:
    """A fully connected network ``linear -> act -> ... -> linear`` and its least-squares oracle.

    The default is the GO-UCB papers' model: ``linear2(sigmoid(linear1(x)))`` with 25 hidden units.
    ``weight_decay`` (the oracle's L2 penalty; 0: plain least squares, eq. 2) and ``center_inputs`` (the net sees
    2x - 1) are off by default: for GO-UCB (with phase1_in_sigma) weight_decay=1e-3 + center_inputs left
    breast_cancer-mlp unchanged and cost go_ucb_f1 Phase II regret 6.7 in one of two seeds.
    """

    name: str = "nn"
    hidden: int = 25               # units per hidden layer
    depth: int = 1                 # number of hidden layers
    activation: str = "sigmoid"    # sigmoid | tanh | relu | softplus
    optimizer: str = "adam"        # least-squares oracle: sgd | adam | lbfgs (the paper used SGD)
    iterations: int = 2000         # full-batch steps of the oracle (the paper: 2000)
    lr: float = 0.01               # the oracle's learning rate
    restarts: int = 3              # random initialisations, fitted as one batch; the lowest training loss wins
    tol: float = 1e-5              # sgd/adam stop once the best start's MSE < tol * var(y) (0: all iterations)
    input_scale: float = 1.0       # the net sees input_scale * x for x in the unit cube (papers 003/004: 10)
    weight_decay: float = 0.0      # L2 penalty of the oracle (0: plain least squares, eq. 2)
    center_inputs: bool = False    # the net sees 2x - 1 instead of x
    prior_precision: float = 1.0   # surrogate=nn only: lambda of the linearised (Laplace) variance
    noise: float = 0.01            # surrogate=nn only: noise variance (standardised units) of that variance

    def __post_init__(self) -> None:
        if self.hidden < 1:
            raise ValueError(f"model.hidden={self.hidden} must be >= 1")
        if self.depth < 1:
            raise ValueError(f"model.depth={self.depth} must be >= 1")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"model.activation='{self.activation}' is unknown; allowed: {', '.join(ACTIVATIONS)}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"model.optimizer='{self.optimizer}' is unknown; allowed: {', '.join(OPTIMIZERS)}")
        if self.iterations < 1 or self.restarts < 1:
            raise ValueError(f"model.iterations={self.iterations} and model.restarts={self.restarts} must be >= 1")
        for key in ("lr", "prior_precision", "noise"):
            if getattr(self, key) <= 0:
                raise ValueError(f"model.{key}={getattr(self, key)} must be > 0")
        if self.tol < 0 or self.input_scale <= 0:
            raise ValueError(f"model.tol={self.tol} must be >= 0 and model.input_scale={self.input_scale} > 0")
        if self.weight_decay < 0:
            raise ValueError(f"model.weight_decay={self.weight_decay} must be >= 0")


BUILTINS = [
    surrogate("nn", "hpoflow.surrogates.parametric:build", ParametricConfig,
              "two-layer network f_w(x) with a linearised (Laplace) variance", model_class="NeuralSurrogate",
              model_provides=("Surrogate", "StandardizedSurrogate", "ConfiguredSurrogate", "NetworkSurrogate")),
]
