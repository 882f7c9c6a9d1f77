"""Every built-in surrogate implements the Surrogate protocol, with the shapes it promises."""
from __future__ import annotations

import pytest
import torch

from hpoflow.config import registry
from hpoflow.surrogates.base import CandidateSurrogate, StandardizedSurrogate, Surrogate


@pytest.mark.parametrize("name", [e.name for e in registry.entries("surrogate")])
def test_every_registered_surrogate_fits_updates_and_predicts_with_the_protocols_shapes(name):
    entry = registry.get("surrogate", name)
    model = entry.load()(entry.make_config(), 2, dtype=torch.float64, device=torch.device("cpu"))
    assert isinstance(model, Surrogate)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(6, 2, generator=g, dtype=torch.float64)
    y = (X - 0.3).pow(2).sum(-1)
    model.fit(X, y)
    model.update(torch.rand(2, generator=g, dtype=torch.float64), torch.tensor(0.1, dtype=torch.float64))
    mean, var = model.posterior(torch.rand(5, 2, generator=g, dtype=torch.float64))
    assert model.n == 7 and mean.shape == var.shape == (5,) and bool((var >= 0).all())
    assert isinstance(model, CandidateSurrogate) == (name == "tv_gp")
    assert isinstance(model, StandardizedSurrogate) == (name != "tv_gp")  # the time-varying GP models raw y


def test_an_object_without_the_methods_is_not_a_surrogate():
    class MeanOnly:
        n = 0

        def posterior(self, X, standardized=False):
            return X.sum(-1), X.sum(-1)

    assert not isinstance(MeanOnly(), Surrogate)
