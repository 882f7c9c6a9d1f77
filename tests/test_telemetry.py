"""hpoflow turns MLflow's usage telemetry off (nothing leaves the machine) unless the user set it themselves."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

PROBE = ("import hpoflow, os; from mlflow.telemetry.utils import is_telemetry_disabled; "
         "print(os.environ['MLFLOW_DISABLE_TELEMETRY'], is_telemetry_disabled())")


def _probe(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "CI")}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env={**base, **env}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-1000:]
    return proc.stdout.split()[-2] + " " + proc.stdout.split()[-1]


def test_importing_hpoflow_turns_mlflow_telemetry_off_and_the_users_setting_wins():
    assert _probe() == "true True"
    assert _probe(MLFLOW_DISABLE_TELEMETRY="false").startswith("false")
