"""Search spaces: ordered, typed hyperparameters and their map to the unit cube.

Every algorithm works on ``[0, 1]^d``; the space decodes a point back to a configuration.
Categorical and boolean parameters use equal-width bins (paper 004, Appendix D.2), integers
are rounded after the (optionally logarithmic) affine map.
"""
from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from torch import Tensor


MAX_DIM = 10_000  # parameters of a search space (the CLI caps task.dim at the same)

class SpaceError(ValueError):
    """A parameter definition is invalid (bad bounds, empty choices, ...)."""


@dataclass(frozen=True)
class Float:
    """Real parameter in ``[low, high]``, linear or logarithmic."""

    name: str
    low: float
    high: float
    log: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise SpaceError(f"parameter '{self.name}': low={self.low} must be < high={self.high}")
        if self.log and self.low <= 0:
            raise SpaceError(f"parameter '{self.name}': log scale needs low > 0, got low={self.low}")

    def decode(self, u: float) -> float:
        if u <= 0.0 or u >= 1.0:  # the cube's faces are the user's bounds exactly
            return self.low if u <= 0.0 else self.high
        if self.log:
            v = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            v = self.low + u * (self.high - self.low)
        return min(self.high, max(self.low, v))  # exp/log round-off must not step outside the user's bounds

    def encode(self, value: Any) -> float:
        v = float(value)
        if self.log:
            return (math.log(v) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (v - self.low) / (self.high - self.low)

    def grid(self, k: int) -> list[float]:
        return [(i + 0.5) / k for i in range(k)] if k > 1 else [0.5]


@dataclass(frozen=True)
class Int:
    """Integer parameter in ``[low, high]`` (both inclusive), linear or logarithmic."""

    name: str
    low: int
    high: int
    log: bool = False

    def __post_init__(self) -> None:
        for key in ("low", "high"):  # numpy integers and integral floats (4.0) are integers to users
            value = getattr(self, key)
            if not _integral(value):
                raise SpaceError(f"parameter '{self.name}': {key}={value!r} must be an integer")
            object.__setattr__(self, key, int(value))
        if not self.low < self.high:
            raise SpaceError(f"parameter '{self.name}': low={self.low} must be < high={self.high}")
        if self.log and self.low <= 0:
            raise SpaceError(f"parameter '{self.name}': log scale needs low > 0, got low={self.low}")

    @property
    def cardinality(self) -> int:
        return self.high - self.low + 1

    def decode(self, u: float) -> int:
        # Equal-width bins so every integer owns the same share of the cube (linear scale).
        if self.log:
            lo, hi = math.log(self.low - 0.5 if self.low > 0.5 else self.low), math.log(self.high + 0.5)
            return int(min(self.high, max(self.low, round(math.exp(lo + u * (hi - lo))))))
        return int(min(self.high, self.low + math.floor(u * self.cardinality)))

    def encode(self, value: Any) -> float:
        v = int(value)
        if self.log:
            lo, hi = math.log(self.low - 0.5 if self.low > 0.5 else self.low), math.log(self.high + 0.5)
            return min(1.0, max(0.0, (math.log(v) - lo) / (hi - lo)))
        return (v - self.low + 0.5) / self.cardinality

    def grid(self, k: int) -> list[float]:
        k = min(k, self.cardinality)
        values = sorted({self.low + round(i * (self.high - self.low) / max(k - 1, 1)) for i in range(k)})
        return [self.encode(v) for v in values]


@dataclass(frozen=True)
class Categorical:
    """Choice among a finite list, one equal-width bin of ``[0, 1]`` per choice."""

    name: str
    choices: tuple[Any, ...]

    def __post_init__(self) -> None:
        if len(self.choices) < 1:
            raise SpaceError(f"parameter '{self.name}': choices must not be empty")
        seen: list[Any] = []
        for choice in self.choices:  # (type, value): 1 and True are different choices
            if any(type(c) is type(choice) and c == choice for c in seen):
                raise SpaceError(f"parameter '{self.name}': the choice {choice!r:.80} is given twice; allowed: "
                                 "distinct choices")
            seen.append(choice)

    @property
    def cardinality(self) -> int:
        return len(self.choices)

    def decode(self, u: float) -> Any:
        return self.choices[min(len(self.choices) - 1, max(0, math.floor(u * len(self.choices))))]

    def encode(self, value: Any) -> float:
        if value not in self.choices:
            raise SpaceError(f"parameter '{self.name}': {value!r} is not one of {list(self.choices)}")
        return (self.choices.index(value) + 0.5) / len(self.choices)

    def grid(self, k: int) -> list[float]:
        return [(i + 0.5) / len(self.choices) for i in range(len(self.choices))]


def Bool(name: str) -> Categorical:  # capitalised: reads like the other parameter types
    """Boolean parameter: ``[0, 0.5)`` is True, ``[0.5, 1]`` is False (paper 004, D.2)."""
    return Categorical(name, (True, False))


Parameter = Float | Int | Categorical


@dataclass(frozen=True)
class SearchSpace:
    """Ordered hyperparameters; points of ``[0, 1]^d`` map to configurations and back."""

    parameters: tuple[Parameter, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise SpaceError(f"duplicate parameter names in {names}")
        if not names:
            raise SpaceError("a search space needs at least one parameter")
        if len(names) > MAX_DIM:
            raise SpaceError(f"a search space of {len(names):,} parameters is beyond the maximum {MAX_DIM:,}")

    @classmethod
    def of(cls, *parameters: Parameter) -> SearchSpace:
        return cls(tuple(parameters))

    @property
    def dim(self) -> int:
        return len(self.parameters)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    def decode(self, u: Tensor | Sequence[float]) -> dict[str, Any]:
        """Map one point ``u`` (shape ``d``) of the unit cube to a configuration."""
        values = [float(v) for v in (u.tolist() if hasattr(u, "tolist") else u)]  # a tensor or an array
        if len(values) != self.dim:
            raise SpaceError(f"point has {len(values)} coordinates, space has {self.dim}")
        return {p.name: p.decode(min(1.0, max(0.0, v))) for p, v in zip(self.parameters, values)}

    def encode(self, config: dict[str, Any], dtype: torch.dtype | None = None) -> Tensor:
        """Map a configuration to the centre of its cell in the unit cube (shape ``d``)."""
        missing = [n for n in self.names if n not in config]
        if missing:
            raise SpaceError(f"configuration lacks parameters {missing}")
        import torch

        return torch.tensor([p.encode(config[p.name]) for p in self.parameters],
                            dtype=torch.float64 if dtype is None else dtype)

    def sample(self, n: int, generator: torch.Generator, dtype: torch.dtype | None = None) -> Tensor:
        """``n`` uniform points of the unit cube, shape ``n x d``."""
        import torch

        return torch.rand(n, self.dim, generator=generator, dtype=torch.float64 if dtype is None else dtype)

    def finite_size(self) -> int | None:
        """Number of distinct configurations if every parameter is discrete, else None."""
        count = 1
        for p in self.parameters:
            if isinstance(p, Float):
                return None
            count *= p.cardinality
        return count

    def grid(self, points_per_dim: int, dtype: torch.dtype | None = None) -> Tensor:
        """Full factorial grid of cell centres, shape ``m x d`` (discrete parameters use their values)."""
        import torch

        axes = [p.grid(points_per_dim) for p in self.parameters]
        return torch.tensor(list(itertools.product(*axes)), dtype=torch.float64 if dtype is None else dtype)

    def snap(self, u: Tensor) -> Tensor:
        """Round points to the centre of their configuration cell (shape ``n x d``)."""
        import torch

        return torch.stack([self.encode(self.decode(row), dtype=u.dtype) for row in u])


SPEC_KINDS = ("float", "log", "int", "logint")
_SPEC_HELP = ("('float', low, high), ('log', low, high), ('int', low, high), ('logint', low, high), "
              "{'type': 'log', 'low': 1e-3, 'high': 0.5}, a list of choices or "
              "{'type': 'categorical', 'choices': [...]}")
_DICT_KEYS = {"type", "low", "high", "choices"}


def _integral(value: Any) -> bool:
    """An integer to a user: int, numpy integer, or an integral float (``128.0``); never a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer()


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _from_dict(name: str, spec: dict[str, Any]) -> Parameter:
    """``{"type": "log", "low": 1e-3, "high": 0.5}`` or ``{"type": "categorical", "choices": [...]}``."""
    kind, unknown = spec.get("type"), sorted(set(map(str, spec)) - _DICT_KEYS)
    if unknown:
        raise SpaceError(f"space[{name!r}]={spec!r}: unknown key {unknown[0]!r}; allowed: type, low, high "
                         "(numeric types) or type, choices (categorical)")
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, (list, tuple)) or not choices or set(spec) != {"type", "choices"}:
            raise SpaceError(f"space[{name!r}]={spec!r}: a categorical needs exactly 'choices', a non-empty list")
        return Categorical(name, tuple(choices))
    if kind not in SPEC_KINDS or set(spec) != {"type", "low", "high"}:
        raise SpaceError(f"space[{name!r}]={spec!r} is not a parameter; allowed: {_SPEC_HELP}")
    return _numeric(name, (kind, spec["low"], spec["high"]))


def _numeric(name: str, spec: tuple[Any, ...]) -> Parameter:
    kind, low, high = spec
    integer = kind in ("int", "logint")
    if not all(_integral(v) if integer else _real(v) for v in (low, high)):
        what = "integers (an int, a numpy integer or an integral float)" if integer else "numbers"
        raise SpaceError(f"space[{name!r}]={spec!r}: low and high must be {what}")
    if integer:
        return Int(name, int(low), int(high), log=kind == "logint")
    return Float(name, float(low), float(high), log=kind == "log")


def _parameter(name: str, spec: Any) -> Parameter:
    if isinstance(spec, (Float, Int, Categorical)):
        if spec.name != name:
            raise SpaceError(f"space[{name!r}] is a parameter named {spec.name!r}; the names must agree")
        return spec
    if isinstance(spec, dict):
        return _from_dict(name, spec)
    if isinstance(spec, list):
        if not spec:
            raise SpaceError(f"space[{name!r}]=[]: a list of choices needs at least one choice")
        if isinstance(spec[0], str) and spec[0] in (*SPEC_KINDS, "categorical"):
            # JSON/YAML turn ("log", 1e-3, 0.5) into a list: never silently a categorical of ("log", 1e-3, 0.5)
            low, high = (spec[1], spec[2]) if len(spec) == 3 else ("low", "high")
            raise SpaceError(f"space[{name!r}]={spec!r} is ambiguous (a list whose first element is a type name): "
                             f"write the parameter as a tuple ({spec[0]!r}, {low!r}, {high!r}) or a dict "
                             f"{{'type': {spec[0]!r}, 'low': {low!r}, 'high': {high!r}}}; for choices use "
                             f"{{'type': 'categorical', 'choices': {spec!r}}}")
        return Categorical(name, tuple(spec))
    if not (isinstance(spec, tuple) and len(spec) == 3 and spec[0] in SPEC_KINDS):
        raise SpaceError(f"space[{name!r}]={spec!r} is not a parameter; allowed: {_SPEC_HELP}")
    return _numeric(name, spec)


def parse_space(spec: SearchSpace | dict[str, Any]) -> SearchSpace:
    """A ``SearchSpace`` from a plain dict, in the dict's order, e.g.
    ``{"x": ("float", -1.0, 1.0), "lr": ("log", 1e-5, 1e-1), "layers": ("int", 1, 4), "act": ["relu", "tanh"]}``
    (``("logint", 1, 512)``: integers on a log scale; a value may also be a ``Float``/``Int``/``Categorical``).
    Each numeric parameter may also be a dict, ``{"type": "log", "low": 1e-5, "high": 1e-1}``, and a categorical
    ``{"type": "categorical", "choices": [...]}``: the form that survives JSON and YAML (which turn tuples into
    lists), and what ``describe_space`` writes. A list whose first element is a type name (``["log", 1e-5,
    0.1]``) is refused as ambiguous. A ``SearchSpace`` is returned as it is.

    Raises:
        SpaceError: one line naming the bad parameter and what is allowed.
    """
    if isinstance(spec, SearchSpace):
        return spec
    if not isinstance(spec, dict):
        raise SpaceError(f"space must be a SearchSpace or a dict of parameters, got {type(spec).__name__}")
    for name in spec:
        if not isinstance(name, str) or not name:
            raise SpaceError(f"space: parameter names must be non-empty strings, got {name!r}")
    return SearchSpace(tuple(_parameter(name, value) for name, value in spec.items()))


def describe_space(space: SearchSpace) -> dict[str, Any]:
    """The plain dict spec of ``space``: JSON/YAML-safe, and ``parse_space(describe_space(s)) == s`` (also after a
    JSON or YAML round trip). Recorded as the run's ``task.space``."""
    out: dict[str, Any] = {}
    for p in space.parameters:
        if isinstance(p, Categorical):
            choices = list(p.choices)
            ambiguous = isinstance(choices[0], str) and choices[0] in (*SPEC_KINDS, "categorical")
            out[p.name] = {"type": "categorical", "choices": choices} if ambiguous else choices
        elif isinstance(p, Int):
            out[p.name] = {"type": "logint" if p.log else "int", "low": p.low, "high": p.high}
        else:
            out[p.name] = {"type": "log" if p.log else "float", "low": p.low, "high": p.high}
    return out
