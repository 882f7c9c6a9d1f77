"""Every built-in surrogate implements the Surrogate protocol and exactly the capability protocols it should."""
from __future__ import annotations

import pytest
import torch

from hpoflow.config import registry
from hpoflow.config.pairing import built_class, fitting
from hpoflow.surrogates.base import (
    NEEDS,
    CandidateSurrogate,
    ConfiguredSurrogate,
    KernelSurrogate,
    LengthscaleSurrogate,
    NetworkSurrogate,
    ParametricNetwork,
    StandardizedSurrogate,
    Surrogate,
    TimeVaryingSurrogate,
    conforms,
    needs,
    protocol_members,
    provides,
)


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


# -- the capability protocols: judged from the class (composition) and from a built model (the algorithm) --------

CAPABILITIES = {"gp": {StandardizedSurrogate, LengthscaleSurrogate, KernelSurrogate, ConfiguredSurrogate},
                "skopt_gp": {StandardizedSurrogate, LengthscaleSurrogate, KernelSurrogate, ConfiguredSurrogate},
                "tv_gp": {CandidateSurrogate, TimeVaryingSurrogate, ConfiguredSurrogate},
                "nn": {StandardizedSurrogate, NetworkSurrogate, ConfiguredSurrogate}}  # every built-in has a config


@pytest.mark.parametrize("name", [e.name for e in registry.entries("surrogate")])
def test_the_class_judgement_agrees_with_the_built_model_fresh_and_fitted(name):
    entry = registry.get("surrogate", name)
    cls = built_class(entry.load())
    model = entry.load()(entry.make_config(), 2, dtype=torch.float64, device=torch.device("cpu"))
    assert type(model) is cls
    offered = {p for p in NEEDS if provides(cls, p)}
    assert offered == {Surrogate, *CAPABILITIES[name]}
    assert offered == {p for p in NEEDS if conforms(model, p)}  # before any data: attributes exist from the start
    X = torch.rand(4, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    model.fit(X, X.sum(-1))
    assert offered == {p for p in NEEDS if conforms(model, p)}


def test_members_include_the_bases_and_annotated_attributes():
    assert set(protocol_members(KernelSurrogate)) == {"n", "fit", "update", "posterior", "lengthscale", "X", "alpha",
                                                      "L", "kernel"}
    assert {"config", "epsilon", "fit_epsilon", "set_epsilon", "set_candidates", "add", "clear",
            "candidate_posterior"} <= set(protocol_members(TimeVaryingSurrogate))
    assert set(protocol_members(ParametricNetwork)) == {"d_w", "config", "value", "value_pairs", "grad_w", "fit"}


class _Net:
    d_w: int
    config: object

    def value(self, w, X): ...
    def grad_w(self, w, X): ...
    def fit(self, X, y, generator, w0=None): ...


class _Wrapper:
    model: _Net  # lacks value_pairs: not a ParametricNetwork
    config: object
    n = 0

    def fit(self, X, y): ...
    def update(self, x, y): ...
    def posterior(self, X): ...


def test_a_nested_protocol_is_checked_through_the_annotation_and_the_instance():
    assert provides(_Wrapper, Surrogate) and not provides(_Wrapper, NetworkSurrogate)
    _Net.value_pairs = lambda self, W, X: None  # now it is one
    try:
        assert provides(_Wrapper, NetworkSurrogate)
        wrapper = _Wrapper()
        wrapper.model, wrapper.config = _Net(), None
        wrapper.model.d_w, wrapper.model.config = 3, None
        assert conforms(wrapper, NetworkSurrogate)
        wrapper.model = object()  # has `model`, but not a network: isinstance alone would say yes
        assert isinstance(wrapper, NetworkSurrogate) and not conforms(wrapper, NetworkSurrogate)
    finally:
        del _Net.value_pairs


def test_the_refusal_names_what_is_needed_what_fits_and_what_was_given():
    assert fitting(KernelSurrogate) == ["gp", "skopt_gp"] and fitting(TimeVaryingSurrogate) == ["tv_gp"]
    assert needs("turbo", KernelSurrogate, "NeuralSurrogate (surrogate=nn)", ["gp", "skopt_gp"]) == (
        "algo 'turbo' needs an exact GP surrogate it can sample jointly (surrogate=gp or skopt_gp), "
        "got NeuralSurrogate (surrogate=nn)")
    assert needs("x", NetworkSurrogate, "ExactGP") == ("algo 'x' needs the network surrogate (a NetworkSurrogate: "
                                                       "config, fit, model, n, posterior, update), got ExactGP")
