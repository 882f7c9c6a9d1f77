"""Parametric model f_w(x): a small fully connected network seen as a function of a flat vector w.

GO-UCB (papers 003/004) needs, for a batch of points, the values f_x(w), the parameter gradients
grad_w f_x(w) (rows of its covariance matrix Sigma_t) and input gradients grad_x f_x(w) (for the
acquisition ascent). All three come from one template module (``torch.func.functional_call``, or its layers
applied with per-row weights) and plain ``torch.autograd`` (per-sample gradients by differentiating the summed
values with respect to per-row copies of ``w`` or to the rows of ``X``), so nothing is finite-differenced, many
(w, x) pairs are evaluated in one call, and no ``torch.func`` transform (``grad`` / ``jacrev``) runs: its first
call in a process imports ``torch._dynamo`` (~1.1 s CPU, issue 20). The least-squares oracle's descent alone is
numpy with hand-written backprop (``network_descent``: torch's per-step dispatch dominated it).
``NeuralSurrogate`` wraps the model as a regression surrogate (``surrogate=nn``) with a linearised
(Laplace / neural-linear) variance so that posterior-based acquisitions can use it too.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.func import functional_call

from hpoflow.surrogates.network_descent import NetworkLoss, descend
from hpoflow.surrogates.parametric_config import ParametricConfig

_ACTIVATIONS = {"sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "relu": nn.ReLU, "softplus": nn.Softplus}


class ParametricModel:
    """``f_w(x) = linear_{k+1}(act(... act(linear_1(x))))`` with all weights in one flat vector ``w``.

    Shapes: ``w`` is ``d_w``, ``W`` is ``s x d_w``, ``X`` is ``m x d``. With the default config
    ``d_w = 25 d + 25 + 25 + 1`` (551 for d = 20).
    """

    config: ParametricConfig
    d_w: int  # the number of weights

    def __init__(self, dim: int, config: ParametricConfig | None = None, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        self.config = config or ParametricConfig()
        self.dim, self.dtype, self.device = dim, dtype, torch.device(device)
        layers: list[nn.Module] = []
        width = dim
        for _ in range(self.config.depth):
            layers += [nn.Linear(width, self.config.hidden), _ACTIVATIONS[self.config.activation]()]
            width = self.config.hidden
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers).to(device=self.device, dtype=dtype)
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.names = [n for n, _ in self.net.named_parameters()]
        self.shapes = [p.shape for _, p in self.net.named_parameters()]
        self.sizes = [p.numel() for _, p in self.net.named_parameters()]
        self.fan_in = [p.shape[-1] if p.dim() == 2 else self.shapes[i - 1][-1]
                       for i, (_, p) in enumerate(self.net.named_parameters())]
        self.d_w = sum(self.sizes)

    # -- parameters -------------------------------------------------------------------------
    def init(self, generator: torch.Generator) -> Tensor:
        """PyTorch's default Linear initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from ``generator``."""
        parts = [(torch.rand(size, generator=generator, dtype=self.dtype) * 2 - 1) / math.sqrt(fan)
                 for size, fan in zip(self.sizes, self.fan_in)]
        return torch.cat(parts).to(self.device)

    def unflatten(self, w: Tensor) -> dict[str, Tensor]:
        return {n: chunk.reshape(s) for n, chunk, s in zip(self.names, torch.split(w, self.sizes), self.shapes)}

    def flatten(self, params: dict[str, Tensor]) -> Tensor:
        return torch.cat([params[n].reshape(-1) for n in self.names])

    # -- evaluation -------------------------------------------------------------------------
    def _inputs(self, X: Tensor) -> Tensor:
        """The net's input: ``s (2x - 1)`` with ``center_inputs`` (sigmoid units centred on the cube), else
        ``s x``, with ``s = input_scale`` (the GO-UCB paper's networks see ``[0, 10]^d``: ``s = 10``)."""
        s = self.config.input_scale
        return s * (2.0 * X - 1.0) if self.config.center_inputs else (s * X if s != 1.0 else X)

    def value(self, w: Tensor, X: Tensor) -> Tensor:
        """f_w at each row of ``X``: shape ``m``."""
        return functional_call(self.net, self.unflatten(w), (self._inputs(X),)).squeeze(-1)

    def _single(self, w: Tensor, x: Tensor) -> Tensor:
        return functional_call(self.net, self.unflatten(w), (self._inputs(x).unsqueeze(0),)).reshape(())

    def value_pairs(self, W: Tensor, X: Tensor) -> Tensor:
        """f_{W[i]}(X[i]) for paired rows: shape ``s``.

        The template's layers applied with per-row weights (one batched product per Linear layer): the same
        maths as ``vmap(functional_call)``, without its per-call overhead (~2 ms, paid 100 times a round by the
        Step 5 ascent and by every ``grad_w``).
        """
        h = self._inputs(X)
        chunks = iter(torch.split(W, self.sizes, dim=1))
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                weight = next(chunks).reshape(W.shape[0], layer.out_features, layer.in_features)
                h = torch.einsum("soi,si->so", weight, h) + next(chunks)
            else:
                h = layer(h)
        return h.squeeze(-1)

    def values(self, W: Tensor, X: Tensor) -> Tensor:
        """f_{W[r]}(X[j]) for every row ``r`` of ``W`` (``r x d_w``) and ``j`` of ``X`` (``m x d``): shape ``r x m``.

        ``vmap(value)`` over ``W`` as one batched product per Linear layer (``vmap(functional_call)`` costs ~1-2 ms a
        call in overhead): the oracle's training error of every start, and the reference its numpy descent
        (``network_descent``) is tested against.
        Not folded into ``value_pairs``: one shared einsum rounds differently there and moved a go_ucb_paper run.
        """
        h = self._inputs(X).unsqueeze(0).expand(W.shape[0], -1, -1)
        chunks = iter(torch.split(W, self.sizes, dim=1))
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                weight = next(chunks).reshape(W.shape[0], layer.out_features, layer.in_features)
                h = torch.einsum("roi,rmi->rmo", weight, h) + next(chunks).unsqueeze(1)
            else:
                h = layer(h)
        return h.squeeze(-1)

    def grad_w(self, w: Tensor, X: Tensor) -> Tensor:
        """grad_w f_x(w) for each row x of ``X``: shape ``m x d_w``.

        Row ``i`` of the values depends only on row ``i`` of ``W = [w, ..., w]``, so the gradient of their sum
        with respect to ``W`` holds the per-sample gradients. Differentiable in ``X`` (and ``w``) when those
        require grad and grad mode is on (the ``linear`` ball maximisation and ``surrogate=nn`` ascend it).
        """
        graph = torch.is_grad_enabled() and (X.requires_grad or w.requires_grad)
        with torch.enable_grad():
            W = w.unsqueeze(0).repeat(X.shape[0], 1)
            if not W.requires_grad:
                W.requires_grad_(True)
            (G,) = torch.autograd.grad(self.value_pairs(W, X).sum(), W, create_graph=graph)
        return G

    def grad_x(self, w: Tensor, X: Tensor) -> Tensor:
        """grad_x f_x(w) for each row x of ``X``: shape ``m x d`` (rows of ``X`` are independent)."""
        graph = torch.is_grad_enabled() and (X.requires_grad or w.requires_grad)
        with torch.enable_grad():
            Xg = X if X.requires_grad else X.detach().requires_grad_(True)
            (G,) = torch.autograd.grad(self.value(w, Xg).sum(), Xg, create_graph=graph)
        return G

    # -- regression oracle ------------------------------------------------------------------
    def fit(self, X: Tensor, y: Tensor, generator: torch.Generator, w0: Tensor | None = None,
            iterations: int | None = None, restarts: int | None = None,
            stall: float = 0.0) -> tuple[Tensor, float]:
        """Least squares ``argmin_w mean (f_w(x_j) - y_j)^2`` (eq. 2), best of several starts.

        The first start is ``w0`` when given (warm start), the others are fresh initialisations. The
        winner has the lowest objective actually minimised (training error plus the weight-decay
        penalty, so that with few points the smoothest interpolant wins, not an arbitrary one).
        SGD / Adam run all starts at once (one batched problem; each row's update is the one it would
        get alone) and stop early once the best start fits to within ``tol`` of the data's variance or, with
        ``stall > 0``, once its loss fell by less than that fraction over the last 50 steps (a warm-started
        refit that has stopped improving); L-BFGS runs them in turn.
        Returns the weights and their mean squared training error.
        """
        c = self.config
        iterations = iterations or c.iterations
        restarts = restarts or c.restarts
        starts = [w0 if (w0 is not None and r == 0) else self.init(generator) for r in range(restarts)]
        W0 = torch.stack([w.detach().to(self.dtype) for w in starts])
        if c.optimizer == "lbfgs":
            W = torch.stack([self._fit_lbfgs(X, y, w.clone(), iterations) for w in W0])
        else:
            W = self._fit_batched(X, y, W0.clone(), iterations, stall)
        with torch.no_grad():
            mse = ((self.values(W, X) - y) ** 2).mean(1)
        mse = torch.where(torch.isfinite(mse), mse, torch.full_like(mse, math.inf))  # a diverged start never wins
        objective = mse + c.weight_decay * (W * W).sum(1)
        best = int(torch.argmin(objective))
        return W[best], float(mse[best])

    def _loss(self, w: Tensor, X: Tensor, y: Tensor) -> Tensor:
        loss = ((self.value(w, X) - y) ** 2).mean()
        return loss + self.config.weight_decay * (w * w).sum() if self.config.weight_decay else loss

    def _fit_lbfgs(self, X: Tensor, y: Tensor, w: Tensor, iterations: int) -> Tensor:
        w.requires_grad_(True)
        opt = torch.optim.LBFGS([w], lr=self.config.lr, max_iter=iterations, line_search_fn="strong_wolfe",
                                tolerance_grad=1e-12, tolerance_change=1e-14)

        def closure() -> Tensor:
            opt.zero_grad()
            loss = self._loss(w, X, y)
            loss.backward()
            return loss

        opt.step(closure)
        return w.detach()

    def network_loss(self) -> NetworkLoss:
        """The oracle's per-row loss and gradient in numpy for this architecture and the current config."""
        layers = [(shape[0], shape[1]) for shape in self.shapes if len(shape) == 2]  # Linear weights: (out, in)
        return NetworkLoss(layers, self.config.activation, self.config.weight_decay)

    def _fit_batched(self, X: Tensor, y: Tensor, W: Tensor, iterations: int, stall: float = 0.0) -> Tensor:
        """SGD / Adam on all rows of ``W`` (``r x d_w``) at once (:func:`network_descent.descend`: numpy, by hand)."""
        c = self.config
        target = (c.tol * float(y.var()) if y.numel() > 1 else 0.0) if c.tol > 0 else None
        fitted = descend(self.network_loss(), W.detach().cpu().numpy(), self._inputs(X).detach().cpu().numpy(),
                         y.detach().cpu().numpy(), c.optimizer, c.lr, iterations, target, stall)
        return torch.from_numpy(fitted).to(device=W.device, dtype=W.dtype)


