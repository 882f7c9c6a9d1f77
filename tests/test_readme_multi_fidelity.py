"""The multi-fidelity tutorial's "Stop bad trials early" section run as a user would: its four commands through the
shell, then its Python block and the ask/tell page's "Trials that report as they train" block; the runs read back
from MLflow."""
from __future__ import annotations

import subprocess

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs
from tests.docs_pages import scratch, section_blocks, section_commands, shell_env

TITLE = "Stop bad trials early"


def section_python() -> list[str]:
    return section_blocks(TITLE, "python") + section_blocks("Trials that report as they train", "python")


@pytest.mark.cli
def test_the_readme_multi_fidelity_commands_run_and_log_learning_curves(tmp_path):
    lines = section_commands(TITLE)
    assert len(lines) == 4 and all("budget.cost=" in c for c in lines)
    work = scratch(tmp_path)
    proc = subprocess.run(["bash", "-c", "\n".join(["set -euo pipefail", *lines])], cwd=work, env=shell_env(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    uri = f"sqlite:///{work / 'outputs' / 'mlflow.db'}"
    runs = {r.data.tags["algo"] + "/" + r.data.tags["task"]: r for r in mlflow_runs(uri)}
    assert set(runs) == {"hyperband/branin_mf", "asha/breast_cancer", "auto/hartmann6_mf", "asha/lc_replay"}
    assert all(r.info.status == "FINISHED" for r in runs.values())
    assert runs["auto/hartmann6_mf"].data.tags["auto.choice"] == "freeze_thaw"
    client = MlflowClient(tracking_uri=uri)
    for key, run in runs.items():
        cost = client.get_metric_history(run.info.run_id, "query_cost")
        budget = float(run.data.params["budget.cost"])
        assert budget - 200 < cost[-1].value <= budget, key  # the cost budget holds
        assert any(k.startswith("lc/config_") for k in run.data.metrics), key
    replay = runs["asha/lc_replay"]
    sim = [m.value for m in client.get_metric_history(replay.info.run_id, "sim_time")]
    assert len(sim) > 10 and max(sim) > 0  # simulated seconds of 4 workers


def test_the_readme_multi_fidelity_python_blocks_run(tmp_path, monkeypatch, capsys):
    blocks = section_python()
    assert len(blocks) == 2 and "fidelity=(" in blocks[0] and "should_stop()" in blocks[1]
    monkeypatch.chdir(tmp_path)
    scopes = []
    for i, body in enumerate(blocks):
        scope: dict = {"__name__": "__main__"}
        exec(compile(body, f"docs multi-fidelity block {i}", "exec"), scope)  # noqa: S102 - our docs
        assert capsys.readouterr().out.strip(), f"block {i} printed nothing"
        scopes.append(scope)
    result = scopes[0]["result"]
    assert 400 < result.summary["query_cost"] <= 500 and abs(result.best_config["lr"] - 0.01) < 0.05
    study = scopes[1]["study"]
    assert study.result().summary["query_cost"] >= 300
    assert any(r.fidelity < 27 for r in study.records)  # some trials stopped early
