"""Every code block of README.md and of the documentation site (``docs/**/*.md``) is run or checked here (see
``tests/docs_pages.py`` for what each kind of block gets).

Per page: its ``run`` commands in order in one scratch folder that holds one MLflow store for all of them (a copy
of the session's empty store: no table migrations), ``python -m hpoflow...`` commands forked from the warm CLI
server (no interpreter start-up each), the rest through bash; then its python blocks in order in one interpreter.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, mlflow_runs
from tests.docs_pages import (
    COVERED,
    PAGES,
    all_blocks,
    blocks,
    concrete,
    page_commands,
    page_python,
    scratch,
    shell_env,
    shrink,
)

RUNNABLE = [p for p in PAGES if any(k == "run" for k, _ in page_commands(p)) or page_python(p)]
SESSION = """
import json, sys
blocks = json.load(open(sys.argv[1]))
scope = {"__name__": "__main__"}
for i, body in enumerate(blocks):
    print(f"--- block {i}", flush=True)
    exec(compile(body, f"{sys.argv[2]} python block {i}", "exec"), scope)
"""
WARM = re.compile(r"python -m (hpoflow(?:\.\w+)*)( |$)")


def _run(cmd: str, work: Path, run_cli) -> subprocess.CompletedProcess:
    """A plain ``python -m hpoflow...`` line (no shell syntax, no launcher) from the warm CLI server; else bash."""
    m = WARM.match(cmd)
    if m and not re.search(r"[|&;$<>()`]|hydra/launcher=", cmd):
        return run_cli(*shlex.split(cmd)[3:], module=m.group(1), cwd=work, check=False)
    return subprocess.run(["bash", "-c", cmd], cwd=work, env=shell_env(), capture_output=True, text=True,
                          timeout=600, check=False)


def test_every_page_has_a_kind_for_every_block_and_a_test_for_every_covered_section():
    langs = {b.lang for b in all_blocks()}
    assert langs <= {"bash", "python", "yaml", "text", ""}, langs
    for section, test in COVERED.items():
        assert (REPO / test).is_file(), test
        assert any(b.section == section for b in all_blocks()), f"no section {section!r} left: update COVERED"
    assert len(RUNNABLE) >= 10, RUNNABLE


@pytest.mark.parametrize("page", RUNNABLE)
def test_the_page_runs(page, tmp_path, run_cli, empty_store_file):
    """A page's commands (shrunk to a few rounds) and python blocks, as a reader runs them, in order."""
    work = scratch(tmp_path)
    (work / "outputs").mkdir()
    shutil.copyfile(empty_store_file, work / "outputs" / "mlflow.db")  # one store for the page's commands
    ran = []
    for k, cmd in page_commands(page):
        if k != "run" and k != "browser":
            continue
        cmd = f"{cmd} --help" if k == "browser" else shrink(concrete(cmd, work))
        proc = _run(cmd, work, run_cli)
        assert proc.returncode == 0, f"{page}: {cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        ran.append(cmd)
    python = page_python(page)
    if python:
        (work / "blocks.json").write_text(json.dumps(python))
        proc = subprocess.run([sys.executable, "-c", SESSION, "blocks.json", page], cwd=work, env=shell_env(),
                              capture_output=True, text=True, timeout=900, check=False)
        assert proc.returncode == 0, f"{page}: python blocks\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        printed = proc.stdout.split("--- block ")[1:]
        assert len(printed) == len(python) and all(p.strip().count("\n") >= 1 for p in printed), \
            f"{page}: every block prints something: {printed}"
    CHECKS.get(page, lambda work, ran: None)(work, ran)


def _study_and_report(work: Path, ran: list[str]) -> None:
    assert any("hpoflow.report" in c for c in ran)
    assert list((work / "outputs" / "report" / "branin").glob("regret_vs_round_*.svg"))


def _readme(work: Path, ran: list[str]) -> None:
    assert (work / "outputs" / "report" / "readme" / "report.html").is_file()
    runs = mlflow_runs(f"sqlite:///{work / 'outputs' / 'mlflow.db'}", "branin")
    assert len(runs) == 4 and {r.info.status for r in runs} == {"FINISHED"}


