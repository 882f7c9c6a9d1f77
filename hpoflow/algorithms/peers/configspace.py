"""Our space as ConfigSpace's (SMAC's and DEHB's space type) and back; no optimiser imported."""
from __future__ import annotations

from typing import Any

from ConfigSpace import Categorical as CSCategorical
from ConfigSpace import Configuration, ConfigurationSpace
from ConfigSpace import Float as CSFloat
from ConfigSpace import Integer as CSInteger

from hpoflow.core.space import Float, Int, SearchSpace


def configuration_space(space: SearchSpace, seed: int) -> ConfigurationSpace:
    """ConfigSpace's hyperparameter for every parameter, in the space's order, seeded from ``seed``."""
    cs = ConfigurationSpace(seed=seed)
    for p in space.parameters:
        if isinstance(p, Float):
            cs.add(CSFloat(p.name, (p.low, p.high), log=p.log))
        elif isinstance(p, Int):
            cs.add(CSInteger(p.name, (p.low, p.high), log=p.log))
        else:
            cs.add(CSCategorical(p.name, list(range(p.cardinality))))
    return cs


def to_config(space: SearchSpace, configuration: Configuration) -> dict[str, Any]:
    """A ConfigSpace configuration as hpoflow's config dict (categorical positions back to their choices)."""
    out: dict[str, Any] = {}
    for p in space.parameters:
        v = configuration[p.name]
        out[p.name] = v if isinstance(p, (Float, Int)) else p.choices[int(v)]
    return out