class NeuralSurrogate:
    """``surrogate=nn``: the parametric model as a regression surrogate with a linearised variance.

    Mean ``f_w(x)``; variance ``g^T A^{-1} g`` with ``g = grad_w f_x(w)`` and
    ``A = prior_precision I + G^T G / noise`` over the training gradients ``G`` (neural-linear model),
    both in standardised output units.
    """

    config: ParametricConfig
    model: ParametricModel
    X: Tensor       # n x d
    y: Tensor       # n
    y_mean: Tensor  # scalar
    y_std: Tensor   # scalar

    def __init__(self, dim: int, config: ParametricConfig | None = None, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu", seed: int = 0) -> None:
        self.config = config or ParametricConfig()
        self.model = ParametricModel(dim, self.config, dtype, device)
        self.dim, self.dtype = dim, dtype
        self.generator = torch.Generator().manual_seed(seed)
        self.X = torch.empty(0, dim, dtype=dtype)
        self.y = torch.empty(0, dtype=dtype)
        self.w: Tensor | None = None
        self.y_mean = torch.zeros((), dtype=dtype)
        self.y_std = torch.ones((), dtype=dtype)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def standardize(self, y: Tensor) -> Tensor:
        return (y - self.y_mean) / self.y_std

    def fit(self, X: Tensor, y: Tensor) -> None:
        """Replace the data and refit the weights (warm-started from the previous fit, if any)."""
        self.X, self.y = X.detach().reshape(-1, self.dim).to(self.dtype), y.detach().reshape(-1).to(self.dtype)
        if self.n >= 2:
            self.y_mean, self.y_std = self.y.mean(), self.y.std().clamp_min(1e-9)
        self.w, self.train_mse = self.model.fit(self.X, self.standardize(self.y), self.generator, w0=self.w)
        G = self.model.grad_w(self.w, self.X)
        A = self.config.prior_precision * torch.eye(self.model.d_w, dtype=self.dtype) + G.T @ G / self.config.noise
        self.A_chol = torch.linalg.cholesky(A)

    def update(self, x: Tensor, y: Tensor) -> None:
        self.fit(torch.cat([self.X, x.reshape(-1, self.dim)]), torch.cat([self.y, y.reshape(-1)]))

    def posterior(self, X: Tensor, standardized: bool = False) -> tuple[Tensor, Tensor]:
        """Mean and variance at ``X`` (``m x d``), each of shape ``m``; differentiable in ``X``."""
        if self.w is None:
            raise RuntimeError("NeuralSurrogate.posterior called before fit")
        X = X.reshape(-1, self.dim)
        mean = self.model.value(self.w, X)
        g = self.model.grad_w(self.w, X)
        v = torch.linalg.solve_triangular(self.A_chol, g.T, upper=False)
        var = (v * v).sum(0).clamp_min(1e-12)
        if standardized:
            return mean, var
        return mean * self.y_std + self.y_mean, var * self.y_std**2


def build(config: ParametricConfig, dim: int, dtype: torch.dtype, device: torch.device) -> NeuralSurrogate:
    """Registry factory."""
    return NeuralSurrogate(dim, config, dtype, device)
