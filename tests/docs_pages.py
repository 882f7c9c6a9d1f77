"""The user documentation as the tests read it: README.md and every page of the site (``docs/**/*.md``), their
sections and their fenced code blocks, and how each block is run by a test.

Every fenced block is one of:

- ``bash``: commands, one a line (``\\`` continuations joined, trailing `` # comments`` removed). Each has a
  :func:`kind`: ``run`` (run by ``tests/test_docs_pages.py``, budgets shrunk), ``make`` (the target must exist),
  ``study`` (a paper study: its experiment file and report layout are checked), ``browser`` (run with ``--help``;
  ``tests/scripts/test_check_ui.py`` runs it), ``server`` (``mlflow ui``: started by ``tests/test_readme.py``),
  ``covered`` (a section that a test of its own runs literally, :data:`COVERED`) or ``results`` (the generated
  index of ``results/``: ``tests/test_results.py`` checks each command's script, flags and experiment).
- ``python``: run in order in one interpreter per page (a reader's session: a block may use names the blocks before
  it on the same page defined), unless it is an interface sketch (:data:`SKETCHES`: the modules it names must exist),
  a file listing (first line ``# <path>.py -- ...``, checked by the test
  :data:`COVERED` names) or in a covered section.
- ``yaml``: a file listing (first line ``# <path>``: equal to that file) or a generated option file
  (``tests/core/test_component.py``).
- ``text`` and unlabelled fences: what a command prints, not code.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO, cli_env

ROUNDS = 3
DOCS_DIR = REPO / "docs"


def _pages() -> dict[str, str]:
    paths = [REPO / "README.md", *sorted(DOCS_DIR.rglob("*.md"))]
    return {str(p.relative_to(REPO)): p.read_text() for p in paths}


PAGES = _pages()  # "README.md", "docs/getting-started.md", ... -> text
DOCS = "\n".join(PAGES.values())  # everything a user reads, for "the docs say X" checks

# sections a test of their own runs as the user would (the test named checks what they print and store)
COVERED = {
    "Running a study on a Ray cluster": "tests/cluster/test_readme_cluster.py",
    "A large study straight into the database": "tests/cluster/test_readme_cluster.py",
    "SLURM": "tests/cluster/test_readme_cluster.py",
    "A shared tracking server (PostgreSQL)": "tests/cluster/test_readme_cluster.py",
    "Stop bad trials early": "tests/test_readme_multi_fidelity.py",
    "Trials that report as they train": "tests/test_readme_multi_fidelity.py",
    "Comparing methods against compute": "tests/report/test_report_cost_cli.py",
    "A/A twins: how small a difference can a study detect?": "tests/report/test_twins_cli.py",
    "Adding a built-in algorithm: three files": "tests/core/test_component.py",
}
CLUSTER = ("Running a study on a Ray cluster", "A large study straight into the database", "SLURM",
           "A shared tracking server (PostgreSQL)")
RESULTS_INDEX = ("<!-- results:start -->", "<!-- results:end -->")
FILE_LISTING = re.compile(r"# (hpoflow|tests)/\S+\.py -- ")
# pages whose python blocks are interface sketches (signatures without bodies), not programs: the modules their
# comments name must exist (tests/test_docs_pages.py)
SKETCHES = ("docs/architecture.md",)


@dataclass(frozen=True)
class Block:
    page: str
    section: str  # the title of the heading it is under ("" before the first)
    lang: str
    body: str
    generated: bool  # inside the generated results index


def blocks(page: str) -> list[Block]:
    """The fenced blocks of a page, in order, each with the section it is in."""
    text, out, section, fence = PAGES[page], [], "", None
    lines, body = text.splitlines(), []
    generated = False
    for line in lines:
        if fence is None:
            if line.startswith(RESULTS_INDEX[0]):
                generated = True
            elif line.startswith(RESULTS_INDEX[1]):
                generated = False
            elif m := re.match(r"#+ (.*)", line):
                section = m.group(1).strip()
            elif m := re.match(r"```(\w*)", line):
                fence, body = m.group(1), []
        elif line.startswith("```"):
            out.append(Block(page, section, fence, "\n".join(body) + "\n", generated))
            fence = None
        else:
            body.append(line)
    return out


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def commands(body: str) -> list[str]:
    """One command per line (``\\`` continuations joined), trailing ``# comments`` removed."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        line = re.split(r"\s+#\s", line.strip(), maxsplit=1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _title(title: str) -> str:
    return title.lstrip("#").strip()


