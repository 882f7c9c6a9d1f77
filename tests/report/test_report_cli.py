"""``python -m hpoflow.report`` on a real sweep: selection by tags, Markdown/CSV/PNG/SVG, summary run."""
from __future__ import annotations

import csv

from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs


def test_report_selects_by_tags_writes_files_and_logs_a_summary_run(run_cli, store, tmp_path):
    run_cli("-m", "algo=random,gp_ei", "task=branin", "seed=0,1", "budget.rounds=4", f"tracking.uri={store}",
            "progress=false")
    out = tmp_path / "rep"
    proc = run_cli(f"tracking.uri={store}", "tracking.experiment=branin", f"report.out={out}",
                   "report.tags={algo: gp_ei}", "report.log_to_mlflow=true", module="hpoflow.report")
    assert "| gp_ei | 2 |" in proc.stdout and "| random |" not in proc.stdout
    assert "known optimum" in proc.stdout and "best configuration" in proc.stdout
    md = (out / "report.md").read_text()
    assert "## branin" in md and "x0=" in md and "regret_vs_round_branin" in md
    with open(out / "summary.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["algo"] for r in rows] == ["gp_ei"] and rows[0]["n"] == "2" and '"x0"' in rows[0]["best_config"]
    for stem in ("regret_vs_round_branin", "regret_vs_cost_branin"):
        assert (out / f"{stem}.png").exists() and (out / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
    (summary_run,) = [r for r in mlflow_runs(store, "branin") if r.data.tags.get("hpoflow.kind") == "report"]
    names = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(summary_run.info.run_id)}
    assert {"report.md", "summary.csv", "regret_vs_cost_branin.svg"} <= names
    # the summary run is not itself aggregated; unknown keys are one-line errors
    again = run_cli(f"tracking.uri={store}", f"report.out={tmp_path / 'rep2'}", module="hpoflow.report").stdout
    assert "| gp_ei | 2 |" in again and "| random | 2 |" in again
    bad = run_cli(f"tracking.uri={store}", "report.colour=red", module="hpoflow.report", check=False)
    assert bad.returncode == 2 and "report.colour" in bad.stderr and "report.tags" in bad.stderr
