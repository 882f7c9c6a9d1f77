"""`results/` holds what the benchmarks and paper studies printed. Each file opens with the command(s) that
regenerate it (`# Regenerate: <command>`, one line per invocation), and each such command names things that
exist: the script and its flags, the experiment, the test files. Every `results/<file>` the repository mentions
exists, and no script in `scripts/` is left that nothing refers to."""
from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

RESULTS = REPO / "results"
HEADER = "# Regenerate: "


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [f for f in out.stdout.splitlines() if (REPO / f).is_file()]


def regenerate_commands(path: Path) -> list[str]:
    """The `# Regenerate:` lines at the top of a results file."""
    commands = []
    for line in path.read_text().splitlines():
        if not line.startswith(HEADER):
            break
        commands.append(line[len(HEADER):].strip())
    return commands


def problems(command: str) -> list[str]:
    """What in ``command`` does not exist (a script, one of its flags, an experiment, a test file)."""
    tokens = shlex.split(command)
    found = []
    script = next((t for t in tokens if t.startswith("scripts/")), None)
    if script is not None:
        source = REPO / script
        if not source.is_file():
            return [f"{script} does not exist"]
        text = source.read_text()
        text += "".join(p.read_text() for p in (REPO / "scripts").glob("*.py")  # flags of a shared parser
                        if re.search(rf"^from scripts\.{p.stem} import|^import scripts\.{p.stem}\b", text, re.M))
        found += [f"{script} has no flag {t}" for t in tokens if t.startswith("--") and f'"{t}"' not in text]
    elif tokens[:3] == ["python", "-m", "pytest"]:
        found += [f"{t} does not exist" for t in tokens if t.startswith("tests/") and not (REPO / t).is_file()]
    elif tokens[:3] not in (["python", "-m", "hpoflow"], ["python", "-m", "hpoflow.batch"],
                            ["python", "-m", "hpoflow.report"]):
        found.append(f"not a script, study, report or test command: {command}")
    found += [f"experiment={m} does not exist" for m in re.findall(r"(?<![\w.])experiment=(\w+)", command)
              if not (REPO / "conf" / "experiment" / f"{m}.yaml").is_file()]
    return found


def test_the_header_check_names_what_is_missing() -> None:
    assert problems("python scripts/bench_peers.py --seeds 5") == []
    assert problems("python scripts/reproduce_bbo.py --seeds 5") == ["scripts/reproduce_bbo.py does not exist"]
    assert problems("python scripts/bench_peers.py --sedes 5") == ["scripts/bench_peers.py has no flag --sedes"]
    assert problems("python -m hpoflow -m experiment=nope") == ["experiment=nope does not exist"]
    assert problems("python -m pytest -s tests/test_nope.py") == ["tests/test_nope.py does not exist"]


def test_every_results_file_opens_with_the_commands_that_regenerate_it() -> None:
    entries = sorted(RESULTS.iterdir())
    files = [f for f in entries if f.is_file()]
    assert files, "results/ is empty"
    # a folder holds only the figures of the results file of its name (results/mo_small/ beside results/mo_small.txt)
    folders = [d for d in entries if d.is_dir()]
    assert [d.name for d in folders if not (RESULTS / f"{d.name}.txt").is_file()] == []
    assert [str(p) for d in folders for p in d.rglob("*") if p.is_file() and p.suffix not in (".png", ".svg")] == []
    missing = [f.name for f in files if not regenerate_commands(f)]
    assert missing == [], f"no '{HEADER}<command>' first line: {missing}"
    bad = {f.name: p for f in files for c in regenerate_commands(f) if (p := problems(c))}
    assert bad == {}


REFERENCE = re.compile(r"(?<![\w/:.])(scripts/)?results/([\w.\-]+\.(?:txt|log|json|csv))(?!\w)")  # not <rev>:path


def test_every_mentioned_results_file_exists_and_none_lives_under_scripts() -> None:
    assert not (REPO / "scripts" / "results").exists()
    stale, dangling = [], []
    for rel in _tracked():
        if rel == "tests/test_results.py" or rel.endswith((".png", ".svg", ".pdf", ".db")):
            continue
        for m in REFERENCE.finditer((REPO / rel).read_text(errors="replace")):
            if m.group(1):
                stale.append(f"{rel}: {m.group(0)}")
            elif not (RESULTS / m.group(2)).is_file():
                dangling.append(f"{rel}: {m.group(0)}")
    assert stale == [], "results moved to the top-level results/"
    assert dangling == []


def test_every_script_is_referred_to() -> None:
    """A script that nothing (README, tests, another script, a results header or text) mentions is dead."""
    scripts = [p for p in (REPO / "scripts").iterdir() if p.suffix in (".py", ".sh") and p.name != "__init__.py"]
    corpus = "\n".join((REPO / rel).read_text(errors="replace") for rel in _tracked()
                       if rel.endswith((".md", ".py", ".sh", ".txt", ".yaml", ".toml")) and not rel.endswith(".db"))
    dead = []
    for script in scripts:
        others = corpus.replace(script.read_text(), "")  # its own text does not count
        if not re.search(rf"\b{re.escape(script.stem)}\b", others):
            dead.append(script.name)
    assert dead == []
