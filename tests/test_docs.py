from pathlib import Path

import pytest

from hpoflow.cli import docs
from hpoflow.cli.docs import END, PAGE, RESULTS_END, RESULTS_PAGE, RESULTS_START, START, groups_markdown
from tests.conftest import REPO


def test_the_config_reference_table_is_generated_from_the_registry():
    text = (REPO / PAGE).read_text()
    block = text.split(START)[1].split(END)[0].strip()
    assert block == groups_markdown(), "run: python -m hpoflow.cli.docs --write"
    assert "| task | `breast_cancer` | tune a classifier (task.model=rf\\|mlp\\|gb)" in block  # one cell, escaped


def test_the_benchmarks_index_lists_every_results_file_with_its_commands():
    text = (REPO / RESULTS_PAGE).read_text()
    block = text.split(RESULTS_START)[1].split(RESULTS_END)[0].strip()
    assert block == docs.results_markdown(REPO / "results"), "run: python -m hpoflow.cli.docs --write"
    assert block.count("### ") == len(list((REPO / "results").glob("*.txt")))


def test_write_readme_updates_the_reference_page_beside_it_and_a_file_without_markers_is_refused(tmp_path, capsys,
                                                                                                  monkeypatch):
    """``--write README.md`` (the table's old home) still works: it rewrites the config reference and says so."""
    page = tmp_path / PAGE
    page.parent.mkdir(parents=True)
    page.write_text(f"# Config\n{START}\nold\n{END}\nafter\n")
    (tmp_path / "README.md").write_text("# hpoflow\nno table here\n")
    monkeypatch.setattr("sys.argv", ["docs", "--write", str(tmp_path / "README.md")])
    docs.main()
    out = capsys.readouterr().out
    assert f"the table is in {page}" in out and "updated" in out
    assert page.read_text() == f"# Config\n{START}\n{groups_markdown()}\n{END}\nafter\n"
    assert (tmp_path / "README.md").read_text() == "# hpoflow\nno table here\n"
    (tmp_path / "other.md").write_text("nothing\n")
    monkeypatch.setattr("sys.argv", ["docs", "--write", str(tmp_path / "other.md")])
    with pytest.raises(SystemExit, match=f"Error: .*other.md has no {START}"):
        docs.main()


def test_readme_starts_with_the_two_commands_ci_uses():
    text = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in ci and "make test" in text and "make run" in text
    assert text.index("make run") < text.index("```python")
    assert Path(REPO / "Makefile").read_text().count("\ndocs:") == 1
