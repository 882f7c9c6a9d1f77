"""Many small MLPs of one depth and batch size trained at once: one batched matmul per layer for all of them.

A configuration here is LCBench's (Zimmer, Lindauer and Hutter, "Auto-PyTorch Tabular: Multi-Fidelity
MetaLearning for Efficient and Robust AutoDL", 2021): batch size, learning rate, momentum, weight decay, number of
layers, max units, max dropout; trained by SGD with momentum and a cosine-annealed learning rate over the full
number of epochs. Shapes (the "funnel"): hidden layer ``l`` of ``L`` has ``ceil(max_units * (L - l) / L)`` units and
dropout ``max_dropout * (L - l) / L`` (the widest layer drops most). A configuration of ``L = 0`` layers is a linear
model (multinomial logistic regression trained by SGD): the suite's linear family.

Why by hand: each network has its own learning rate, momentum, weight decay, widths and dropout, which
``torch.optim`` cannot hold per slice of one tensor; ``torch.func.vmap`` over ``functional_call`` needs one shape
for all networks. So the networks of one depth are padded to the widest in their chunk, padded units are masked to
zero (they carry no signal and receive no gradient: the result is the unpadded network's), and the SGD update is the
five lines of ``_sgd_step``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

LOGLOSS_CAP = 10.0  # a diverged network's cross-entropy is held here (nats), its predictions count as wrong


@dataclass(frozen=True)
class MLPConfig:
    """One network's hyperparameters (``layers = 0``: linear)."""

    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    layers: int
    max_units: int
    max_dropout: float

    def widths(self) -> list[int]:
        L = self.layers
        return [max(1, math.ceil(self.max_units * (L - i) / L)) for i in range(L)]

    def dropouts(self) -> list[float]:
        L = self.layers
        return [self.max_dropout * (L - i) / L for i in range(L)]


@dataclass
class Curves:
    """What ``train`` records for ``m`` networks over ``epochs`` epochs: ``[m, epochs]`` float arrays."""

    val_error: torch.Tensor      # balanced error rate on the validation split after each epoch
    val_logloss: torch.Tensor    # mean cross-entropy (nats) on the validation split
    test_error: torch.Tensor     # balanced error rate on the test split
    seconds: torch.Tensor        # training seconds of each epoch, the chunk's time shared by FLOPs


def balanced_error(logits: torch.Tensor, y: torch.Tensor, classes: int) -> torch.Tensor:
    """``1 -`` mean per-class recall. ``logits [m, n, C]``, ``y [n]`` -> ``[m]``; non-finite logits count wrong."""
    pred = logits.argmax(-1)
    pred = torch.where(torch.isfinite(logits).all(-1), pred, torch.full_like(pred, -1))
    hit = (pred == y).to(torch.float64)  # [m, n]
    onehot = torch.nn.functional.one_hot(y, classes).to(torch.float64)  # [n, C]
    recall = (hit @ onehot) / onehot.sum(0).clamp_min(1.0)  # [m, C]
    present = onehot.sum(0) > 0
    return 1.0 - recall[:, present].mean(-1)


