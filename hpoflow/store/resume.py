"""Resume planning for the CLI and sweeps: which checkpoint a ``resume=`` names (a file, a run folder, an MLflow
run id), the settings it continues with, and what a job of a re-run study does (skip, resume, start)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hpoflow.core.checkpoint import FILENAME, CheckpointError

if TYPE_CHECKING:
    from hpoflow.config.settings import Settings
    from hpoflow.core.checkpoint import LoopState

RUN_ID = re.compile(r"^[0-9a-f]{32}$")  # an MLflow run id

_FETCHED: dict[Path, int] = {}  # checkpoint files this process downloaded from the store: their artifact slot


def _from_store(client: Any, run_id: str, tag: str, uri: str) -> Path | None:
    """The run's checkpoint downloaded from the store (servers and databases keep a copy) to its recorded path, or
    under ``outputs/resumed/<run id>/`` when that path cannot be written here; None without a valid copy."""
    from hpoflow.store.checkpoint_artifacts import fetch, in_store

    if not in_store(uri):
        return None
    for dest in (Path(tag), Path("outputs", "resumed", run_id, FILENAME).resolve()):
        try:
            got = fetch(client, run_id, dest)
        except OSError:
            continue
        if got is None:
            return None
        _FETCHED[got[0]] = got[1]  # the resumed run writes the other slot first (the loaded one stays whole)
        return got[0]
    return None


def locate(resume: str, uri: str | None = None) -> Path:
    """The checkpoint file for ``resume=``: a checkpoint file, a run folder holding one, or an MLflow run id.

    A run id is looked up in the tracking store ``uri``: its ``checkpoint`` tag names the file.
    """
    path = Path(resume).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        if (path / FILENAME).is_file():
            return path / FILENAME
        raise CheckpointError(f"resume={resume!r}: the folder holds no {FILENAME} (was the run started with "
                              "checkpoint_every=0, or is it a sweep folder? name one job's folder)")
    if RUN_ID.match(resume):
        if uri is None:
            raise CheckpointError(f"resume={resume!r} looks like an MLflow run id: tracking.uri is needed")
        from hpoflow.store.backend import make_client, sqlite_path

        db = sqlite_path(uri)
        if db is not None and not db.is_file():  # opening it would create an empty store
            raise CheckpointError(f"resume={resume!r}: no such MLflow run: the store {db} does not exist "
                                  "(name the store the run was written to with tracking.uri=)")
        try:
            run = make_client(uri).get_run(resume)
        except Exception as exc:  # noqa: BLE001 - unknown run id, unreachable server
            raise CheckpointError(f"resume={resume!r}: no such MLflow run in {uri} "
                                  f"({str(exc).splitlines()[0][:200]})") from None
        tag = run.data.tags.get("checkpoint")
        if not tag:
            raise CheckpointError(f"resume={resume!r}: the run has no 'checkpoint' tag (not started by hpoflow "
                                  "with checkpointing)")
        if not Path(tag).is_file():
            fetched = _from_store(make_client(uri), resume, tag, uri)
            if fetched is None:
                raise CheckpointError(f"resume={resume!r}: its checkpoint {tag} is not readable from this machine"
                                      " (and the store holds no copy of it)")
            return fetched
        return Path(tag)
    raise CheckpointError(f"resume={resume!r} is neither a run folder, a checkpoint file, nor an MLflow run id")


RESUMABLE_OVERRIDES = ("resume", "tracking.uri")  # what a resume may set; everything else is recorded


def resume_settings(resume: str, overrides: list[str], uri: str | None,
                    composed: dict[str, Any] | None = None, take_over: bool = False) -> tuple[Settings, Any, str]:
    """Settings, loop state and checkpoint path for ``resume=<run folder | checkpoint | MLflow run id>``.

    The run continues with the config recorded in its checkpoint; an override that differs from the recorded
    value is refused (``composed``: the config the command line composed; overrides equal to the recorded
    ones are accepted). ``tracking.uri`` and secrets may always be given (they are never recorded). The
    checkpoint is checked against its run in the store (``hpoflow.store.resume_guard``; ``take_over``: its
    writer is known dead, whatever its lease says: a launcher's retry of a lost job). Components given by
    ``_target_`` are only rebuilt from a checkpoint named by path, never from one found through an MLflow tag.
    """
    from hpoflow.config.settings import ConfigError, validate
    from hpoflow.core.checkpoint import check_folder, load
    from hpoflow.store.backend import default_uri
    from hpoflow.store.resume_guard import differing_override, redacted_keys, secret_overrides, verify_store

    try:
        path = locate(resume, uri or default_uri())
        state = load(path)
        check_folder(state, path)
    except CheckpointError as exc:
        raise ConfigError(str(exc)) from None
    if path in _FETCHED:
        state.meta["artifact_slot"] = _FETCHED.pop(path)
    raw = dict(state.meta.get("config") or {})
    extra = (differing_override(overrides, composed, raw) if composed is not None else
             next((o for o in overrides if o.lstrip("+~").split("=", 1)[0] not in RESUMABLE_OVERRIDES), None))
    if extra:
        raise ConfigError(f"resume={resume!r} continues a run with its recorded config; the override "
                          f"'{extra}' differs from it (drop it, or start a new run to change settings)")
    raw = secret_overrides(overrides, composed or {}, raw)
    by_tag = not Path(resume).expanduser().exists()
    if by_tag and any(isinstance(raw.get(g), dict) and "_target_" in raw[g] for g in ("algo", "task", "surrogate")):
        raise ConfigError(f"resume={resume!r}: this run uses a _target_ component; resume it by its run folder "
                          "(configs found through MLflow are never instantiated from _target_)")
    tracking = dict(raw.get("tracking") or {})
    tracking["uri"] = uri or tracking.get("uri") or state.meta.get("uri")  # the store the run lives in
    raw["tracking"] = tracking
    raw["resume"] = None
    missing = redacted_keys(raw)
    if missing:
        raise ConfigError(f"resume={resume!r}: {missing[0]} was recorded without its secret (secrets are never "
                          f"saved); give it again: {missing[0]}=...")
    settings = validate(raw)
    if settings.tracking.enabled:
        try:
            stored = verify_store(state, str(settings.tracking.uri or default_uri()), settings.checkpoint_every,
                                  take_over=take_over)
        except CheckpointError as exc:
            raise ConfigError(f"resume={resume!r}: {exc}") from None
        if stored == "FINISHED" and state.meta.get("status") != "FINISHED":
            state.meta["status"] = "FINISHED"  # every round of the checkpoint is in the store, which says FINISHED
            state.meta["finished_by"] = "store"
    return settings, state, str(path)


def plan_job(settings: Settings, overrides: list[str], composed: dict[str, Any], multirun: bool,
             known: dict[str, list[Any]] | None = None) -> tuple[Settings, tuple[LoopState, str] | None] | str:
    """What a CLI job does: start a run, continue one, or nothing (a study re-run that already has it).

    Returns ``(settings, None)`` for a new run, ``(settings, (state, checkpoint path))`` to continue one
    (``resume=``, or a study job whose earlier writer is gone), or a one-line message when there is nothing
    to do (the study's run is FINISHED, or kept FAILED). ``known``: the study's children already read
    (:func:`hpoflow.store.sweeps.children_by_hash`).

    Raises:
        ConfigError: a refused resume, or two configs of one study with the same hash.
    """
    from hpoflow.config.settings import ConfigError

    if settings.resume is not None:
        settings, state, path = resume_settings(settings.resume, overrides, settings.tracking.uri, composed=composed)
        return settings, (state, path)
    if not (multirun and settings.sweep.parent_run_id and settings.tracking.enabled):
        return settings, None
    from hpoflow.store.sweeps import Action, ConfigHashCollision, prepare_job

    try:
        plan = prepare_job(settings, known)
    except ConfigHashCollision as exc:
        raise ConfigError(str(exc)) from None
    if plan.action is Action.RESUME:
        settings, state, path = resume_settings(str(plan.checkpoint), [], settings.tracking.uri,
                                                take_over=plan.take_over)
        state.meta["take_over"] = plan.take_over          # in memory only: how this process continues the run
        state.meta["artifact_slot"] = plan.from_store
        return settings, (state, path)
    if plan.action is not Action.NEW:
        return f"{plan.action.value}: run {plan.run_id}"
    return settings, None
