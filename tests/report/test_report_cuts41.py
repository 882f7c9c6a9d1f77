"""Issue 41's report paper cuts, in-process on small stores made with MLflow's client: the default report folder
is per selection and a replaced report is announced; a report over a study plus single runs is not logged into
the study's parent run (a new summary run each time); one colour per algorithm in every figure."""
from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.report import figures
from hpoflow.report.cli import REPORT_ARTIFACT_DIR, main
from tests.report.study_store import add_run, add_study_parent

ALGOS = ("random", "gp_ei", "turbo")


def _study(uri: str, seeds: int = 6, single: bool = True) -> str:
    """A study (parent + ALGOS x 2 tasks x seeds) in experiment 'branin', plus one single run outside it."""
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("branin")
    parent = add_study_parent(client, exp, "branin", "sw")
    for i, algo in enumerate(ALGOS):
        for task in ("branin", "hartmann"):
            for seed in range(seeds):
                add_run(client, exp, algo=algo, task=task, seed=seed, parent=parent, optimum=0.0,
                        values=[3.0 - i * 0.5 - 0.1 * seed, 2.0 - i * 0.4, 1.5 - i * 0.3 + 0.05 * seed])
    if single:
        add_run(client, exp, algo="random", task="branin", seed=99, sweep_id="single", optimum=0.0,
                values=[2.5, 2.0, 1.9])
    client.set_terminated(parent)
    return parent


@pytest.fixture
def study_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'mlflow.db'}"


def test_the_default_folder_is_per_selection_and_a_replaced_report_is_announced(study_uri, tmp_path, capsys):
    """Before: every report went to report/, and the second silently replaced the first."""
    _study(study_uri, single=False)
    assert main([f"tracking.uri={study_uri}", "tracking.experiment=branin", "report.log_to_mlflow=false",
                 "report.best_config=false"]) == 0
    assert main([f"tracking.uri={study_uri}", "tracking.experiment=branin", "report.tags.algo=gp_ei",
                 "report.log_to_mlflow=false", "report.best_config=false"]) == 0
    assert (tmp_path / "report" / "branin" / "report.html").is_file()
    assert (tmp_path / "report" / "branin_algo-gp_ei" / "report.html").is_file()
    assert "Note: replacing" not in capsys.readouterr().err
    assert main([f"tracking.uri={study_uri}", "tracking.experiment=branin", "report.log_to_mlflow=false",
                 "report.best_config=false"]) == 0
    err = capsys.readouterr().err
    assert "Note: replacing the report in report/branin (written " in err and "report.out=<folder>" in err


def test_a_report_over_a_study_and_single_runs_goes_to_a_new_summary_run_each_time(study_uri, capsys):
    """Before: tracking.experiment=branin (the study's runs and a single run) was logged into the study's parent
    run, and the next such report replaced it there."""
    parent = _study(study_uri)
    client = MlflowClient(tracking_uri=study_uri)
    for _ in range(2):
        assert main([f"tracking.uri={study_uri}", "tracking.experiment=branin", "report.best_config=false"]) == 0
    out = capsys.readouterr().out
    assert "to the study's parent run" not in out and out.count("logged the report as run ") == 2
    assert client.list_artifacts(parent, REPORT_ARTIFACT_DIR) == []
    exp = client.get_experiment_by_name("branin").experiment_id
    reports = client.search_runs([exp], "tags.`hpoflow.kind` = 'report'")
    assert len(reports) == 2 and all(r.info.status == "FINISHED" for r in reports)
    # the study alone is the study's report: into its parent run, as before
    assert main([f"tracking.uri={study_uri}", f"report.parent_run_id={parent}", "report.best_config=false"]) == 0
    assert f"to the study's parent run {parent}" in capsys.readouterr().out
    assert {a.path for a in client.list_artifacts(parent, REPORT_ARTIFACT_DIR)} >= {"report/report.html"}


def test_every_figure_of_a_report_gives_an_algorithm_one_colour(study_uri, monkeypatch):
    """Before: the CD diagram (scikit-posthocs' own colour cycle, in rank order) and the line plots (matplotlib's,
    in name order) gave one algorithm two colours."""
    seen: dict[str, dict[str, set[str]]] = {}
    save = figures._save

    def record(fig, out, stem):
        from matplotlib.colors import to_hex

        for ax in fig.axes:
            for line in ax.get_lines():
                label = str(line.get_label())
                algo = label.split(" (")[0]
                if algo in ALGOS:
                    seen.setdefault(stem, {}).setdefault(algo, set()).add(to_hex(line.get_color()))
            for text in ax.texts:  # the CD diagram: "gp_ei (1.50)" / "(2.50) random", in its elbow's colour
                words = text.get_text().replace("(", " ").replace(")", " ").split()
                algo = next((w for w in words if w in ALGOS), None)
                if algo is not None:
                    seen.setdefault(stem, {}).setdefault(algo, set()).add(to_hex(text.get_color()))
        return save(fig, out, stem)

    monkeypatch.setattr(figures, "_save", record)
    _study(study_uri, single=False)
    assert main([f"tracking.uri={study_uri}", "report.log_to_mlflow=false", "report.best_config=false"]) == 0
    assert {"cd_diagram", "normalised_regret", "average_rank", "regret_vs_round_branin", "data_profile"} <= set(seen)
    first = {algo: seen["normalised_regret"][algo] for algo in ALGOS}
    for stem, colours in seen.items():
        assert colours == first, f"{stem}: {colours} against normalised_regret's {first}"
    expected = figures.palette(ALGOS)
    assert first == {a: {expected[a]} for a in ALGOS} and len(set(expected.values())) == len(ALGOS)
