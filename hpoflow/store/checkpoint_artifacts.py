"""The run's checkpoint kept also in the tracking store, as an artifact of its MLflow run (servers and databases).

On a cluster, the node that ran a job may be gone, and its run folder with it. When the store is one every node
reaches (a server, ``http(s)://``, whose artifacts it proxies; or a database, ``postgresql://``, ``mysql://``,
``mssql://``, whose experiments' artifact location is then one every node reaches: an object store or a shared
folder), every checkpoint written to the run folder is also uploaded as ``checkpoint/a.json`` or
``checkpoint/b.json`` of the run, alternately: an upload cut short by a crash leaves the other slot whole, and
each copy carries the SHA-256 of its content (:mod:`hpoflow.core.checkpoint`), so a torn or foreign copy is
refused on reading. A retry or a re-run on any node that does not find the local file downloads the valid copy
with the most rounds (:func:`fetch`). The SQLite default keeps the local file only (its artifacts live on the
local disk anyway).
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ARTIFACT_DIR = "checkpoint"
SLOTS = ("a.json", "b.json")
SHARED_SCHEMES = ("http", "https", "postgresql", "mysql", "mssql")  # stores several machines write to


def in_store(uri: str | None) -> bool:
    """Whether checkpoints of runs in ``uri`` are mirrored as artifacts: a tracking server or a database other
    than SQLite (``postgresql+psycopg2://`` counts as ``postgresql``)."""
    scheme = str(uri).split("://", 1)[0].split("+", 1)[0].lower() if uri and "://" in str(uri) else ""
    return scheme in SHARED_SCHEMES


THROTTLE_S = 1.0  # a run's saves are uploaded at most this often, besides one after each metric flush


class ArtifactMirror:
    """Uploads each saved checkpoint file into the run's artifacts, alternating between two slots.

    ``first_slot``: the slot written first (a resumed run starts with the slot it did *not* load from).

    ``throttle_s``: upload the first save, then a save only when ``throttle_s`` passed since the last upload; the
    run's tracker then calls :meth:`after_flush` after each metric batch it writes, which uploads the latest
    local checkpoint, so that the store copy always reaches every round the store's metrics hold (what a
    resume checks: :func:`hpoflow.store.resume_guard.verify_store`). A run of quick rounds then uploads at its
    metric flushes, not at every round (20 uploads of a 20-round Branin run cost ~0.3 s through a server); a
    retry on another node redoes at most ``throttle_s`` of rounds beyond what the store holds. None: every
    save is uploaded.
    """

    def __init__(self, client: Any, run_id: str, first_slot: int = 0, throttle_s: float | None = None) -> None:
        self.client, self.run_id, self.slot = client, run_id, first_slot % len(SLOTS)
        self._warned = False
        self.throttle_s = throttle_s
        self._uploaded_at = -math.inf  # the first save is always uploaded: a lost node leaves a copy to resume
        self.uploads = 0

    def upload(self, path: str | Path) -> None:
        """A save of the checkpoint file ``path``: uploaded to the next slot unless throttled."""
        if self.throttle_s is None or time.monotonic() - self._uploaded_at >= self.throttle_s:
            self.upload_now(path)

    def after_flush(self, path: str | Path) -> None:
        """The store's metrics moved: upload the latest checkpoint ``path`` (if one was saved yet)."""
        if Path(path).is_file():
            self.upload_now(path)

    def upload_now(self, path: str | Path) -> None:
        """Upload the checkpoint file ``path`` to the next slot; a failure warns once (the local file stays)."""
        from hpoflow.core import signals
        from hpoflow.store.backend import retry

        self._uploaded_at = time.monotonic()
        name = SLOTS[self.slot]
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / name
            shutil.copyfile(path, copy)
            try:
                with signals.deferred():  # an upload is not cut in half by SIGTERM (the other slot stays whole anyway)
                    retry(lambda: self.client.log_artifact(self.run_id, str(copy), ARTIFACT_DIR), tries=3)
            except Exception as exc:  # noqa: BLE001 - the run goes on; only a resume elsewhere loses this copy
                if not self._warned:
                    warnings.warn(f"could not upload the checkpoint of run {self.run_id} to the store "
                                  f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}); "
                                  "it stays in the run folder only", stacklevel=2)
                    self._warned = True
                return
        self.uploads += 1
        self.slot = (self.slot + 1) % len(SLOTS)


def fetch(client: Any, run_id: str, dest: str | Path) -> tuple[Path, int] | None:
    """Download the run's valid checkpoint copy with the most rounds to ``dest`` (written atomically).

    Returns ``(dest, slot index)``, or None when the run has no valid copy in the store.
    """
    from hpoflow.core.checkpoint import CheckpointError, load

    best: tuple[int, int, Path] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(SLOTS):
            try:
                local = Path(client.download_artifacts(run_id, f"{ARTIFACT_DIR}/{name}", os.path.join(tmp, str(i))))
                state = load(local)  # refuses a copy whose content does not match its SHA-256
            except (CheckpointError, OSError, Exception):  # noqa: BLE001 - missing slot, torn upload, no server
                continue
            if best is None or state.round > best[0]:
                best = (state.round, i, local)
        if best is None:
            return None
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
        os.close(fd)
        shutil.copyfile(best[2], part)
        os.replace(part, dest)
        return dest, best[1]
