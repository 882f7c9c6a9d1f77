"""Issue 41's noise: no MLflow INFO lines when hpoflow makes a store, a mistyped scheme (``htp://``) in one line of
our own (not MLflow's model-registry sentence, cut mid-word), what a SQLite URI's missing folders do (created, as
README says; a path that cannot be made is refused), and the README's UI guide against the installed MLflow."""
from __future__ import annotations

import glob
import importlib.util
from pathlib import Path

import pytest

from tests.conftest import mlflow_runs
from tests.docs_pages import DOCS as README

RUN = ("algo=random", "task=branin", "budget.rounds=2", "progress=false")


def test_a_new_store_prints_no_mlflow_info_lines(run_cli, tmp_path):
    """Before: "INFO mlflow.store.db.utils: Creating initial MLflow database tables..." and "Updating database
    tables" on every fresh store, single runs and sweeps alike."""
    for args in (RUN, ("-m", *RUN, "seed=0,1")):
        uri = f"sqlite:///{tmp_path / ('m' if args[0] == '-m' else 's') / 'mlflow.db'}"
        proc = run_cli(*args, f"tracking.uri={uri}")
        assert "mlflow.store.db.utils" not in proc.stderr and "database tables" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("module, args", [("hpoflow", RUN), ("hpoflow", ("-m", *RUN, "seed=0,1")),
                                          ("hpoflow.report", ()), ("hpoflow.store.runs", ("stale",))])
def test_a_mistyped_scheme_is_one_line_naming_what_is_allowed(run_cli, module, args):
    proc = run_cli(*args, "tracking.uri=htp://127.0.0.1:5000", module=module, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line == ("Error: tracking.uri='htp://127.0.0.1:5000': 'htp://' is not a store MLflow opens; allowed: "
                    "sqlite:///FILE, http(s)://HOST:PORT, postgresql://..., mysql://..., mssql://..., "
                    "file:///FOLDER, databricks")
    assert "registry" not in proc.stderr


def test_a_sqlite_store_in_new_folders_is_made_and_one_under_a_file_is_refused(run_cli, tmp_path):
    """README: 'the missing folders of a SQLite file are created'; one that cannot be made is unusable."""
    uri = f"sqlite:///{tmp_path / 'studies' / 'a' / 'mlflow.db'}"
    run_cli(*RUN, f"tracking.uri={uri}")
    assert [r.info.status for r in mlflow_runs(uri)] == ["FINISHED"]
    assert "the missing folders of a SQLite file are created" in " ".join(README.split())
    (tmp_path / "afile").write_text("")
    bad = run_cli(*RUN, f"tracking.uri=sqlite:///{tmp_path / 'afile' / 'sub' / 'mlflow.db'}", check=False)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith(
        f"Error: tracking.uri='sqlite:///{tmp_path / 'afile' / 'sub' / 'mlflow.db'}': cannot open the MLflow store")


def test_the_readme_ui_guide_names_the_assistant_panel_the_installed_mlflow_opens():
    """MLflow 3.17's UI opens its assistant panel on the first visit; if a release drops it, the README's step
    must change too."""
    bundle = Path(importlib.util.find_spec("mlflow").origin).parent / "server" / "js" / "build" / "static" / "js"
    text = "".join(Path(f).read_text(errors="ignore") for f in glob.glob(str(bundle / "*.js")))
    assert "MLflow Assistant" in text and "mlflow.assistant.fab.autoOpenedOnFirstLoad" in text
    assert "**MLflow Assistant** (Beta) panel" in README
