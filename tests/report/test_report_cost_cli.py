"""The multi-fidelity tutorial's "Comparing methods against compute" section run as the user would (a tiny
multi-fidelity study, then ``python -m hpoflow.report``), and the new keys' one-line errors."""
from __future__ import annotations

import csv
import subprocess

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.report.cli import main
from tests.docs_pages import scratch, section_commands, shell_env

TITLE = "### Comparing methods against compute"


@pytest.mark.cli
def test_the_readme_cost_section_runs_and_reports_against_compute(tmp_path):
    lines = section_commands(TITLE)
    assert len(lines) == 3 and "budget.cost=" in lines[0] and "report.incumbent=any" in lines[2]
    work = scratch(tmp_path)
    proc = subprocess.run(["bash", "-c", "\n".join(["set -euo pipefail", *lines])], cwd=work, env=shell_env(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    out = work / "outputs" / "report" / "cost"
    md = (out / "report.md").read_text()
    assert "## Against compute" in md
    assert "| branin_mf | 810 | budget.cost | 0.397887 | known optimum |" in md
    for heading in ("Normalised regret at fractions of the budget", "Area under the anytime curve",
                    "Cost to reach a target", "Data profile over cost"):
        assert f"### {heading}" in md, heading
    assert "Only evaluations at the task's full fidelity count" in md
    assert (out / "learning_curves_branin_mf.png").is_file() and "Learning curves: every trial of one run" in md
    # the per-task table's simple regret and best value follow the same rule, the runs' own incumbent's
    assert "Simple regret and the best value count only the evaluations at the task's full fidelity (81)" in md
    for stem in ("nr_vs_cost_branin_mf", "data_profile_cost"):
        assert (out / f"{stem}.png").is_file() and (out / f"{stem}.svg").is_file()
    with open(out / "cost_summary.csv") as fh:
        rows = {r["algo"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"asha", "hyperband", "random"}
    assert {"nr_at_0.125", "rank_at_1", "area", "reached", "median_cost_ratio"} <= set(rows["random"])
    # the target is the median of random's two final values: the better of its two runs reaches it, the other not
    assert float(rows["random"]["reached"]) == 0.5 and 0 < float(rows["random"]["median_cost_ratio"]) <= 1
    assert all(0 <= float(r["area"]) <= 1 for r in rows.values())
    anyway = (work / "outputs" / "report" / "cost_any" / "report.md").read_text()
    assert "Every evaluation counts" in anyway and "| algorithm | 1/4 | 1 |" in anyway and "1/8" not in anyway
    # the report went into the study's parent run, cost_summary.csv with it
    store = next(ln.split(" in ", 1)[1].strip() for ln in proc.stdout.splitlines() if ln.startswith("MLflow run "))
    client = MlflowClient(tracking_uri=store)
    (parent,) = client.search_runs([client.get_experiment_by_name("branin_mf").experiment_id],
                                   "tags.`hpoflow.kind` = 'study'")
    assert "report/cost_summary.csv" in {a.path for a in client.list_artifacts(parent.info.run_id, "report")}


@pytest.mark.parametrize(("arg", "message"), [
    ("report.x=time", "Error: report.x=time is not allowed; use one of auto, cost, round"),
    ("report.fractions=0,1/2", "Error: report.fractions: '0' is not allowed; use fractions of the budget in (0, 1]"),
    ("report.incumbent=best", "Error: report.incumbent=best is not allowed; use one of full, any"),
])
def test_bad_cost_settings_are_one_line_errors(arg, message, capsys):
    assert main([arg]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
