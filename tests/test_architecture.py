"""The package's shape: one layer per folder (the import-linter contract in pyproject.toml), zero import cycles
between modules, a short top level, old import paths still working, and ruff clean (docs/architecture.md)."""
from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_layers_contract_holds() -> None:
    cli = pytest.importorskip("importlinter.cli")
    assert cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_between_modules() -> None:
    grimp = pytest.importorskip("grimp")
    g = grimp.build_graph("hpoflow")
    graph = {m: {d for d in g.find_modules_directly_imported_by(m)
                 if not m.startswith(d + ".")}  # a package's own __init__ is not a cycle
             for m in g.modules}
    cycles = _cycles(graph)
    print(f"module-level import cycles in hpoflow: {len(cycles)} ({len(graph)} modules)")
    assert cycles == []


def test_at_most_eight_modules_at_the_top() -> None:
    top = sorted(p.name for p in (ROOT / "hpoflow").glob("*.py"))
    assert len(top) <= 8, top


def test_every_layer_folder_says_what_it_may_import() -> None:
    for pkg in ("core", "config", "store", "runner", "cli", "algorithms", "tasks", "surrogates", "acquisition",
                "report"):
        doc = importlib.import_module(f"hpoflow.{pkg}").__doc__ or ""
        assert doc.strip(), pkg
        assert "may import" in doc.lower(), pkg


def test_old_import_paths_are_the_same_modules_with_a_warning() -> None:
    from hpoflow.core.moved import MOVED

    for old, new in MOVED.items():
        sys.modules.pop(f"hpoflow.{old}", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(f"hpoflow.{old}")
        assert module is importlib.import_module(f"hpoflow.{new}"), old
        assert any(issubclass(w.category, DeprecationWarning) and f"hpoflow.{new}" in str(w.message)
                   for w in caught), old
    from hpoflow.records import Evaluation  # the README's plug-in paths

    import hpoflow
    assert Evaluation is hpoflow.Evaluation
    assert hpoflow.Task is importlib.import_module("hpoflow.tasks.base").Task


def test_no_code_of_ours_uses_an_old_path() -> None:
    from hpoflow.core.moved import MOVED

    names = "|".join(re.escape(k) for k in sorted(MOVED, key=len, reverse=True))
    old = re.compile(rf"^[ \t]*(from|import) hpoflow\.({names})\b(?!\.)"
                     rf"|^[ \t]*from hpoflow import .*\b({names})\b", re.M)
    hits = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
            for folder in ("hpoflow", "tests", "scripts", "examples") for p in (ROOT / folder).rglob("*.py")
            if p.name != "moved.py" and p.name != "test_architecture.py"
            for m in old.finditer(p.read_text())
            if "no-redef" not in p.read_text()[m.start():].split("\n", 2)[0]]  # --against fallbacks in scripts
    assert hits == []


def test_python_dash_m_old_name_still_runs() -> None:
    for old, word in (("hpoflow.runs", "stale"), ("hpoflow.docs", "--write")):
        out = subprocess.run([sys.executable, "-m", old, "--help"], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert word in out.stdout, out.stdout


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e .[dev])")
    out = subprocess.run([ruff, "check", "hpoflow", "tests", "scripts", "examples", "hydra_plugins"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:]
