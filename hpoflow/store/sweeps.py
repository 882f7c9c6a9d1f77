"""Studies: one MLflow parent run per sweep, a content hash per job, and safe re-runs of a whole sweep.

A study is a multirun (``python -m hpoflow -m ...``, typically ``experiment=<name>``). Its *key* is a hash of
what the sweep declares (the experiment chosen, the sweeper's parameters, the command's overrides), so the
same command finds the same study again. The Hydra callback (``hpoflow.store.callbacks.StudyCallback``)
creates or reopens the parent run and passes its id to every job *through the job config*
(``sweep.parent_run_id``, added to the overrides every job is composed from), which works for the basic,
joblib, Ray and SLURM launchers alike.

Each job carries ``hpoflow.config_hash``: a hash of its resolved config (seed included; output folders,
tracking and progress settings excluded). Before any work, a job looks for a child of the parent with the
same hash and decides (:func:`plan`): skip a FINISHED run, resume a run whose writer is gone from its
checkpoint, keep a FAILED run unless ``sweep.rerun_failed=true``, or start a new run. Nothing is logged twice.
"""
from __future__ import annotations

import hashlib
import json
import sys
import uuid
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any

KIND_TAG = "hpoflow.kind"            # "study" on a parent run
STUDY_TAG = "hpoflow.study"          # the study's name (experiment name, or the MLflow experiment)
STUDY_KEY_TAG = "hpoflow.study_key"  # hash of the sweep's declaration
HASH_TAG = "hpoflow.config_hash"     # hash of a job's resolved config
INVOCATION_TAG = "hpoflow.invocation"   # the invocation of the sweep command that created the run
RESUMED_TAG = "hpoflow.resumed_in"      # the invocation that resumed it last
SUPERSEDED_TAG = "hpoflow.superseded"   # "true" on a FAILED run that a rerun replaced (reports skip it)
PARENT_TAG = "mlflow.parentRunId"       # MLflow's own nesting tag: the UI groups children under the parent
RETRY_ENV = "HPOFLOW_RAY_ATTEMPT"       # set by hpoflow's Ray launcher: n > 0 in the n-th retry of a lost job
NOT_HASHED = ("tracking", "resume", "progress", "checkpoint_every", "sweep", "hydra")


class ConfigHashCollision(ValueError):
    """Two different configs share one hash (never expected; refused rather than merged)."""


