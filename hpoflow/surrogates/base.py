"""The Surrogate protocols: every member of a model of the objective that an algorithm may use.

``Surrogate`` (n / fit / update / posterior) is what every model offers; the extensions below each name one
capability an algorithm relies on, with every member it reads:

- ``StandardizedSurrogate`` (ExactGP, NeuralSurrogate): outputs standardised as ``(y - y_mean) / y_std``, which
  GP-BO's and BBO's acquisitions work in;
- ``LengthscaleSurrogate`` (ExactGP): per-dimension lengthscales (GP-BO preconditions its search with them);
- ``KernelSurrogate`` (ExactGP): the posterior's pieces, for a joint posterior draw (TuRBO's Thompson sample);
- ``CandidateSurrogate`` / ``TimeVaryingSurrogate`` (TemporalGP): a time-indexed posterior over a candidate set,
  with incremental adds, resets and a forgetting rate eps (TV-/R-/CE-GP-UCB);
- ``NetworkSurrogate`` (NeuralSurrogate): the parametric network ``f_w(x)`` itself (GO-UCB).

An algorithm declares the one it needs as its class attribute ``surrogate_protocol``; composition checks the
registered surrogate's class against it with ``provides`` before any run starts, and the algorithm checks
the built model with ``isinstance`` (the protocols are runtime-checkable). ``needs`` words the refusal.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # no torch import: surrogate_plot and the algorithms check models without loading more
    from torch import Tensor


@runtime_checkable
class Surrogate(Protocol):
    """A model of ``y = f(x)`` on ``[0, 1]^d`` with a Gaussian posterior.

    Shapes: ``X`` is ``n x d`` and ``y`` is ``n``; ``update`` takes one point (``x`` of shape ``d`` or
    ``1 x d``, ``y`` a scalar tensor); ``posterior`` of ``m x d`` inputs returns the mean and the variance,
    each of shape ``m``, in the units of ``y``.
    """

    @property
    def n(self) -> int:
        """How many observations the model holds."""
        ...

    def fit(self, X: Tensor, y: Tensor) -> None:
        """Replace the data with ``(X, y)`` and fit the model (hyperparameters where it learns them)."""
        ...

    def update(self, x: Tensor, y: Tensor) -> None:
        """Add one observation; incremental (a rank-one Cholesky extension) where the model allows."""
        ...

    def posterior(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Posterior mean and variance at ``X`` (``m x d``), each of shape ``m``."""
        ...


@runtime_checkable
class StandardizedSurrogate(Surrogate, Protocol):
    """A surrogate that models standardised outputs ``(y - y_mean) / y_std`` (the exact GP, the network)."""

    y_mean: Tensor  # scalar: subtracted from y (0 before two observations)
    y_std: Tensor   # scalar: y's scale after the mean is subtracted (1 before two observations)

    def posterior(self, X: Tensor, standardized: bool = False) -> tuple[Tensor, Tensor]:
        """Mean and variance at ``X`` (``m x d``), each of shape ``m``: in ``y``'s units, or standardised."""
        ...

    def standardize(self, y: Tensor) -> Tensor:
        """``y`` (any shape) in the standardised units the model works in."""
        ...


@runtime_checkable
class ExtendableSurrogate(Surrogate, Protocol):
    """A surrogate that takes one more observation cheaply, its hyperparameters and output scaling unchanged
    (the exact GP: a rank-one extension of its Cholesky factor, O(n^2)). A kriging believer
    (``hpoflow.algorithms.pending``) uses it to condition a copy on pending points without a refit."""

    n: int  # observations so far

    def extend(self, x: Tensor, y: Tensor) -> None:
        """Condition on ``x`` (shape ``d``) observed as ``y`` (scalar, in y's units); no refit."""
        ...


@runtime_checkable
class LengthscaleSurrogate(Surrogate, Protocol):
    """A surrogate with kernel lengthscales on the unit cube (shape ``d``, or ``1`` when shared)."""

    @property
    def lengthscale(self) -> Tensor:
        """The fitted lengthscales, shape ``d`` (ARD) or ``1``."""
        ...


