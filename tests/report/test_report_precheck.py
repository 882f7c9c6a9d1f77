"""Refusals answered in a fraction of a second: no torch, MLflow, pandas or SciPy is imported before the one line
(an unknown study or experiment of the report, a config error or a study without -m in the main CLI)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import cli_env

HEAVY = ("torch", "mlflow", "pandas", "scipy", "sklearn", "matplotlib")
# runs a module as `python -m` does and, on the way out, names the heavy modules it imported
PROBE = """
import atexit, runpy, sys
atexit.register(lambda: print('heavy:', ','.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr))
sys.argv = [{module!r}, *{args!r}]
runpy.run_module({module!r}, run_name='__main__', alter_sys=True)
"""


def probe(module: str, args: list[str], cwd) -> tuple[int, list[str], str]:
    code = PROBE.format(heavy=HEAVY, module=module, args=args)
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=cli_env(), capture_output=True, text=True,
                          timeout=120)
    lines = proc.stderr.strip().splitlines()
    return proc.returncode, lines[:-1], lines[-1].removeprefix("heavy:").strip()


@pytest.fixture
def branin_store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    MlflowClient(tracking_uri=uri).create_experiment("branin")
    return uri


@pytest.mark.parametrize("args,line", [
    (["experiment=smoek"], "Error: experiment=smoek is unknown (did you mean 'smoke'?); allowed: "),
    (["tracking.experiment=brainn"], "Error: tracking.experiment='brainn' not found in sqlite:///"),
])
def test_the_report_refuses_a_missing_study_or_experiment_before_any_heavy_import(branin_store, tmp_path, args,
                                                                                   line):
    status, errors, heavy = probe("hpoflow.report", [f"tracking.uri={branin_store}", *args], tmp_path)
    assert status == 2 and len(errors) == 1 and errors[0].startswith(line), errors
    assert heavy == ""
    if "brainn" in args[0]:
        assert errors[0].endswith("(did you mean 'branin'?); available: branin, Default")


def test_the_report_of_an_experiment_that_is_there_still_loads_it(branin_store, tmp_path):
    status, errors, heavy = probe("hpoflow.report", [f"tracking.uri={branin_store}", "tracking.experiment=branin",
                                                     f"report.out={tmp_path / 'rep'}"], tmp_path)
    assert status == 2 and "no runs" in " ".join(errors).lower() and "mlflow" in heavy  # past the precheck


@pytest.mark.parametrize("args,line", [
    (["algo=hyprband", "task=branin"], "Error: Could not find 'algo/hyprband' (did you mean 'hyperband'"),
    (["experiment=smoke"], "Error: experiment=smoke is a study (a sweep): run it with -m"),
])
def test_the_cli_refuses_before_importing_torch_or_mlflow(tmp_path, args, line):
    status, errors, heavy = probe("hpoflow", [*args, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert status == 2 and errors[-1].startswith(line), errors
    assert not {"torch", "mlflow"} & set(heavy.split(","))
