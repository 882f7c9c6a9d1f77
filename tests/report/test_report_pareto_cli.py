"""experiment=mo_small as one command on a tiny scale (5 rounds, ZDT1, 1 seed) and its report in a subprocess: the
hypervolume-regret table and the Pareto figure, with numbers checked against the runs' own logged hypervolume; the
run's pareto.json / pareto.csv artifacts; a library run with constraints (no known front); a single-objective
report keeps its sections."""
from __future__ import annotations

import csv
import json

import pytest
from mlflow.tracking import MlflowClient

import hpoflow
from hpoflow.report.build import build
from hpoflow.report.loading import load_study
from hpoflow.tasks.multi_objective import MAX_HYPERVOLUME


@pytest.mark.cli
def test_tiny_mo_small_and_its_report(run_cli, tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    run_cli("-m", "experiment=mo_small", "budget.rounds=5", "task=zdt1", "seed=0", "algo=parego,random",
            f"tracking.uri={uri}")
    proc = run_cli("experiment=mo_small", f"tracking.uri={uri}", f"report.out={tmp_path / 'rep'}",
                   module="hpoflow.report")
    out = tmp_path / "rep"
    assert "## Several objectives: final hypervolume regret" in proc.stdout
    md = (out / "report.md").read_text()
    assert "## Several objectives: hypervolume regret" in md and "### Per task: final hypervolume regret" in md
    assert "known front (formula)" in md and "Normalised regret over the budget" not in md  # no single-objective part
    for stem in ("pareto_zdt1", "hv_regret"):
        assert (out / f"{stem}.png").is_file() and (out / f"{stem}.svg").is_file()
    with open(out / "pareto_summary.csv") as fh:
        rows = {r["algo"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"parego", "random"}
    client = MlflowClient(tracking_uri=uri)
    runs = [r for r in client.search_runs([client.get_experiment_by_name("mo_small").experiment_id])
            if r.data.tags.get("hpoflow.kind") != "study"]
    assert len(runs) == 2
    for run in runs:
        # by hand: ZDT1's box is [0, 11]^2 (ideal (0, 0), reference (11, 11)), so the normalised regret is the
        # raw one over 121, the raw one being the known front's 120 + 2/3 minus the run's own logged hypervolume
        regret = (MAX_HYPERVOLUME["zdt1"] - run.data.metrics["hypervolume"]) / 121.0
        assert float(rows[run.data.tags["algo"]]["hv_regret_mean"]) == pytest.approx(regret, abs=1e-7)  # tag: 8 digits
        assert json.loads(run.data.tags["objectives"]) == {"objectives": {"f1": "min", "f2": "min"},
                                                           "reference": [11.0, 11.0]}
        folder = tmp_path / run.info.run_id
        folder.mkdir()
        pareto = json.loads(open(client.download_artifacts(run.info.run_id, "pareto.json", str(folder))).read())
        assert len(pareto["front"]) == int(float(run.data.tags["final.pareto_size"]))
        assert set(pareto["front"][0]) == {"config", "values"} and len(pareto["front"][0]["config"]) == 30
    assert "| zdt1 |" in proc.stdout and "HV regret of 50% attainment" in proc.stdout


def two(config):
    x, y = config["x"], config["y"]
    return {"f1": x, "f2": (1 - x) ** 2 + y, "mem": 100 * y}


def test_a_constrained_library_run_writes_its_front_and_is_its_own_reference(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    space = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}
    r = hpoflow.minimize(two, space, algo="random", rounds=12, objectives={"f1": "min", "f2": "min"},
                         constraints={"mem": ("<=", 70)}, tracking=uri, seed=1)
    folder = tmp_path / "art"
    folder.mkdir()
    client = MlflowClient(tracking_uri=uri)
    written = json.loads(open(client.download_artifacts(r.run_id, "pareto.json", str(folder))).read())
    assert written["front"] == [{"config": p["config"], "values": p["values"]} for p in r.pareto]
    assert written["constraints"] == {"mem": ["<=", 70.0]} and all(p["values"]["mem"] <= 70 for p in r.pareto)
    with open(client.download_artifacts(r.run_id, "pareto.csv", str(folder))) as fh:
        assert len(list(csv.DictReader(fh))) == len(r.pareto)
    with open(client.download_artifacts(r.run_id, "trajectory.csv", str(folder))) as fh:
        assert {"values.f1", "values.f2", "values.mem"} <= set(next(csv.DictReader(fh)))
    built = build(load_study(uri), tmp_path / "rep", best_configs=False)
    md = built.markdown.read_text()
    # no known front, no reference point: the run's own front is the reference (regret 0), box to nadir + 10%
    assert "best front found across all methods in this report" in md and "nadir of the reference front" in md
    with open(tmp_path / "rep" / "pareto_summary.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    assert float(row["hv_regret_mean"]) == 0.0


def test_a_report_of_single_and_several_objective_runs_keeps_them_apart(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    space = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}
    for algo in ("random", "gp_ei"):
        hpoflow.minimize(lambda c: (c["x"] - 0.3) ** 2 + c["y"], space, algo=algo, rounds=4, tracking=uri,
                         name="single")
    hpoflow.minimize(two, space, algo="random", rounds=5, objectives={"f1": "min", "f2": "min"}, tracking=uri,
                     name="several")
    # no run ever meets this constraint: that task is left out with a warning, the report still written
    hpoflow.minimize(two, space, algo="random", rounds=3, objectives={"f1": "min", "f2": "min"},
                     constraints={"mem": ("<=", -1)}, tracking=uri, name="never")
    built = build(load_study(uri), tmp_path / "rep", best_configs=False)
    md = built.markdown.read_text()
    assert "## Across tasks" in md and "## Several objectives: hypervolume regret" in md
    assert any("no run found a feasible point" in w for w in built.warnings)
    with open(built.csv) as fh:  # the single-objective summary lists only the single-objective runs' task
        assert {r["algo"] for r in csv.DictReader(fh)} == {"random", "gp_ei"}
    with open(tmp_path / "rep" / "pareto_summary.csv") as fh:
        assert [r["algo"] for r in csv.DictReader(fh)] == ["random"]
