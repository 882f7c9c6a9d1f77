"""'Did you mean' for a misspelt group option or key: the library's and the CLI's one-line errors."""
from __future__ import annotations

import pytest

import hpoflow
from hpoflow.config.settings import ConfigError
from hpoflow.core.suggest import did_you_mean


def test_close_names_are_suggested_and_far_ones_are_not():
    assert did_you_mean("hyprband", ["asha", "hyperband", "random"]) == " (did you mean 'hyperband'?)"
    assert did_you_mean("rouns", ["rounds", "cost", "workers"]) == " (did you mean 'rounds'?)"
    assert did_you_mean("nope", ["asha", "hyperband", "random"]) == ""
    assert did_you_mean("brannin", ["branin", "branin_mf", "zdt1"]) == " (did you mean 'branin' or 'branin_mf'?)"


@pytest.mark.parametrize("settings,hint", [
    ({"algo": "hyprband"}, "Could not find 'algo/hyprband' (did you mean 'hyperband'"),
    ({"algo": "random", "hardware": "cpuu"}, "Could not find 'hardware/cpuu' (did you mean 'cpu'?); allowed: "),
])
def test_the_library_suggests_the_closest_option(settings, hint):
    with pytest.raises(ConfigError) as err:
        hpoflow.minimize(lambda c: c["x"], {"x": ("float", 0.0, 1.0)}, rounds=2, tracking=False, **settings)
    assert str(err.value).startswith(hint) and "\n" not in str(err.value)


@pytest.mark.parametrize("override,hint", [
    ("algo=hyprband", "Error: Could not find 'algo/hyprband' (did you mean 'hyperband'"),
    ("budget.rouns=3", "(did you mean 'rounds'?); allowed keys: rounds, cost, workers, executor"),
    ("+task.dimm=3", "Error: task.dimm is not a setting of task=branin (did you mean 'dim'?); allowed: "),
])
def test_the_cli_suggests_the_closest_option_or_key(run_cli, override, hint):
    proc = run_cli("task=branin", override, check=False)
    assert proc.returncode == 2 and hint in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
