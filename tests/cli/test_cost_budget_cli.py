"""The cost budget through the real CLI: runs given ``budget.cost`` never spend more than it, say what they spent
and why they ended (the summary's line, the tag ``final.cost_note``), and nothing a user reads (the console, the
run's log file, the report) shows the lifted round limit (10^6)."""
from __future__ import annotations

import re

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.budget import ROUNDS_UNDER_COST
from tests.conftest import mlflow_runs

pytestmark = pytest.mark.cli

LIFTED = (str(ROUNDS_UNDER_COST), f"{ROUNDS_UNDER_COST:,}")


def _spent(stdout: str) -> float:
    match = re.search(r"^cost budget (\S+): spent (\S+?)[;,\n]", stdout + "\n", re.M)
    assert match is not None, stdout
    return float(match.group(2))


@pytest.mark.parametrize("extra", [["algo=hyperband"], ["algo=asha", "budget.executor=simulated", "budget.workers=4"]])
def test_a_cost_budgeted_run_spends_at_most_its_budget_and_shows_no_lifted_round_limit(run_cli, store, tmp_path,
                                                                                      extra):
    proc = run_cli(*extra, "task=branin_mf", "task.max_resource=27", "budget.cost=200", f"tracking.uri={store}",
                   "hydra.run.dir=run")
    spent = _spent(proc.stdout)
    assert 200 - 27 < spent <= 200
    assert f"query cost: {spent}" in proc.stdout
    (run,) = mlflow_runs(store, "branin_mf")
    assert run.info.status == "FINISHED" and run.data.metrics["query_cost"] == spent
    assert run.data.tags["final.cost_note"].startswith(f"cost budget 200: spent {spent:g}")
    history = MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "query_cost")
    assert max(m.value for m in history) <= 200
    log = "\n".join(p.read_text() for p in (tmp_path / "run").glob("*.log"))
    rounds = re.findall(r"round (\d+) \(cost (\S+)/200\)", log)
    assert rounds and int(rounds[-1][0]) == len(history) and float(rounds[-1][1]) == spent
    shown = proc.stdout + proc.stderr + log
    assert not any(x in shown for x in LIFTED)


def test_the_report_of_cost_budgeted_and_round_limited_runs_shows_no_lifted_round_limit(run_cli, store, tmp_path):
    run_cli("algo=hyperband", "task=branin_mf", "task.max_resource=27", "budget.cost=150", f"tracking.uri={store}")
    run_cli("algo=hyperband", "task=branin_mf", "task.max_resource=27", "budget.rounds=40", "seed=1",
            f"tracking.uri={store}")
    proc = run_cli(f"tracking.uri={store}", "tracking.experiment=branin_mf", "report.out=report",
                   module="hpoflow.report")
    out = proc.stdout + proc.stderr
    assert "mixes budgets (40 rounds: runs" in out and "no round limit (a cost budget): runs" in out
    files = [p for ext in ("md", "html", "csv") for p in (tmp_path / "report").glob(f"*.{ext}")]
    shown = out + "".join(p.read_text() for p in files)
    assert not any(x in shown for x in LIFTED)
