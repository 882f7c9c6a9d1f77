"""Run folders and sweep folders carry a random component: one value per config, a new one per config."""
from __future__ import annotations

from omegaconf import OmegaConf

from hpoflow.config.identity import register_resolvers


def test_uid_is_stable_within_a_config_and_differs_between_configs():
    register_resolvers()
    cfgs = [OmegaConf.create({"run": "a-${hpoflow.uid:}", "sweep": "b-${hpoflow.uid:}"}) for _ in range(2)]
    first = [c.run for c in cfgs]
    assert [c.run for c in cfgs] == first  # resolved again: cached
    assert first[0] != first[1] and len(first[0]) == len("a-") + 8
    assert cfgs[0].run[2:] == cfgs[0].sweep[2:]  # one value per config: a sweep's folder and jobs agree
