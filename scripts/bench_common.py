"""Shared plumbing of the speed benchmarks: one thread, the process CPU clock, and `--against <git rev>`.

The machine these run on is shared, so every timing is process CPU time of a single-threaded process
(``time.process_time``): other processes do not inflate it the way they inflate wall time. ``--against REV``
measures the old revision in the same invocation: ``git archive`` exports REV's ``hpoflow/`` and ``conf/`` into
a temporary folder (nothing in the repository changes), and the benchmark runs itself there in a subprocess
whose ``PYTHONPATH`` puts that copy first, printing its numbers as JSON for the parent's table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ROOT = Path(__file__).resolve().parents[1]


def pin_threads() -> None:
    """One BLAS/OpenMP thread: set before numpy/torch are imported (the figures swing several-fold otherwise)."""
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"


def before_layers() -> bool:
    """Whether the imported hpoflow is a revision from before the layer folders (``--against`` an old commit).

    Decided by the package's files, not by trying imports: an editable install of the current tree would answer
    ``hpoflow.config`` from there and mix two revisions in one process."""
    import hpoflow

    return not (Path(hpoflow.__file__).parent / "config" / "settings.py").is_file()


def algorithm_for(name: str, task: Any, seed: int, rounds: int) -> Any:
    """``name`` at its ``conf/`` defaults for ``task``, built by the library (``hpoflow.make_algorithm``).

    A revision measured with ``--against`` from before ``make_algorithm`` took a task gets the build step that
    revision's CLI used (its registry entry, a :class:`BuildContext` on the task): the old numbers stay comparable.
    """
    import hpoflow

    try:
        return hpoflow.make_algorithm(name, task, seed, rounds=rounds)
    except Exception:  # noqa: BLE001 - an old revision: its make_algorithm takes a space only
        from hpoflow.algorithms.base import BuildContext

        registry = __import__("hpoflow.registry" if before_layers() else "hpoflow.config.registry", fromlist=["get"])
        entry = registry.get("algorithm", name)
        return entry.load()(entry.make_config(), BuildContext(task=task, rounds=rounds, seed=seed))


def export_revision(rev: str) -> Path:
    """A temporary folder holding ``hpoflow/`` and ``conf/`` as they are at git revision ``rev``."""
    folder = Path(tempfile.mkdtemp(prefix="hpoflow-rev-"))
    archive = folder / "rev.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev, "hpoflow", "conf"],
                   check=True, capture_output=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()
    return folder


def revision_label(rev: str) -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True,
                         check=False)
    return f"{rev} ({out.stdout.strip()})" if out.returncode == 0 and out.stdout.strip() != rev else rev


def child_argv(argv: list[str]) -> list[str]:
    """This script's arguments without ``--against REV``: what a measuring child process is given."""
    args = list(argv)
    if "--against" in args:
        i = args.index("--against")
        del args[i:i + 2]
    return args


def run_at(root: Path, script: Path, args: list[str]) -> dict[str, Any]:
    """Run ``script`` with ``args`` + ``--json`` against the package under ``root``; return its JSON output."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    for name in THREAD_VARIABLES:
        env[name] = "1"
    proc = subprocess.run([sys.executable, str(script), *args, "--json"], env=env, capture_output=True, text=True,
                          check=False,
                          cwd=root)
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} at {root} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def add_against_arguments(parser: argparse.ArgumentParser) -> None:
    """``--against REV`` (also measure git revision REV, in a child process) and the child's hidden ``--json``."""
    parser.add_argument("--against", default=None, help="also measure this git revision, in a subprocess")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child mode: print JSON only


def answered_as_child(args: argparse.Namespace, measure: Callable[[argparse.Namespace], Any]) -> bool:
    """In child mode (``--json``) print ``measure(args)`` as one JSON line and return True; else False."""
    if args.json:
        print(json.dumps(measure(args)))
    return bool(args.json)


def measure_with_against(args: argparse.Namespace, measure: Callable[[argparse.Namespace], Any],
                         script: str) -> dict[str, Any]:
    """``{"now": measure(args)}`` and, with ``--against REV``, REV's measurement from ``script`` run at REV."""
    results = {"now": measure(args)}
    if args.against:
        results[revision_label(args.against)] = run_at(export_revision(args.against), Path(script).resolve(),
                                                       child_argv(sys.argv[1:]))
    return results
