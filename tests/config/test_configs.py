"""Compose every config group option with Hydra and validate it into the component dataclasses."""
from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config import registry
from hpoflow.config.schema import register_configs
from hpoflow.config.settings import ConfigError, validate
from tests.conftest import REPO

register_configs()
OPTIONS = [(group, e.name) for kind, group in registry.GROUP_OF_KIND.items() for e in registry.entries(kind)]
OPTIONS += [("hardware", "cpu"), ("hardware", "auto"), ("tracking", "mlflow"), ("tracking", "off")]


def _compose(*overrides: str):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


@pytest.mark.parametrize("group,option", OPTIONS)
def test_every_group_option_composes_and_validates(group, option):
    kind = {g: k for k, g in registry.GROUP_OF_KIND.items()}.get(group)
    missing = registry.get(kind, option).missing() if kind else None
    if missing:
        pytest.skip(f"{group}={option} needs {missing}, an optional extra")
    pair = ("algo=random",) if group == "surrogate" else ()  # the default gp_ei refuses tv_gp; random takes any
    cfg = _compose(*pair, f"{group}={option}")
    settings = validate(OmegaConf.to_container(cfg, resolve=True))
    assert OmegaConf.select(cfg, f"{group}.name") == option
    assert settings.budget.rounds == 30


@pytest.mark.parametrize("override,fragment", [
    ("budget.rounds=0", "budget.rounds=0"),
    ("budget.rounds=-3", "budget.rounds=-3"),
    ("surrogate.kernel=cosine", "surrogate.kernel='cosine'"),
    ("algo.beta_schedule=fast", "algo.beta_schedule='fast'"),
    ("on_error=ignore", "on_error='ignore'"),
    ("task.low=2.0", "task.low=2.0"),
])
def test_bad_values_fail_validation_naming_the_key(override, fragment):
    extra = ["task=rastrigin", "task.high=1.0"] if override.startswith("task.low") else []
    extra += ["algo=gp_ucb"] if override.startswith("algo.beta") else []  # the default gp_ei has no beta
    cfg = _compose(*extra, override)
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        validate(OmegaConf.to_container(cfg, resolve=True))


# --- YAML options: generated from the dataclasses, checked by tests/config/test_conf_files.py ----------------------


def test_an_algorithm_selects_the_surrogate_it_needs_and_an_explicit_choice_still_wins():
    assert OmegaConf.select(_compose("algo=tv_gp_ucb", "task=tv_synthetic"), "surrogate.name") == "tv_gp"
    assert OmegaConf.select(_compose("algo=ce_gp_ucb"), "surrogate.name") == "tv_gp"
    assert OmegaConf.select(_compose("algo=tv_gp_ucb", "surrogate=gp"), "surrogate.name") == "gp"
    assert OmegaConf.select(_compose("algo=gp_ei"), "surrogate.name") == "gp"


def test_a_typo_or_a_wrong_type_in_an_override_still_fails_at_composition():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="beta"):
        _compose("algo=gp_ucb", "algo.beta=abc")
    with pytest.raises(ConfigCompositionException, match="betta"):
        _compose("algo=gp_ucb", "algo.betta=1")