def section_blocks(title: str, lang: str) -> list[str]:
    """The ``lang`` blocks of the section headed ``title`` (``"### X"`` or ``"X"``; on whichever page has it)."""
    found = [b.body for b in all_blocks() if b.section == _title(title) and b.lang == lang]
    assert found or any(re.search(rf"^#+ {re.escape(_title(title))}$", t, re.M) for t in PAGES.values()), \
        f"no section {title!r} in README.md or docs/"
    return found


def section_commands(title: str) -> list[str]:
    """The bash commands of one section (up to the next heading of any level), on whichever page it is."""
    return [c for body in section_blocks(title, "bash") for c in commands(body)]


def kind(cmd: str, block: Block | None = None) -> str:
    if block is not None and block.generated:
        return "results"
    if block is not None and block.section in COVERED:
        return "covered"
    if cmd.startswith("make "):
        return "make"
    if re.match(r"python -m hpoflow(\.report)? (-m )?experiment=(?!smoke\b)\w+", cmd):
        return "study"  # a paper study: minutes to hours; its file and its report layout are checked instead
    if cmd.startswith("python scripts/check_ui.py"):
        return "browser"
    if cmd.startswith(("mlflow ui", "mlflow server")):
        return "server"
    return "run"


def page_commands(page: str) -> list[tuple[str, str]]:
    """``(kind, command)`` of every bash command of a page, in order."""
    return [(kind(c, b), c) for b in blocks(page) if b.lang == "bash" for c in commands(b.body)]


def all_commands() -> list[tuple[str, str]]:
    return [kc for page in PAGES for kc in page_commands(page)]


def page_python(page: str) -> list[str]:
    """The python blocks a page's session runs (file listings and covered sections left out)."""
    return [b.body for b in blocks(page) if b.lang == "python" and b.section not in COVERED
            and not FILE_LISTING.match(b.body) and page not in SKETCHES]


def shrink(cmd: str) -> str:
    """Tiny budgets for hpoflow jobs (``--help``/``--cfg`` run nothing and stay as written)."""
    if not re.search(r"-m hpoflow(\s|$)", cmd) or "--help" in cmd or "--cfg" in cmd:
        return cmd
    cmd = re.sub(r"budget\.rounds=\d+", f"budget.rounds={ROUNDS}", cmd)
    return cmd if "budget.rounds=" in cmd else f"{cmd} budget.rounds={ROUNDS}"


def shell_env() -> dict[str, str]:
    env = cli_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python, mlflow
    env["MPLBACKEND"] = "Agg"
    return env


def scratch(tmp_path: Path) -> Path:
    """A folder to run the docs' commands in, as a clone's top folder: ``examples`` and ``scripts`` linked."""
    for name in ("examples", "scripts"):
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def concrete(cmd: str, work: Path) -> str:
    """A command whose arguments are the docs' examples of a run (``resume=outputs/runs/<date>/<folder>``, a run
    id, ``tracking.uri=...``) pointed at a run the commands before it made in ``work``."""
    if "resume=" not in cmd:
        return cmd
    folders = sorted(work.glob("outputs/runs/*/*/checkpoint.json"), key=lambda p: p.stat().st_mtime)
    assert folders, "no run folder for the docs' resume examples"
    folder = folders[-1].parent
    cmd = re.sub(r"resume=outputs/runs/\S+", f"resume={folder.relative_to(work)}", cmd)
    if re.search(r"resume=[0-9a-f]{32}\b", cmd):
        from hpoflow.core.checkpoint import load

        run_id = str(load(folder / "checkpoint.json").meta["run_id"])
        cmd = re.sub(r"resume=[0-9a-f]{32}\b", f"resume={run_id}", cmd)
        cmd = cmd.replace("tracking.uri=...", f"tracking.uri=sqlite:///{work / 'outputs' / 'mlflow.db'}")
    return cmd
