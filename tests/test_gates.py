"""The quality gates besides ruff and lint-imports (tests/test_architecture.py): `mypy hpoflow` is clean at the
strictness `[tool.mypy]` in pyproject.toml states (check_untyped_defs, warn_unused_ignores, Python 3.10 as the
oldest supported version), and `.pre-commit-config.yaml` runs the same three gates without a download.

mypy keeps its incremental cache in the git-ignored `.mypy_cache/` of the checkout: a cold run takes 40-45 s of
CPU (60-140 s wall on a shared 2-core machine), a warm one 4-15 s. mypy is in the `dev` extra; without it the
tests skip.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*args: str, cwd: Path = ROOT, cache: Path | None = None) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e .[dev]")
    cache_dir = cache or ROOT / ".mypy_cache"
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache_dir), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def test_mypy_is_clean_on_the_package() -> None:
    start = time.perf_counter()
    out = _mypy("--config-file", str(ROOT / "pyproject.toml"), "hpoflow")
    print(f"\nmypy hpoflow: {time.perf_counter() - start:.1f} s wall; {out.stdout.strip().splitlines()[-1:]}")
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]


def test_the_configured_strictness_finds_an_error_in_an_unannotated_function(tmp_path: Path) -> None:
    """The gate can fail: with the project's settings a type error in an unannotated body is reported (mypy's
    default skips such bodies), and so is a `# type: ignore` that silences nothing."""
    (tmp_path / "probe.py").write_text(
        "def untyped(x):\n"
        "    return len(3)\n"
        "\n"
        "\n"
        "y: int = 1  # type: ignore[assignment]\n"
    )
    out = _mypy("--config-file", str(ROOT / "pyproject.toml"), "probe.py", cwd=tmp_path, cache=tmp_path / "cache")
    assert out.returncode == 1, out.stdout
    assert 'probe.py:2: error: Argument 1 to "len" has incompatible type "int"' in out.stdout, out.stdout
    assert "probe.py:5: error: Unused \"type: ignore\" comment" in out.stdout, out.stdout


def test_pre_commit_runs_the_three_gates_with_the_installed_tools() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing to clone
    assert all(h["language"] == "system" for h in hooks.values())  # nothing to install: the dev extra's tools
    assert hooks["ruff"]["entry"].startswith("ruff check")
    assert hooks["mypy"]["entry"] == "mypy hpoflow"
    assert hooks["import-linter"]["entry"] == "lint-imports"
    pre_commit = pytest.importorskip("pre_commit", reason="pre-commit is in the dev extra")
    out = subprocess.run([sys.executable, "-m", pre_commit.__name__, "validate-config", ".pre-commit-config.yaml"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