def _library(work: Path, ran: list[str]) -> None:
    runs = mlflow_runs(f"sqlite:///{work / 'outputs' / 'mlflow.db'}")
    assert sorted(r.data.tags["task"] for r in runs if r.info.status == "FINISHED") == ["loss", "parallel"]
    (parallel,) = [r for r in runs if r.data.tags["task"] == "parallel"]
    assert parallel.data.params["budget.workers"] == "4" and parallel.data.metrics["best_value"] > 0.5


def _ask_tell(work: Path, ran: list[str]) -> None:
    from mlflow import MlflowClient

    (run,) = [r for r in mlflow_runs(f"sqlite:///{work / 'outputs' / 'mlflow.db'}")
              if r.data.tags["task"] == "my-training"]
    assert run.info.status == "FINISHED" and (work / "outputs" / "my-training.json").is_file()
    assert any("digits_study.py" in c for c in ran)
    client = MlflowClient(f"sqlite:///{work / 'outputs' / 'mlflow.db'}")
    assert len(client.get_metric_history(run.info.run_id, "value")) == 12


def _plugin(work: Path, ran: list[str]) -> None:
    assert any("--config-dir" in c for c in ran)


def _multi_objective(work: Path, ran: list[str]) -> None:
    runs = mlflow_runs(f"sqlite:///{work / 'outputs' / 'mlflow.db'}")
    assert {r.data.tags["algo"] for r in runs} == {"parego", "random", "gp_ei", "optuna_motpe"}
    several = [r for r in runs if r.data.tags["task"] != "gramacy"]  # gramacy: one objective with constraints
    assert {r.data.tags["algo"] for r in several} == {"parego", "random", "optuna_motpe"}
    assert all("hypervolume" in r.data.metrics for r in several)
    assert all("best_feasible" in r.data.metrics for r in runs if r.data.tags["algo"] == "gp_ei")


CHECKS = {"README.md": _readme, "docs/tutorials/study-and-report.md": _study_and_report,
          "docs/tutorials/library.md": _library, "docs/tutorials/ask-tell.md": _ask_tell,
          "docs/tutorials/plugin.md": _plugin, "docs/tutorials/multi-objective.md": _multi_objective}


def test_yaml_file_listings_are_the_files():
    """A yaml block headed by a path (``# examples/plugin/conf/task/quadratic.yaml``) is that file's text (its
    other yaml blocks are generated option files: tests/core/test_component.py)."""
    listings = [b for b in all_blocks() if b.lang == "yaml" and re.match(r"# \S+\.yaml\n", b.body)]
    assert listings
    for b in listings:
        path = REPO / b.body.split("\n", 1)[0][2:]
        assert path.is_file(), f"{b.page}: {path}"
        assert b.body.split("\n", 1)[1] == path.read_text(), f"{b.page}: the listing of {path.name} is not the file"


def test_interface_sketches_name_modules_that_exist():
    import importlib.util

    from tests.docs_pages import SKETCHES

    for page in SKETCHES:
        named = {m for b in blocks(page) if b.lang == "python" for m in re.findall(r"# (hpoflow(?:\.\w+)+)", b.body)}
        assert len(named) >= 5, page
        assert [m for m in sorted(named) if importlib.util.find_spec(m) is None] == [], page


def test_every_page_is_in_the_site_nav_and_every_readme_link_resolves():
    nav = (REPO / "mkdocs.yml").read_text()
    for page in PAGES:
        if page.startswith("docs/"):
            assert f": {page.removeprefix('docs/')}" in nav, f"{page} is not in mkdocs.yml's nav"
    readme = PAGES["README.md"]
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (REPO / target).exists(), f"README links to a missing {target}"
    for target, anchor in re.findall(r"\]\((docs/[^)#\s]+)#([^)]+)\)", readme):
        headings = re.findall(r"^#+ (.*)$", (REPO / target).read_text(), re.M)
        slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
        assert anchor in slugs, f"README links to {target}#{anchor}, which has no such heading"


def test_the_readme_is_short_and_starts_with_the_two_commands():
    readme = PAGES["README.md"]
    assert len(readme.splitlines()) <= 200
    assert readme.index("make run") < readme.index("make test") < readme.index("```python")
    assert [b for b in blocks("README.md") if b.lang == "python"], "the library example"