def canonical(raw: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config that decides a run's result (what the hash covers).

    ``budget.executor`` never does; ``budget.workers`` only when above 1 (runs made before it existed keep
    their hashes); ``sweep.twin`` (an A/A twin's number) only when above 0."""
    out = {k: v for k, v in raw.items() if k not in NOT_HASHED}
    twin = (raw.get("sweep") or {}).get("twin") or 0
    if twin:
        out["twin"] = twin
    if isinstance(out.get("budget"), dict):
        budget = {k: v for k, v in out["budget"].items() if k != "executor"}
        if budget.get("workers", 1) == 1:
            budget.pop("workers", None)
        out["budget"] = budget
    return out


def config_hash(raw: dict[str, Any]) -> str:
    """A stable 16-hex-digit hash of :func:`canonical` (sorted-key JSON)."""
    text = json.dumps(canonical(raw), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def study_key(experiment: str | None, sweeper_params: dict[str, Any], overrides: list[str]) -> str:
    """Hash of what a sweep declares; tracking/progress overrides and the rerun switch do not change it."""
    ignored = ("tracking.", "progress", "sweep.", "checkpoint_every", "hydra.", "hydra/")
    kept = sorted(o for o in overrides if not o.lstrip("+~").startswith(ignored))
    text = json.dumps({"experiment": experiment, "params": {str(k): str(v) for k, v in sweeper_params.items()},
                       "overrides": kept}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def new_invocation() -> str:
    return uuid.uuid4().hex[:12]


class Action(str, Enum):
    NEW = "new"
    SKIP_FINISHED = "finished (skipped)"
    SKIP_FAILED = "failed (kept)"
    SKIP_RUNNING = "running elsewhere (skipped)"
    RESUME = "resumed"


@dataclass(frozen=True)
class Plan:
    """What a job of a study does: its action, the run it concerns (if any) and that run's checkpoint."""

    action: Action
    run_id: str | None = None
    checkpoint: str | None = None
    superseded: str | None = None   # a FAILED run replaced by this new one (sweep.rerun_failed=true)
    take_over: bool = False         # a retry of a lost job: its predecessor's lease is known dead
    from_store: int | None = None   # the checkpoint was downloaded from the store (its artifact slot)


def _writer_alive(client: Any, run: Any) -> bool:
    """Whether another process still writes ``run`` (its lease is alive); without a lease, assume not."""
    try:
        from hpoflow.store import lease
    except ImportError:
        return False
    info = lease.Lease.from_tags(run.data.tags)  # search_runs already returned the tags: no extra request
    return info is not None and info.alive()


def children_with_hash(client: Any, experiment_id: str, parent_run_id: str, digest: str) -> list[Any]:
    """Children of the parent carrying ``digest``, newest first, superseded ones left out."""
    from hpoflow.store.backend import retry

    query = f"tags.`{PARENT_TAG}` = '{parent_run_id}' and tags.`{HASH_TAG}` = '{digest}'"
    runs = retry(lambda: client.search_runs([experiment_id], query, max_results=50,
                                            order_by=["attributes.start_time DESC"]))
    return [r for r in runs if r.data.tags.get(SUPERSEDED_TAG) != "true"]


def check_same_config(run: Any, raw: dict[str, Any]) -> None:
    """Refuse a hash match whose recorded params differ from this config (a hash collision).

    A param the run lacks is not compared: its writer died after creating the run (its config hash is a tag of
    create_run) and before logging every param (a lost worker; seen in tests/cluster/test_readme_cluster.py)."""
    from hpoflow.store.params import to_mlflow_params

    mine = to_mlflow_params(canonical(raw))
    theirs = {k: v for k, v in run.data.params.items() if k.split(".", 1)[0] not in NOT_HASHED
              and k != "budget.executor" and (k, v) != ("budget.workers", "1")}  # as canonical() drops them
    for key in sorted(set(mine) | set(theirs)):
        if key in theirs and mine.get(key) != theirs[key]:
            raise ConfigHashCollision(
                f"config hash {run.data.tags.get(HASH_TAG)} of this job matches run {run.info.run_id}, whose config "
                f"differs at {key} ({theirs.get(key)!r} there, {mine.get(key)!r} here); allowed: distinct configs "
                "have distinct hashes (rename the study's MLflow experiment to start afresh)")


def _checkpoint_here(client: Any, run_id: str, tag: str | None) -> tuple[str, int | None] | None:
    """The run's checkpoint as a local file: the one its tag names, else the store's copy (servers and databases)
    downloaded there; ``(path, slot)`` with the artifact slot it came from (None: the local file)."""
    if not tag:
        return None
    if Path(tag).is_file():
        return tag, None
    from hpoflow.store.checkpoint_artifacts import fetch, in_store

    if not in_store(str(getattr(client, "tracking_uri", ""))):
        return None
    try:
        got = fetch(client, run_id, tag)
    except OSError:  # the recorded folder cannot be created here
        return None
    return None if got is None else (str(got[0]), got[1])


def children_by_hash(client: Any, experiment_id: str, parent_run_id: str) -> dict[str, list[Any]]:
    """Every child of the parent, superseded ones left out, by config hash, newest first: what a study that plans
    thousands of jobs in one process reads once (one query per page of 1,000 runs, not one per job)."""
    from hpoflow.store.backend import retry

    out: dict[str, list[Any]] = {}
    token = None
    while True:
        page = retry(partial(client.search_runs, [experiment_id], f"tags.`{PARENT_TAG}` = '{parent_run_id}'",
                             max_results=1000, order_by=["attributes.start_time DESC"], page_token=token))
        for run in page:
            if run.data.tags.get(SUPERSEDED_TAG) != "true" and HASH_TAG in run.data.tags:
                out.setdefault(run.data.tags[HASH_TAG], []).append(run)
        token = page.token
        if not token:
            return out


def plan(client: Any, experiment_id: str, parent_run_id: str, raw: dict[str, Any], rerun_failed: bool,
         retry_of: str | None = None, known: dict[str, list[Any]] | None = None) -> Plan:
    """Decide what a study job does, from the children of ``parent_run_id`` with the job's config hash.

    ``retry_of``: this job is a launcher's retry of a job of invocation ``retry_of`` whose worker died; a run
    that invocation created or resumed is then taken over even while its (dead) writer's lease looks alive
    (a writer on another host is otherwise presumed dead only after its heartbeat grace, 30 s or more).
    ``known``: the children already read (:func:`children_by_hash`), else they are searched for this job.
    """
    digest = config_hash(raw)
    runs = known.get(digest, []) if known is not None else children_with_hash(client, experiment_id, parent_run_id,
                                                                                digest)
    if not runs:
        return Plan(Action.NEW)
    run = runs[0]
    check_same_config(run, raw)
    status, run_id = run.info.status, run.info.run_id
    tags = run.data.tags
    ours = retry_of is not None and retry_of in (tags.get(INVOCATION_TAG), tags.get(RESUMED_TAG))
    if status == "FINISHED":
        return Plan(Action.SKIP_FINISHED, run_id)
    if status in ("RUNNING", "SCHEDULED", "KILLED") and not ours and _writer_alive(client, run):
        return Plan(Action.SKIP_RUNNING, run_id)
    found = _checkpoint_here(client, run_id, tags.get("checkpoint")) if status != "FAILED" else None
    if status in ("RUNNING", "SCHEDULED", "KILLED") and found:
        return Plan(Action.RESUME, run_id, found[0], take_over=ours, from_store=found[1])
    if status == "FAILED" and not rerun_failed:
        return Plan(Action.SKIP_FAILED, run_id)
    return Plan(Action.NEW, superseded=run_id)  # FAILED and rerun, or a dead writer with no checkpoint to resume


def mark_superseded(client: Any, run_id: str, by: str | None) -> None:
    """Tag a run a newer run replaces (a dead one without checkpoint is closed as FAILED first)."""
    from hpoflow.store.backend import retry

    run = retry(lambda: client.get_run(run_id))
    if run.info.status in ("RUNNING", "SCHEDULED"):
        retry(lambda: client.set_tag(run_id, "error", "writer gone without a checkpoint; replaced by a new run"))
        retry(lambda: client.set_terminated(run_id, status="FAILED"))
    retry(lambda: client.set_tag(run_id, SUPERSEDED_TAG, "true"))
    if by:
        retry(lambda: client.set_tag(run_id, "hpoflow.superseded_by", by))


# -- the parent run ---------------------------------------------------------------------------------
def open_parent(client: Any, experiment_id: str, key: str, name: str, tags: dict[str, str],
                params: dict[str, Any], config_text: str) -> tuple[str, bool]:
    """The study's parent run (reopened as RUNNING if it exists), and whether it was created now."""
    from mlflow.entities import Param

    from hpoflow.store.backend import retry
    from hpoflow.store.params import to_mlflow_params

    query = f"tags.`{KIND_TAG}` = 'study' and tags.`{STUDY_KEY_TAG}` = '{key}'"
    found = retry(lambda: client.search_runs([experiment_id], query, max_results=1,
                                             order_by=["attributes.start_time ASC"]))
    if found:
        run_id = found[0].info.run_id
        retry(lambda: client.update_run(run_id, status="RUNNING"))
        return run_id, False
    run = retry(lambda: client.create_run(experiment_id, run_name=f"study {name}", tags={
        KIND_TAG: "study", STUDY_TAG: name, STUDY_KEY_TAG: key, **tags}))
    run_id = run.info.run_id
    retry(lambda: client.set_tag(run_id, "sweep_id", run_id))  # the jobs' sweep_id: stable across re-runs
    items = [Param(k, v) for k, v in to_mlflow_params(params).items()]
    for chunk in (items[i:i + 100] for i in range(0, len(items), 100)):
        retry(partial(client.log_batch, run_id, params=chunk))
    if config_text:
        retry(lambda: client.log_text(run_id, config_text, "study.yaml"))
    return run_id, True


_LAUNCH = {"retried": 0, "lost": 0}  # what the launcher of this process reported (hpoflow's Ray launcher)


def note_launch(retried: int, lost: int) -> None:
    """Called by a launcher: jobs resubmitted after their worker died, and jobs given up on (lost)."""
    _LAUNCH.update(retried=retried, lost=lost)


@dataclass(frozen=True)
class Account:
    """What one invocation of a study did, read back from the store (``retried``: jobs the launcher resubmitted
    after their worker died; ``failed``: FAILED/KILLED runs plus jobs whose worker was lost for good)."""

    finished_skipped: int
    resumed: int
    new: int
    failed: int
    running: int
    total: int
    retried: int = 0
    lost: int = 0   # jobs whose worker was lost for good (their runs are left RUNNING: counted in ``running``)
    killed: int = 0  # KILLED runs (a signal): a plain re-run resumes them

    def line(self, name: str) -> str:
        parts = [f"{self.finished_skipped} finished (skipped)", f"{self.resumed} resumed", f"{self.new} new",
                 f"{self.retried} retried"]
        failed = self.failed + self.lost
        parts.append(f"{failed} failed" + (" (sweep.rerun_failed=true reruns them)" if failed else ""))
        if self.killed:
            parts.append(f"{self.killed} killed (a re-run of the same command resumes them)")
        if self.running:
            parts.append(f"{self.running} not finished")
        return f"study {name}: " + ", ".join(parts) + f"; {self.total} runs in the store"


def account(client: Any, experiment_id: str, parent_run_id: str, invocation: str) -> Account:
    """Count the parent's current children by what this invocation did to them."""
    from hpoflow.store.backend import retry

    runs = retry(lambda: client.search_runs([experiment_id], f"tags.`{PARENT_TAG}` = '{parent_run_id}'",
                                            max_results=50000))
    runs = [r for r in runs if r.data.tags.get(SUPERSEDED_TAG) != "true"]
    new = [r for r in runs if r.data.tags.get(INVOCATION_TAG) == invocation]
    resumed = [r for r in runs if r.data.tags.get(RESUMED_TAG) == invocation and r not in new]
    touched = {r.info.run_id for r in new + resumed}
    skipped = [r for r in runs if r.info.run_id not in touched and r.info.status == "FINISHED"]
    failed = [r for r in runs if r.info.status == "FAILED"]
    killed = [r for r in runs if r.info.status == "KILLED"]
    running = [r for r in runs if r.info.status in ("RUNNING", "SCHEDULED")]
    return Account(len(skipped), len(resumed), len(new), len(failed), len(running), len(runs),
                   retried=_LAUNCH["retried"], lost=_LAUNCH["lost"], killed=len(killed))


def kill_orphans(client: Any, experiment_id: str, parent_run_id: str, invocation: str) -> int:
    """After a signal stopped the sweep's workers: a run of this invocation still RUNNING whose writer is gone (a
    worker killed before it could close its run) becomes KILLED, so a re-run resumes it; how many."""
    from hpoflow.store.backend import retry

    runs = retry(lambda: client.search_runs([experiment_id], f"tags.`{PARENT_TAG}` = '{parent_run_id}' and "
                                            "attributes.status = 'RUNNING'", max_results=50000))
    orphans = [r for r in runs if invocation in (r.data.tags.get(INVOCATION_TAG), r.data.tags.get(RESUMED_TAG))
               and not _writer_alive(client, r)]
    for run in orphans:
        retry(partial(client.set_tag, run.info.run_id, "error", "its worker was stopped with the sweep (a signal)"))
        retry(partial(client.set_terminated, run.info.run_id, status="KILLED"))
    return len(orphans)


def close_parent(client: Any, experiment_id: str, parent_run_id: str, invocation: str, name: str,
                 interrupted: bool = False, error: str | None = None) -> Account:
    """Write the counts on the parent, end it (FINISHED only when every child finished and the sweep raised no
    ``error``, e.g. Ray could not be joined: then FAILED with that ``error`` tag), print the account."""
    from hpoflow.store.backend import retry

    if interrupted:
        kill_orphans(client, experiment_id, parent_run_id, invocation)
    acc = account(client, experiment_id, parent_run_id, invocation)
    finished = acc.total - acc.failed - acc.killed - acc.running
    for key, value in (("finished", finished), ("failed", acc.failed), ("killed", acc.killed),
                       ("unfinished", acc.running), ("total", acc.total)):
        retry(partial(client.set_tag, parent_run_id, f"hpoflow.runs.{key}", str(value)))
    if error:
        retry(partial(client.set_tag, parent_run_id, "error", error[:5000]))
    done = acc.failed == 0 and acc.killed == 0 and acc.running == 0 and not error
    status = "KILLED" if interrupted else ("FINISHED" if done else "FAILED")
    retry(lambda: client.set_terminated(parent_run_id, status=status))
    print(acc.line(name), file=sys.stdout, flush=True)
    return acc


# -- a job of a study -------------------------------------------------------------------------------
def prepare_job(s: Any, known: dict[str, list[Any]] | None = None) -> Plan:
    """The plan of a study job (validated settings ``s``); marks what it takes over or replaces. ``known``: the
    study's children already read (:func:`children_by_hash`)."""
    from hpoflow.store.backend import default_uri, find_experiment, make_client, retry

    client = make_client(s.tracking.uri or default_uri())
    name = s.tracking.experiment or (s.raw.get("task") or {}).get("name")
    experiment_id = find_experiment(client, str(name), refuse_deleted=False) if name else None
    if experiment_id is None:
        return Plan(Action.NEW)
    import os

    retry_of = str(s.sweep.invocation) if int(os.environ.get(RETRY_ENV, "0") or 0) > 0 else None
    decided = plan(client, experiment_id, str(s.sweep.parent_run_id), s.raw, s.sweep.rerun_failed, retry_of, known)
    if decided.action is Action.RESUME:
        retry(lambda: client.set_tag(decided.run_id, RESUMED_TAG, str(s.sweep.invocation)))
    if decided.superseded:
        mark_superseded(client, decided.superseded, by=None)
    return decided
