"""What the CLI leaves behind and prints at the end: secret-free Hydra files, one-line end-of-run messages."""
from __future__ import annotations

import hashlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hpoflow.core.signals import Interrupted
from hpoflow.store.health import StoreLost
from hpoflow.store.lease import LeaseLost
from hpoflow.store.params import mask_secrets

if TYPE_CHECKING:
    from hpoflow.core.objectives import Objectives
    from hpoflow.core.records import Record

RUN_LOST = (StoreLost, LeaseLost)  # the run cannot be written any more; its checkpoint is kept (exit 1)


def mask_hydra_outputs(hc: Any) -> list[Path]:
    """Mask secrets in the files Hydra wrote before the job started; returns those it changed.

    ``<run dir>/.hydra/{config,hydra,overrides}.yaml`` and, in a sweep, ``<sweep dir>/multirun.yaml`` hold the
    composed config and the command line, e.g. ``tracking.uri=http://user:password@host``.
    """
    from hpoflow.store.params import redact_text_file

    paths = []
    if hc.output_subdir is not None:
        folder = Path(hc.runtime.output_dir) / str(hc.output_subdir)
        paths += [folder / name for name in ("config.yaml", "hydra.yaml", "overrides.yaml")]
    changed = [p for p in paths if redact_text_file(p)]  # a file that is not there is not changed
    if hc.sweep.dir:  # one file for the whole sweep: masked once per process while it stays as masked
        sweep_file = Path(str(hc.sweep.dir)) / "multirun.yaml"
        seen = _stat(sweep_file)
        if seen is None or _MASKED.get(sweep_file) != seen:
            if redact_text_file(sweep_file):
                changed.append(sweep_file)
            _MASKED[sweep_file] = _stat(sweep_file)
    return changed


_MASKED: dict[Path, tuple[int, int, int] | None] = {}  # sweep files this process masked: (inode, mtime, size) then


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _resume_hint(run_dir: str | None, resume: str | None) -> str:
    from hpoflow.core.checkpoint import FILENAME

    target = run_dir if run_dir and (Path(run_dir) / FILENAME).is_file() else resume
    return f"; continue it with: python -m hpoflow resume={target}" if target else ""


def interrupted_message(exc: Interrupted, run_dir: str | None, resume: str | None = None) -> str:
    """One line: which signal, what happened to the run, and how to continue it."""
    return f"{exc}: the run is KILLED with every completed round logged{_resume_hint(run_dir, resume)}"


def disk_full_message(run_dir: str | None, resume: str | None = None) -> str:
    """One line for a run stopped by a full disk (under its store or its run folder)."""
    hint = _resume_hint(run_dir, resume)
    return ("run failed: the disk is full (under the MLflow store or the run folder); the run is FAILED with every "
            "round it logged" + (f"; free space, then{hint.removeprefix(';')}" if hint else "; free space"))


def lost_message(exc: BaseException, run_dir: str | None, resume: str | None = None) -> str:
    """One line for a run that cannot be written any more (store lost, lease taken over)."""
    if isinstance(exc, LeaseLost):  # the process that took it over continues it: no resume hint
        return f"run stopped: {exc}"
    hint = _resume_hint(run_dir, resume)
    if isinstance(exc, StoreLost) and hint:
        hint = "; its checkpoint is kept: restore the store (or name another with tracking.uri=), then" + \
            hint.removeprefix(";")
    return f"run stopped: {exc}{hint}"


def exit_without_store_cleanup(code: int) -> None:
    """Flush our output and leave at once, skipping the interpreter's clean-up.

    After ``StoreLost`` SQLite's connections must not be closed normally: closing runs a WAL checkpoint
    into a file that became read-only (``chattr +i``), which ends in SIGBUS from its shared-memory map.
    Nothing of the run is lost: the metrics are in the store (or never will be) and the checkpoint
    was written atomically after the last completed round.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def print_run_summary(summary: dict[str, Any], uri: str | None, run_id: str | None,
                      experiment_id: str | None = None, algorithm_tags: dict[str, str] | None = None,
                      objectives: Objectives | None = None, records: Sequence[Record] = ()) -> None:
    """The end-of-run lines; for a server, the run's page (in place of MLflow's own unmasked ``View run`` line).

    ``algorithm_tags``: what the algorithm recorded about its own choices (``algo=auto``), one ``key: value`` line each.
    ``objectives`` and ``records``: a task with constraints or several objectives prints its best feasible point
    or its front (``hpoflow.cli.summary``).
    """
    from hpoflow.cli.summary import summary_lines

    lines = [f"{key}: {value}" for key, value in (algorithm_tags or {}).items() if value]
    lines += summary_lines(summary, objectives, records)
    if uri:
        uri = mask_secrets(uri)
        lines.append(f"MLflow run {run_id} in {uri}")
        if uri.startswith(("http://", "https://")):
            page = f"{uri.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}" if experiment_id else uri
            lines.append(f"browse: {page}")
        else:
            lines.append(f"browse: mlflow ui --backend-store-uri {uri}")
    print("\n".join(lines), file=sys.stdout, flush=True)


def sweep_id_from(sweep_dir: str) -> str:
    return hashlib.sha1(sweep_dir.encode()).hexdigest()[:12]
