"""Collision-free run identities: a short random component in every run folder and sweep folder.

Run folders used to be ``<date>/<H-M-S>-<algo>-<task>``: two runs started in the same second shared a folder
(and one ``checkpoint.json``), and two sweeps started in the same second shared a folder and a sweep id
(a hash of that folder). ``${hpoflow.uid:}`` in ``hydra.run.dir`` / ``hydra.sweep.dir`` adds 8 random hex
digits (32 bits from the OS, never the seeded RNGs), resolved once per config: a sweep's jobs, which copy
their resolver cache from the sweep's config (also across joblib/Ray processes), agree on it.
"""
from __future__ import annotations

import secrets

RESOLVER = "hpoflow.uid"


def new_uid() -> str:
    """8 random hex digits from the OS (independent of ``seed``)."""
    return secrets.token_hex(4)


def register_resolvers() -> None:
    """Register ``${hpoflow.uid:}`` with OmegaConf (cached: one value per config, like ``${now:}``), and the
    configs' arithmetic (``${hpoflow.times:...}``, :mod:`hpoflow.config.resolvers`)."""
    from omegaconf import OmegaConf

    from hpoflow.config import resolvers

    OmegaConf.register_new_resolver(RESOLVER, new_uid, use_cache=True, replace=True)
    resolvers.register()
