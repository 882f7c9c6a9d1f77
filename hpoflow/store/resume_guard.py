"""May this checkpoint be resumed, with these overrides, into this store? One-line refusals, nothing changed.

``resume=`` continues a run with the config recorded in its checkpoint. Before anything is built:

* overrides: the command line may repeat the original overrides (users re-run the command from their shell
  history with ``resume=`` added); an override whose value differs from the recorded one is refused;
* credentials: secrets are never saved, so a store URI recorded with a masked password must be given again;
* the store: the checkpoint's run must exist in it, must not be FINISHED (a finished run is never re-opened),
  must not be written by a live process (its lease), and the rounds the store has logged must agree with the
  checkpoint (contiguous steps, the same ``query_cost`` per round, at most ``checkpoint_every`` rounds ahead).
"""
from __future__ import annotations

import math
from typing import Any

from hpoflow.core.checkpoint import CheckpointError, LoopState
from hpoflow.store.params import REDACTED, is_secret_key

ALWAYS_ALLOWED = ("resume", "tracking.uri")  # a resume may always name the store (it may have moved)
STEP_MARKER = "query_cost"  # logged every round (see MlflowTracker)
_MISSING = object()


def _get(config: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(config, dict) or part not in config:
            return _MISSING
        config = config[part]
    return config


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _without(config: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {k: (_without(v, tuple(x.split(".", 1)[1] for x in keys if x.startswith(f"{k}.")))
               if isinstance(v, dict) else v) for k, v in config.items() if k not in keys}
    return out


def _is_secret(key: str) -> bool:
    return is_secret_key(key)


def differing_override(overrides: list[str], composed: dict[str, Any], recorded: dict[str, Any]) -> str | None:
    """The first override whose value differs from the recorded config (None: all equal or allowed).

    ``algo=random`` (a group choice) is compared by the option's ``name``; ``algo.beta=2`` by value; an
    override that names no key of the composed config (a global-package option such as ``experiment=x``)
    is accepted only if the whole composed config equals the recorded one.
    """
    for override in overrides:
        key = override.lstrip("+~").split("=", 1)[0]
        if key in ALWAYS_ALLOWED or _is_secret(key):
            continue
        if override.startswith("~"):
            return override
        new, old = _get(composed, key), _get(recorded, key)
        if new is _MISSING:
            ignore = ALWAYS_ALLOWED
            if not _same(_without(composed, ignore), _without(recorded, ignore)):
                return override
        elif isinstance(new, dict) and isinstance(old, dict):
            if (new.get("name"), new.get("_target_")) != (old.get("name"), old.get("_target_")):
                return override
        elif old is _MISSING or not _same(new, old):
            return override
    return None


def redacted_keys(config: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose recorded value is the redaction mark (secrets are never saved)."""
    if isinstance(config, dict):
        return [k for key, v in config.items() for k in redacted_keys(v, f"{prefix}{key}.")]
    if isinstance(config, str) and (config == REDACTED or f":{REDACTED}@" in config or f"//{REDACTED}@" in config):
        return [prefix.rstrip(".")]
    return []


def verify_store(state: LoopState, uri: str, every: int, take_over: bool = False) -> str:
    """Check the checkpoint against the run in store ``uri``; returns the store's status of the run.

    Raises:
        CheckpointError: the run is missing, FINISHED while the checkpoint is not, written by a live
            process, or its logged rounds disagree with the checkpoint (one line each).
    """
    from hpoflow.store.backend import make_client, retry
    from hpoflow.store.lease import read_lease

    run_id = state.meta.get("run_id")
    if not run_id:
        raise CheckpointError("the checkpoint names no MLflow run (started with tracking=off?): nothing to resume")
    client = make_client(uri)
    try:
        run = retry(lambda: client.get_run(run_id))
    except Exception as exc:  # noqa: BLE001 - unknown run, unreachable server: one line
        raise CheckpointError(f"the checkpoint's run {run_id} is not in the store {uri} "
                              f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
    status = run.info.status
    if status == "FINISHED":
        if state.meta.get("status") != "FINISHED":
            n_stored = len(retry(lambda: client.get_metric_history(run_id, STEP_MARKER)))
            if n_stored == state.round:  # the writer stopped between the store's FINISHED and its checkpoint's
                return status
            raise CheckpointError(f"run {run_id} is FINISHED in the store with {n_stored} rounds but this checkpoint "
                                  f"stops at round {state.round} (an older copy of the run folder?): a finished "
                                  "run is never re-opened")
        return status
    lease = read_lease(client, run_id)
    if status == "RUNNING" and lease is not None and lease.alive() and not take_over:
        raise CheckpointError(f"run {run_id} is being written by {lease.describe()}; wait for it to end, "
                              "or stop it")
    seed = run.data.tags.get("seed")
    if seed is not None and seed != str(state.meta.get("config", {}).get("seed")):
        raise CheckpointError(f"run {run_id} in the store has seed {seed}, the checkpoint "
                              f"{state.meta.get('config', {}).get('seed')}: they are not the same run")
    stored = sorted((m.step, m.value) for m in retry(lambda: client.get_metric_history(run_id, STEP_MARKER)))
    steps = [s for s, _ in stored]
    if steps != list(range(1, len(steps) + 1)):
        raise CheckpointError(f"run {run_id}: the store's logged rounds are not 1..n once each ({steps[:8]}...): "
                              "refusing to add to them")
    if len(steps) > state.round + max(1, every):
        raise CheckpointError(f"run {run_id}: the store holds {len(steps)} rounds, the checkpoint only {state.round} "
                              "(an older copy of the run folder?): refusing to rewrite them")
    for (step, value), metrics in zip(stored, state.metrics):
        mine = metrics.get(STEP_MARKER)
        if mine is None or not math.isclose(value, float(mine), rel_tol=1e-9, abs_tol=1e-12):
            raise CheckpointError(f"run {run_id}: round {step}'s {STEP_MARKER} is {value} in the store but {mine} in "
                                  "the checkpoint: they record different runs")
    return status


def secret_overrides(overrides: list[str], composed: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` with the secrets given on the command line put back (they are never saved)."""
    import copy

    out = copy.deepcopy(recorded)
    for override in overrides:
        key = override.lstrip("+~").split("=", 1)[0]
        value = _get(composed, key)
        if not _is_secret(key) or value is _MISSING:
            continue
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out
