from hpoflow.cli.docs import END, START, groups_markdown
from tests.conftest import REPO


def test_readme_group_table_is_generated_from_the_registry():
    text = (REPO / "README.md").read_text()
    block = text.split(START)[1].split(END)[0].strip()
    assert block == groups_markdown(), "run: python -m hpoflow.cli.docs --write README.md"


def test_readme_starts_with_the_two_commands_ci_uses():
    text = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in ci and "make test" in text and "make run" in text
    assert text.index("make run") < text.index("## Usage")
