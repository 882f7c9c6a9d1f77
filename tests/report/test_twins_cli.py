"""A/A twins (``sweep.twin``) as the study-and-report tutorial runs them: the twin's runs, its hash and tags, and
the report's power statement."""
from __future__ import annotations

import subprocess

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.store.sweeps import config_hash
from tests.docs_pages import scratch, section_commands, shell_env

TITLE = "## A/A twins: how small a difference can a study detect?"


def test_a_twin_has_its_own_hash_and_an_untwinned_run_keeps_its_old_one():
    raw = {"algo": {"name": "random"}, "seed": 3, "sweep": {"cell": None}}
    assert config_hash(raw) == config_hash({**raw, "sweep": {"cell": None, "twin": 0}})
    assert config_hash(raw) != config_hash({**raw, "sweep": {"cell": None, "twin": 1}})


@pytest.mark.parametrize(("arg", "message"), [
    ("sweep.twin=-1", "Error: sweep.twin=-1 must be an integer from 0 (not a twin) to 1000"),
    ("sweep.twin=5000", "Error: sweep.twin=5000 must be an integer from 0 (not a twin) to 1000"),
])
def test_a_bad_twin_is_a_one_line_error(tmp_path, arg, message):
    proc = subprocess.run(["python", "-m", "hpoflow", "algo=random", "task=branin", "budget.rounds=2", arg],
                          cwd=tmp_path, env=shell_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.startswith(message) and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.cli
def test_the_tutorials_twins_run_and_the_report_states_what_the_study_detects(tmp_path):
    lines = section_commands(TITLE)
    assert len(lines) == 3 and "sweep.twin=1" in lines[1]
    work = scratch(tmp_path)
    proc = subprocess.run(["bash", "-c", "\n".join(["set -euo pipefail", *lines])], cwd=work, env=shell_env(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    md = (work / "outputs" / "report" / "twins" / "report.md").read_text()
    assert "A/A twins random twin1 and random (one method, other random streams)" in md
    assert "this comparison of 3 methods (3 pairs) detects a mean-rank difference of" in md
    client = MlflowClient(tracking_uri=f"sqlite:///{work}/outputs/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("twins").experiment_id], "tags.algo = 'random'")
    by = {(r.data.tags["seed"], r.data.tags.get("twin", "0")): r for r in runs if "seed" in r.data.tags}
    assert len(by) == 16  # 8 seeds, each with its twin
    for seed in map(str, range(8)):  # the same task seed, other algorithm streams: other points
        original, twin = by[(seed, "0")], by[(seed, "1")]
        assert twin.info.run_name == f"random-twin1-branin-s{seed}"
        assert original.data.metrics["value"] != twin.data.metrics["value"]
