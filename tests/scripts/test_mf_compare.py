"""scripts/mf_compare.py --out: live runs saved one file each (a rerun runs only what is missing) and summarised with
the report's against-compute functions; ``--set`` shrinks a real task."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scripts.mf_compare import build, parse_sets, variant
from tests.conftest import REPO, cli_env


def test_set_parses_typed_overrides_per_benchmark():
    assert parse_sets(["digits_gb:max_resource=27,folds=2", "digits_cnn:epochs=9", "x:lr=0.5,name=a"]) == {
        "digits_gb": {"max_resource": 27, "folds": 2}, "digits_cnn": {"epochs": 9}, "x": {"lr": 0.5, "name": "a"}}


def test_a_method_variant_carries_typed_config_overrides():
    assert variant("mf_gp") == ("mf_gp", {})
    assert variant("mf_gp+min_points=5+scheduler=asha_stopping") == (
        "mf_gp", {"min_points": 5, "scheduler": "asha_stopping"})


def test_an_aa_twin_searches_the_same_task_with_another_algorithm_seed():
    from hpoflow.tasks.multi_fidelity import make_branin_mf

    task = make_branin_mf(max_resource=9)
    twin, plain, shifted = (build(m, task, s, 90.0) for m, s in
                            (("hyperband+seed_offset=100", 0), ("hyperband", 0), ("hyperband", 100)))
    draws = [[a.ask(r).config for r in range(1, 4)] for a in (twin, plain, shifted)]
    assert draws[0] == draws[2] and draws[0] != draws[1]


@pytest.mark.cli
def test_saved_runs_resume_and_report_against_compute(tmp_path):
    args = [sys.executable, "scripts/mf_compare.py", "--real", "breast_cancer_gb", "--set",
            "breast_cancer_gb:min_resource=1,max_resource=6,folds=2", "--seeds", "2", "--full-evals", "3",
            "--methods", "random,hyperband,mf_gp", "--out", str(tmp_path), "--jobs", "1"]
    first = subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=600, check=False)
    assert first.returncode == 0, first.stderr[-3000:]
    saved = sorted(p.name for p in tmp_path.glob("*.json"))
    assert len(saved) == 6 and "breast_cancer_gb__mf_gp__1.json" in saved
    run = json.loads((tmp_path / "breast_cancer_gb__hyperband__0.json").read_text())
    assert run["budget"] == 18 and run["max_fidelity"] == 6 and 18 <= run["cost"][-1] < 24
    assert "| mean rank |" in first.stdout and "mf_gp vs each" in first.stdout and "paired:" in first.stdout
    (tmp_path / "breast_cancer_gb__random__1.json").unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.json")}
    again = subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.json") if p.name in kept} == kept  # not rerun
    assert (tmp_path / "breast_cancer_gb__random__1.json").is_file()  # only the missing run trained again
    assert again.stdout.split("CPU s per run")[0] == first.stdout.split("CPU s per run")[0]  # same runs, same tables


@pytest.mark.cli
def test_simulated_workers_and_the_decision_cpu_table(tmp_path):
    args = [sys.executable, "scripts/mf_compare.py", "--real", "lc_digits_cnn", "--set", "lc_digits_cnn:max_fidelity=4",
            "--seeds", "1", "--full-evals", "4", "--methods", "random,freeze_thaw", "--out", str(tmp_path), "--jobs",
            "1", "--workers", "3", "--against", "freeze_thaw"]
    out = subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "3 worker(s)" in out.stdout and "freeze_thaw vs each" in out.stdout
    run = json.loads((tmp_path / "lc_digits_cnn__freeze_thaw__0.json").read_text())
    assert 16 - 4 < run["cost"][-1] <= 16  # within the budget, short of it by less than the job that did not fit
    assert set(run["fidelity"]) <= {1.0, 2.0, 4.0}  # the ladder 1, 2, 4 (factor 2)
    table = subprocess.run([sys.executable, "scripts/mf_decision_cpu.py", str(tmp_path)], cwd=REPO, env=cli_env(),
                           capture_output=True, text=True, timeout=300, check=False)
    assert table.returncode == 0, table.stderr[-3000:]
    row = next(line for line in table.stdout.splitlines() if line.startswith("| freeze_thaw | lc_digits_cnn |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "1" and int(cells[4]) == len(run["value"]) and float(cells[6]) > 0