def logloss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy, ``[m, n, C]``, ``[n]`` -> ``[m]``, non-finite or above the cap held at ``LOGLOSS_CAP``."""
    m, n, c = logits.shape
    ll = torch.nn.functional.cross_entropy(logits.reshape(m * n, c), y.repeat(m), reduction="none").view(m, n)
    ll = ll.mean(-1)
    return torch.where(torch.isfinite(ll), ll.clamp_max(LOGLOSS_CAP), torch.full_like(ll, LOGLOSS_CAP))


class _Chunk:
    """The padded parameters of ``m`` networks of one depth: ``weights[l]`` ``[m, in_l, out_l]``."""

    def __init__(self, configs: list[MLPConfig], features: int, classes: int, gen: torch.Generator) -> None:
        m, depth = len(configs), configs[0].layers
        widths = [c.widths() for c in configs]
        top = [max(w[i] for w in widths) for i in range(depth)]
        dims = [features, *top, classes]
        real_in = [[features] + w for w in widths]  # each network's own fan-in per layer
        self.masks = [torch.zeros(m, 1, top[i]) for i in range(depth)]
        for j, w in enumerate(widths):
            for i in range(depth):
                self.masks[i][j, 0, : w[i]] = 1.0
        self.weights: list[torch.Tensor] = []
        self.biases: list[torch.Tensor] = []
        for i in range(depth + 1):
            bound = torch.tensor([1.0 / math.sqrt(real_in[j][i]) for j in range(m)])[:, None, None]  # torch's default
            w = (torch.rand(m, dims[i], dims[i + 1], generator=gen) * 2 - 1) * bound
            b = (torch.rand(m, 1, dims[i + 1], generator=gen) * 2 - 1) * bound
            if i > 0:
                w = w * self.masks[i - 1].transpose(1, 2)  # padded inputs: no weight
            if i < depth:
                w, b = w * self.masks[i], b * self.masks[i]
            self.weights.append(w.requires_grad_())
            self.biases.append(b.requires_grad_())
        rates = [torch.tensor([c.dropouts()[i] for c in configs])[:, None, None] for i in range(depth)]
        self.drop_bytes = [torch.round(r * 256).clamp_max(255).to(torch.uint8) for r in rates]  # drop if byte < it
        self.scale = [self.masks[i] * 256.0 / (256.0 - self.drop_bytes[i].float()) for i in range(depth)]
        self.flops = torch.tensor([_flops(features, w, classes) for w in widths], dtype=torch.float64)

    def params(self) -> list[torch.Tensor]:
        return [*self.weights, *self.biases]

    def forward(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        """``x [m, n, features]`` -> logits ``[m, n, classes]``; dropout where ``gen`` is given (training)."""
        h = x
        for i, mask in enumerate(self.masks):
            h = torch.relu(torch.baddbmm(self.biases[i], h, self.weights[i]))
            if gen is None:
                h = h * mask
            else:  # inverted dropout with each network's own rate (in 1/256 steps), fused with the padding mask
                keep = _random_bytes(h.shape, gen) >= self.drop_bytes[i]
                h = h * keep * self.scale[i]
        return torch.baddbmm(self.biases[-1], h, self.weights[-1])


def _random_bytes(shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    """Uniform random bytes of ``shape`` (``uint8``): eight from each int64 draw, about 5x cheaper than
    ``torch.rand`` per dropout decision on CPU (measured: 1.7 ms against 8.6 ms for 557k values)."""
    n = math.prod(shape)
    words = torch.randint(-(2**63), 2**63 - 1, ((n + 7) // 8,), dtype=torch.int64, generator=gen)
    return words.view(torch.uint8)[:n].view(shape)


def _flops(features: int, widths: list[int], classes: int) -> float:
    dims = [features, *widths, classes]
    return float(sum(a * b for a, b in zip(dims[:-1], dims[1:], strict=True)))


def _sgd_step(params: list[torch.Tensor], bufs: list[torch.Tensor], lr: torch.Tensor, momentum: torch.Tensor,
              weight_decay: torch.Tensor) -> None:
    """``torch.optim.SGD``'s update (momentum, dampening 0, L2 weight decay), with per-network hyperparameters
    (``[m, 1, 1]`` tensors)."""
    with torch.no_grad():
        for p, buf in zip(params, bufs, strict=True):
            g = p.grad + weight_decay * p
            buf.mul_(momentum).add_(g)
            p.sub_(lr * buf)
            p.grad = None


def train(configs: list[MLPConfig], x_train: torch.Tensor, y_train: torch.Tensor, x_val: torch.Tensor,
          y_val: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, classes: int, epochs: int,
          seed: int) -> Curves:
    """Train ``configs`` (one depth and one batch size) together for ``epochs`` epochs; their curves.

    Args:
        configs: ``m`` configurations sharing ``layers`` and ``batch_size``.
        x_train: ``[n, features]`` float32; ``y_train`` ``[n]`` int64 (likewise the validation and test splits).
        classes: the number of classes.
        epochs: the full fidelity (the cosine schedule's length).
        seed: the chunk's seed (initialisation, shuffling, dropout).

    Returns:
        The curves, one row per configuration in ``configs``' order.
    """
    assert len({(c.layers, c.batch_size) for c in configs}) == 1, "one depth and batch size per chunk"
    gen = torch.Generator().manual_seed(seed)
    m, n = len(configs), x_train.shape[0]
    chunk = _Chunk(configs, x_train.shape[1], classes, gen)
    params = chunk.params()
    bufs = [torch.zeros_like(p) for p in params]
    lr0 = torch.tensor([c.lr for c in configs])[:, None, None]
    mom = torch.tensor([c.momentum for c in configs])[:, None, None]
    wd = torch.tensor([c.weight_decay for c in configs])[:, None, None]
    bs = configs[0].batch_size
    steps = math.ceil(n / bs)
    out = {k: torch.zeros(m, epochs, dtype=torch.float64) for k in ("val_error", "val_logloss", "test_error", "s")}
    share = chunk.flops / chunk.flops.sum()
    xv, xt = x_val.expand(m, *x_val.shape), x_test.expand(m, *x_test.shape)
    alive = torch.ones(m, dtype=torch.bool)
    for epoch in range(epochs):
        start = time.perf_counter()
        lr = lr0 * 0.5 * (1.0 + math.cos(math.pi * epoch / epochs))
        order = torch.argsort(torch.rand(m, n, generator=gen), dim=1)
        for s in range(steps):
            idx = order[:, s * bs:(s + 1) * bs]  # [m, b]
            logits = chunk.forward(x_train[idx], gen)
            b = idx.shape[1]
            loss = torch.nn.functional.cross_entropy(logits.reshape(m * b, classes), y_train[idx].reshape(-1),
                                                     reduction="none").view(m, b).mean(-1)
            loss = torch.where(alive & torch.isfinite(loss), loss, torch.zeros_like(loss)).sum()
            loss.backward()
            _sgd_step(params, bufs, lr, mom, wd)
        elapsed = time.perf_counter() - start
        with torch.no_grad():
            for p in params:  # a diverged network stays diverged: freeze it (its values are held at the cap)
                bad = ~torch.isfinite(p.reshape(m, -1)).all(-1)
                alive &= ~bad
            lv, lt = chunk.forward(xv, None), chunk.forward(xt, None)
            lv = torch.where(alive[:, None, None], lv, torch.full_like(lv, float("nan")))
            lt = torch.where(alive[:, None, None], lt, torch.full_like(lt, float("nan")))
            out["val_error"][:, epoch] = balanced_error(lv, y_val, classes)
            out["val_logloss"][:, epoch] = logloss(lv, y_val)
            out["test_error"][:, epoch] = balanced_error(lt, y_test, classes)
            out["s"][:, epoch] = elapsed * share
    return Curves(out["val_error"], out["val_logloss"], out["test_error"], out["s"])
