"""Start-up: a CLI run loads only what its components need (the surrogate module on first use)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.cli  # times python -m hpoflow's start-up in a subprocess (make test-fast skips it)

PROBE = ("import runpy, sys; sys.argv = ['hpoflow', *sys.argv[1:]]; runpy.run_module('hpoflow', run_name='__main__'); "
         "print('LOADED', 'gpytorch' in sys.modules, 'hpoflow.surrogates.gp' in sys.modules)")


@pytest.mark.parametrize(("algo", "expected"), [("random", "LOADED False False"), ("gp_ei", "LOADED True True")])
def test_surrogate_module_is_imported_only_by_an_algorithm_that_builds_a_model(tmp_path, algo, expected):
    proc = subprocess.run([sys.executable, "-c", PROBE, f"algo={algo}", "task=branin", "budget.rounds=3",
                           "tracking=off", "progress=false", "checkpoint_every=0"],
                          cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert expected in proc.stdout