@runtime_checkable
class ConfiguredSurrogate(Surrogate, Protocol):
    """A surrogate that exposes its settings (a config dataclass), which an algorithm may complete: GP-EI sets the
    GP's ``output_transform`` where the user left it null. Optional: a model without ``config`` is used as it is."""

    config: Any


@runtime_checkable
class KernelSurrogate(LengthscaleSurrogate, Protocol):
    """An exact GP whose posterior is exposed as its pieces, so that a caller can draw it jointly.

    With standardised targets ``z`` (``n``) and prior mean ``m``: ``alpha = K^{-1} (z - m)`` (``n``), ``L`` the
    lower Cholesky factor of ``K = k(X, X) + noise I`` (``n x n``); ``kernel(A, B)`` is the prior covariance
    (a linear operator, ``.to_dense()`` gives ``|A| x |B|``).
    """

    X: Tensor      # n x d: the training inputs
    alpha: Tensor  # n
    L: Tensor      # n x n

    @property
    def kernel(self) -> Any:
        """The prior covariance ``(A, B) -> |A| x |B|`` linear operator (a gpytorch kernel)."""
        ...


@runtime_checkable
class CandidateSurrogate(Surrogate, Protocol):
    """A surrogate over a finite candidate set that it can predict at once (the time-varying GP).

    Its beliefs are about ``f_t``: ``posterior(X, t)`` and ``candidate_posterior(t)`` take the round ``t``.
    """

    def posterior(self, X: Tensor, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance of ``f_t`` at ``X`` (``m x d``), each of shape ``m``."""
        ...

    def candidate_posterior(self, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance at every candidate (at time ``t``), each of shape ``m``."""
        ...


class KernelNamed(Protocol):
    """Settings that name their space kernel (``identity``: independent arms)."""

    kernel: str


@runtime_checkable
class TimeVaryingSurrogate(CandidateSurrogate, Protocol):
    """A time-varying GP: observations carry their round, old ones are forgotten at rate ``epsilon``."""

    config: KernelNamed  # its settings; config.kernel == "identity" makes the candidates independent arms
    epsilon: float       # the forgetting rate eps in [0, 1): the temporal kernel is (1 - eps)^{|t - t'| / 2}
    fit_epsilon: bool    # eps is refitted by maximum likelihood as observations arrive

    def set_epsilon(self, epsilon: float) -> None:
        """Fix eps (refactorising the data held)."""
        ...

    def set_candidates(self, C: Tensor | None) -> None:
        """The candidate set (``m x d``) ``candidate_posterior`` predicts at, or None."""
        ...

    def add(self, x: Tensor, y: float, t: float) -> None:
        """Add one observation ``y`` at ``x`` (``d``) made in round ``t`` (O(n^2))."""
        ...

    def clear(self) -> None:
        """Forget every observation (a reset)."""
        ...


@runtime_checkable
class ParametricNetwork(Protocol):
    """A network ``f_w(x)`` as a function of its flat weight vector ``w`` (``d_w``), with its gradients."""

    d_w: int     # the number of weights
    config: Any  # its settings (architecture; the oracle's optimiser, input_scale)

    def value(self, w: Tensor, X: Tensor) -> Tensor:
        """``f_w(x)`` at each row of ``X`` (``m x d``): shape ``m``."""
        ...

    def value_pairs(self, W: Tensor, X: Tensor) -> Tensor:
        """``f_{w_i}(x_i)`` for rows ``W`` (``m x d_w``) and ``X`` (``m x d``): shape ``m``."""
        ...

    def grad_w(self, w: Tensor, X: Tensor) -> Tensor:
        """``grad_w f_x(w)`` at each row of ``X``: ``m x d_w``."""
        ...

    def fit(self, X: Tensor, y: Tensor, generator: Any, w0: Tensor | None = None, **kwargs: Any) -> Any:
        """The least-squares oracle: ``(w, mse)`` fitted to ``(X, y)``."""
        ...


@runtime_checkable
class NetworkSurrogate(Surrogate, Protocol):
    """A surrogate that is a parametric network and hands it over (``model``) for GO-UCB's own inference."""

    model: ParametricNetwork
    config: Any  # its settings (GO-UCB's preset=paper derives the oracle's from them)


NEEDS: dict[type, str] = {
    Surrogate: "a surrogate",
    StandardizedSurrogate: "a surrogate with standardised outputs",
    LengthscaleSurrogate: "a surrogate with kernel lengthscales",
    ConfiguredSurrogate: "a surrogate with a config",
    KernelSurrogate: "an exact GP surrogate it can sample jointly",
    CandidateSurrogate: "a surrogate over a candidate set",
    TimeVaryingSurrogate: "the time-varying GP",
    NetworkSurrogate: "the network surrogate",
}  # protocol -> what an algorithm that needs it says it needs


def protocol_members(protocol: type) -> tuple[str, ...]:
    """Every member ``protocol`` declares, its bases' included: methods, properties and annotated attributes."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (object, Protocol) or not getattr(base, "_is_protocol", False):
            continue
        names |= set(base.__dict__.get("__annotations__", {}))
        names |= {name for name in vars(base) if not name.startswith("_")}
    return tuple(sorted(names))


def _annotation(owner: type, name: str) -> Any:
    """The object ``owner`` (or a base) annotates ``name`` with, resolved in its module; None if unresolvable."""
    for base in owner.__mro__:
        hint = base.__dict__.get("__annotations__", {}).get(name)
        if hint is not None:
            return getattr(sys.modules.get(base.__module__), hint, None) if isinstance(hint, str) else hint
    return None


def _nested(protocol: type) -> dict[str, type]:
    """Attributes that ``protocol`` types with another runtime protocol (``NetworkSurrogate.model``)."""
    out = {}
    for name in protocol_members(protocol):
        hint = _annotation(protocol, name)
        if isinstance(hint, type) and getattr(hint, "_is_runtime_protocol", False):
            out[name] = hint
    return out


def provides(cls: type, protocol: type) -> bool:
    """Whether instances of ``cls`` offer every member of ``protocol``, judged from the class alone.

    A method or property counts where ``cls`` (or a base) defines it; an instance attribute where a class
    annotates it (``X: Tensor`` in the class body); an attribute the protocol types with another protocol
    (``model: ParametricNetwork``) must be annotated with a class that provides that one. No instance is built:
    composition checks a pair before any model exists; ``conforms`` checks a built model.
    """
    declared = set(dir(cls))
    for base in cls.__mro__:
        declared |= set(base.__dict__.get("__annotations__", {}))
    if not all(name in declared for name in protocol_members(protocol)):
        return False
    for name, inner in _nested(protocol).items():
        hint = _annotation(cls, name)
        if not (isinstance(hint, type) and provides(hint, inner)):
            return False
    return True


def conforms(model: object, protocol: type) -> bool:
    """``isinstance(model, protocol)``, and each attribute typed with a protocol an instance of that one too."""
    return isinstance(model, protocol) and all(conforms(getattr(model, name), inner)
                                               for name, inner in _nested(protocol).items())


def needs(algo: str, protocol: type, got: str, allowed: list[str] | None = None) -> str:
    """The one-line refusal: ``algo 'turbo' needs <capability> (surrogate=gp or skopt_gp), got <got>``.

    ``allowed``: the registered surrogates that provide ``protocol``; None names the protocol's members instead.
    """
    if allowed:
        options = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
        hint = f"surrogate={options}"
    else:
        hint = f"a {protocol.__name__}: {', '.join(protocol_members(protocol))}"
    return f"algo '{algo}' needs {NEEDS.get(protocol, f'a {protocol.__name__}')} ({hint}), got {got}"


def require(algo: str, model: object, protocol: type | None) -> None:
    """Raise ValueError (the one-line refusal) unless the built ``model`` conforms to ``protocol``."""
    if protocol is not None and not conforms(model, protocol):
        raise ValueError(needs(algo, protocol, type(model).__name__ if model is not None else "no surrogate"))
