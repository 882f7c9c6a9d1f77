"""``python -m hpoflow.report`` on a study written with MLflow's client: the cross-task report, failures
counted, the report logged to the study's parent run, bad input as one-line errors; report.html in Chromium."""
from __future__ import annotations

import csv
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.store.backend import artifact_location
from tests.report.study_store import add_run, add_study_parent

# (task, optimum) x algorithm x seed; gp is better than random, turbo fails on seed 2 of branin
VALUES = {"random": [8.0, 6.0, 5.0], "gp": [7.0, 3.0, 1.5], "turbo": [6.0, 4.0, 2.5]}


def build_study(uri: str, *, with_parent: bool = True, mixed_direction: bool = False) -> str | None:
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("bo", artifact_location=artifact_location(uri))  # beside the db, not ./mlruns
    parent = add_study_parent(client, exp, "bo", "sw") if with_parent else None
    for task, optimum in (("branin", 0.4), ("hartmann6", -3.3)):
        for algo, base in VALUES.items():
            for seed in range(3):
                vals = [v + optimum + 0.1 * seed * (1 + (algo == "random")) for v in base]
                failed = task == "branin" and algo == "turbo" and seed == 2
                direction = "maximize" if mixed_direction and algo == "gp" else "minimize"
                add_run(client, exp, algo=algo, task=task, seed=seed, values=vals[:1] if failed else vals,
                        optimum=optimum, status="FAILED" if failed else "FINISHED", parent=parent, sweep_id="sw",
                        rounds=3, direction=direction)
    return parent


def _report(run_cli, store, out, *extra, check=True):
    return run_cli(f"tracking.uri={store}", "tracking.experiment=bo", f"report.out={out}",
                   "report.best_config=false", *extra, module="hpoflow.report", check=check)


def test_report_counts_failures_and_logs_to_the_parent_run(run_cli, store, tmp_path):
    parent = build_study(store)
    out = tmp_path / "rep"
    proc = _report(run_cli, store, out)
    assert "## Across tasks" in proc.stdout and "Seed adequacy:" in proc.stdout
    overall = proc.stdout.split("## Across tasks", 1)[1]
    assert re.search(r"\| turbo \| 6 \| 1 \| 2 \|", overall)  # 6 runs, 1 failed, 2 tasks
    assert re.search(r"\| gp \| 6 \| 0 \| 2 \|", overall)
    assert "Wilcoxon–Holm" in proc.stdout or "Nemenyi" in proc.stdout
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 3 and "<b>gp</b>" in html and "counts as" in html
    md = (out / "report.md").read_text()
    assert "![cd_diagram](cd_diagram.png)" in md and "random search median final" in md
    for name in ("normalised_regret.png", "average_rank.png", "cd_diagram.png", "cd_diagram.svg"):
        assert (out / name).stat().st_size > 1000
    with open(out / "summary.csv") as fh:
        rows = {(r["task"], r["algo"]): r for r in csv.DictReader(fh)}
    turbo = rows[("branin", "turbo")]
    assert turbo["failed"] == "1" and turbo["runs"] == "3" and turbo["n"] == "2"  # n: finished runs
    assert float(rows[("branin", "random")]["normalised_regret_mean"]) == pytest.approx(1.0)  # the reference
    names = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(parent, "report")}
    assert {"report/report.html", "report/report.md", "report/summary.csv"} <= names
    assert f"parent run {parent}" in proc.stdout


def test_include_failed_false_drops_the_failed_run(store):
    from hpoflow.report import statistics as st
    from hpoflow.report.loading import load_study

    build_study(store)
    kept, dropped = (st.overall(st.normalise(load_study(store, include_failed=flag)).final).set_index("algo")
                     for flag in (True, False))
    assert (kept.loc["turbo", "runs"], kept.loc["turbo", "failed"]) == (6, 1)
    assert (dropped.loc["turbo", "runs"], dropped.loc["turbo", "failed"]) == (5, 0)
    assert kept.loc["turbo", "mean"] > dropped.loc["turbo", "mean"]  # the failure counts as the worst value


def test_bad_input_is_one_line(run_cli, store, tmp_path, capsys):
    from hpoflow.report.cli import main

    build_study(store, with_parent=False, mixed_direction=True)
    mixed = _report(run_cli, store, tmp_path / "r", check=False)  # the real command: no traceback, exit 2
    assert mixed.returncode == 2 and mixed.stderr.count("\n") == 1 and "Traceback" not in mixed.stderr
    assert mixed.stderr.startswith("Error: task 'branin' mixes directions (maximize: runs ")
    base = [f"tracking.uri={store}", f"report.out={tmp_path / 'r'}", "report.best_config=false"]
    for extra, message in ((["report.sweep_id=nope"], "Error: no runs match (store "),
                           (["report.log_to_mlflow=maybe"], ("Error: report.log_to_mlflow=maybe is not allowed; use "
                                                            "one of auto, true, false")),
                           (["report.include_failed=maybe"], "Error: report.include_failed=maybe is not allowed"),
                           (["tracking.experiment=nope"], "Error: tracking.experiment='nope' not found")):
        assert main(base + extra) == 2
        err = [ln for ln in capsys.readouterr().err.splitlines() if " INFO mlflow" not in ln]  # MLflow's own log
        assert len(err) == 1 and err[0].startswith(message), err


def _chromium() -> str | None:
    from scripts.check_ui import find_chromium

    return find_chromium()


PROBE = """<script>window.addEventListener('load', () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.getBoundingClientRect().width > 100);
  document.body.setAttribute('data-rendered', ok.length + '/' + imgs.length);
});</script>"""


@pytest.mark.browser
def test_report_html_renders_its_figures_in_chromium(store, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium (Debian: apt-get install -y chromium)")
    from hpoflow.report.build import build
    from hpoflow.report.loading import load_study
    from scripts.check_ui import CHROMIUM_FLAGS

    build_study(store)
    built = build(load_study(store, experiment="bo"), tmp_path / "rep", best_configs=False)
    page = tmp_path / "probe.html"  # the report plus a probe that counts the images the browser decoded
    page.write_text(built.html.read_text().replace("</body>", PROBE + "</body>"))
    n_figures = built.html.read_text().count("data:image/png;base64,")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, "--window-size=1200,900", f"--user-data-dir={profile}",
                               "--virtual-time-budget=10000", "--dump-dom", Path(page).as_uri()],
                              capture_output=True, text=True, timeout=180, check=False)
    match = re.search(r'data-rendered="(\d+)/(\d+)"', proc.stdout)
    assert match, f"no probe result in the DOM (exit {proc.returncode}): {proc.stderr[-500:]}"
    assert int(match.group(2)) == n_figures >= 7 and int(match.group(1)) == n_figures
