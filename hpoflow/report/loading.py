"""Read a study back from MLflow in bulk: one table of runs, one long table of per-round curves.

``load_study`` is the one entry point. On a SQL store (SQLite, PostgreSQL, MySQL: the embedded default and
the tracking server's database) it reads with five queries in all (runs, tags, params, latest metrics,
metric histories in chunks of runs), through the store's own SQLAlchemy engine and MLflow's schema; on any
other store (``http://`` server) it uses ``MlflowClient.search_runs`` and fetches histories concurrently.
Either way the result is the same :class:`StudyData`. Study parent runs (tag ``hpoflow.kind=study``) and
report runs (``hpoflow.kind=report``) are never data: they are returned apart, in ``StudyData.parents``; nor
are FAILED runs that a study re-run superseded (``hpoflow.superseded=true``).

The older ``load_curves`` (one :class:`RunCurve` per run, used by the per-task tables) is built on it.
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hpoflow.store.params import mask_secrets
from hpoflow.store.sweeps import KIND_TAG, PARENT_TAG, SUPERSEDED_TAG

TASK_PARAM_PREFIX = "task."
IGNORED_TASK_PARAMS = {"task.name", "task.noise_std"}
REPORT_KIND_TAG = KIND_TAG       # study parent runs: "study"; summary runs written by the report: "report"
NOT_DATA_KINDS = ("study", "report")
# Per-round metrics read by default (others, e.g. acquisition internals, only when asked for by name).
CURVE_METRICS = ("value", "true_value", "best_value", "regret", "cumulative_regret", "simple_regret",
                 "query_cost", "wall_time", "failed", "fidelity")
RUN_COLUMNS = ["run_id", "run_name", "experiment_id", "experiment", "status", "start_time", "end_time", "algo",
               "task", "task_key", "seed", "direction", "regret_reference", "rounds", "sweep_id", "parent_run_id"]
FAILED_STATUSES = ("FAILED", "KILLED")
CHUNK = 500                      # run ids per metric query (SQLite allows 32k bound variables)


class SelectionError(ValueError):
    """A selection names something the store does not hold (the message is the one-line ``Error:``)."""


@dataclass
class StudyData:
    """A selection of runs read back from MLflow.

    Attributes:
        runs: one row per job run. Columns ``RUN_COLUMNS`` (``task_key`` = task name plus its non-default
            ``task.*`` params, e.g. ``"rastrigin dim=4"``; ``seed`` a string; ``rounds`` = ``budget.rounds``),
            then ``params.<key>`` (the flattened resolved config), ``tags.<key>`` and ``metrics.<key>``
            (the last logged value of each metric, i.e. the final one), as ``mlflow.search_runs`` names them.
        curves: long table, one row per (run_id, step) with one column per per-round metric (``value``,
            ``best_value``, ``regret``, ``cumulative_regret``, ``simple_regret``, ``query_cost``, ...); NaN
            where a metric was not logged at that step (e.g. ``value`` on a skipped round).
        parents: study parent runs (``hpoflow.kind=study``) and report runs met by the selection, with the
            same run columns; never part of ``runs``.
        uri: the store; selection: a one-line description of what was selected.
    """

    runs: pd.DataFrame
    curves: pd.DataFrame
    parents: pd.DataFrame
    uri: str
    selection: str = ""

    def study_parent(self) -> str | None:
        """Id of the one study parent run of this selection (None if there is none, or more than one)."""
        if self.parents.empty:
            return None
        studies = set(self.parents.loc[_col(self.parents, "tags." + KIND_TAG) == "study", "run_id"])
        if len(studies) > 1:  # several studies met: the one the selected runs belong to, if only one
            studies &= set(self.runs["parent_run_id"])
        return studies.pop() if len(studies) == 1 else None


@dataclass
class RunCurve:
    """One run's per-round values (noise-free where logged), logged regret and cumulative query cost."""

    run_id: str
    algo: str
    task_key: tuple[str, ...]
    seed: str
    status: str
    direction: str
    reference: str
    values: np.ndarray            # observed (or true) value per round, NaN where not queried
    regret: np.ndarray | None     # logged instantaneous regret per round (known optimum)
    query_cost: np.ndarray        # cumulative query cost per round
    wall_time: float
    extra: dict[str, Any] = field(default_factory=dict)
    fidelity: np.ndarray | None = None  # the level each round was evaluated at (None: the task has no fidelity)
    full_fidelity: float = math.nan     # its task's full fidelity (see full_fidelity()); NaN: no fidelity


# -- selection ---------------------------------------------------------------------------------------------
def _quote(v: Any) -> str:
    return "'" + str(v).replace("'", "\\'") + "'"


def filter_string(sweep_id: str | None = None, tags: dict[str, Any] | None = None) -> str:
    """MLflow search filter for a sweep id and exact tag values (``algo``, ``task``, ``seed``, ...)."""
    clauses = [f"tags.sweep_id = {_quote(sweep_id)}"] if sweep_id else []
    for k, v in sorted((tags or {}).items()):
        key = f"tags.`{k}`" if not str(k).isidentifier() else f"tags.{k}"
        clauses.append(f"{key} = {_quote(v)}")
    return " and ".join(clauses)


def experiment_ids(client: Any, experiments: str | Iterable[str] | None, uri: str) -> list[str]:
    """Ids of the named experiments (comma-separated or a list); all experiments when None.

    Raises:
        SelectionError: a named experiment does not exist (the message lists the available ones).
    """
    if not experiments:
        return [e.experiment_id for e in client.search_experiments()]
    names = [n.strip() for n in experiments.split(",")] if isinstance(experiments, str) else list(experiments)
    ids = []
    for name in names:
        exp = client.get_experiment_by_name(name)
        if exp is None:
            avail = ", ".join(e.name for e in client.search_experiments()) or "none"
            raise SelectionError(f"tracking.experiment='{name}' not found in {uri}; available: {avail}")
        ids.append(exp.experiment_id)
    return ids


# -- bulk reads --------------------------------------------------------------------------------------------
def _sql_store(client: Any) -> Any | None:
    """The client's SQLAlchemy store, or None for any other kind of store (REST, file)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    store = client._tracking_client.store  # MLflow resolves the URI to its store class; no public accessor
    return store if isinstance(store, SqlAlchemyStore) else None


def _read_sql(store: Any, sql: str, **params: Any) -> pd.DataFrame:
    import sqlalchemy as sa

    stmt = sa.text(sql)
    for name, value in params.items():
        if isinstance(value, (list, tuple)):
            stmt = stmt.bindparams(sa.bindparam(name, expanding=True))
    with store.engine.connect() as conn:
        return pd.read_sql(stmt, conn, params=params)


def _wide(long: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """(run_uuid, key, value) rows -> one row per run, one ``<prefix>.<key>`` column per key."""
    if long.empty:
        return pd.DataFrame(index=pd.Index([], name="run_uuid"))
    wide = long.drop_duplicates(["run_uuid", "key"], keep="last").pivot(index="run_uuid", columns="key",
                                                                         values="value")
    wide.columns = [f"{prefix}.{k}" for k in wide.columns]
    return wide


def _runs_sql(store: Any, exp_ids: list[str]) -> pd.DataFrame:
    """Every active run of the experiments with its tags, params and final metrics: four queries."""
    where = "run_uuid IN (SELECT run_uuid FROM runs WHERE experiment_id IN :exp AND lifecycle_stage = 'active')"
    exp = [int(e) for e in exp_ids]
    info = _read_sql(store, "SELECT run_uuid, name AS run_name, experiment_id, status, start_time, end_time, "
                     "artifact_uri FROM runs WHERE experiment_id IN :exp AND lifecycle_stage = 'active'", exp=exp)
    tags = _wide(_read_sql(store, f"SELECT run_uuid, key, value FROM tags WHERE {where}", exp=exp), "tags")
    params = _wide(_read_sql(store, f"SELECT run_uuid, key, value FROM params WHERE {where}", exp=exp), "params")
    latest = _read_sql(store, f"SELECT run_uuid, key, value, is_nan FROM latest_metrics WHERE {where}", exp=exp)
    latest.loc[latest["is_nan"].astype(bool), "value"] = np.nan
    metrics = _wide(latest[["run_uuid", "key", "value"]], "metrics")
    out = info.set_index("run_uuid").join([tags, params, metrics]) if len(info) else info.set_index("run_uuid")
    out.index.name = "run_id"
    out["experiment_id"] = out["experiment_id"].astype(str)
    return out.reset_index()


def _runs_client(client: Any, exp_ids: list[str]) -> pd.DataFrame:
    """The same table from ``MlflowClient.search_runs`` (pages of 1,000 runs, each given up to
    ``backend.BULK_READ_TIMEOUT_S``), for stores without SQL access."""
    from hpoflow.store.backend import patient_http

    rows, token = [], None
    while True:
        with patient_http():
            page = client.search_runs(exp_ids, max_results=1000, page_token=token)
        for r in page:
            row = {"run_id": r.info.run_id, "run_name": r.info.run_name, "experiment_id": r.info.experiment_id,
                   "status": r.info.status, "start_time": r.info.start_time, "end_time": r.info.end_time,
                   "artifact_uri": r.info.artifact_uri}
            row.update({f"tags.{k}": v for k, v in r.data.tags.items()})
            row.update({f"params.{k}": v for k, v in r.data.params.items()})
            row.update({f"metrics.{k}": v for k, v in r.data.metrics.items()})
            rows.append(row)
        token = page.token
        if not token:
            return pd.DataFrame(rows)


def _curves_sql(store: Any, run_ids: list[str], keys: tuple[str, ...] | None) -> pd.DataFrame:
    """Long (run_uuid, key, step, value) rows of the runs' metric histories, ``CHUNK`` runs per query."""
    sql = "SELECT run_uuid, key, step, value, is_nan FROM metrics WHERE run_uuid IN :ids"
    if keys:
        sql += " AND key IN :keys"
    parts = []
    for i in range(0, len(run_ids), CHUNK):
        kw: dict[str, Any] = {"ids": run_ids[i:i + CHUNK]}
        if keys:
            kw["keys"] = list(keys)
        parts.append(_read_sql(store, sql + " ORDER BY timestamp", **kw))
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["run_uuid", "key", "step", "value", "is_nan"])
    long.loc[long["is_nan"].astype(bool), "value"] = np.nan
    return long.drop(columns="is_nan")


def _curves_client(client: Any, runs: pd.DataFrame, keys: tuple[str, ...] | None) -> pd.DataFrame:
    """The same rows through ``get_metric_history``, concurrently (I/O bound against a server)."""
    jobs = []
    for _, run in runs.iterrows():
        logged = [c.removeprefix("metrics.") for c in runs.columns
                  if c.startswith("metrics.") and not pd.isna(run[c])]
        jobs += [(run["run_id"], k) for k in logged if keys is None or k in keys]

    def fetch(job: tuple[str, str]) -> list[tuple[str, str, int, float]]:
        return [(job[0], job[1], m.step, m.value) for m in client.get_metric_history(*job)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        rows = [row for rows in pool.map(fetch, jobs) for row in rows]
    return pd.DataFrame(rows, columns=["run_uuid", "key", "step", "value"])


def _curves_compact(runs: pd.DataFrame, uri: str, keys: tuple[str, ...] | None) -> pd.DataFrame:
    """The same rows for compact runs (tag ``hpoflow.compact``), read from their ``round_metrics.csv`` artifact
    (a local store: the file itself; any other: downloaded through the run's artifact repository)."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    from hpoflow.store.mlflow_tracker import COMPACT_TAG, ROUNDS_FILE

    compact = runs[_col(runs, "tags." + COMPACT_TAG) == "true"]
    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        for run_id, artifact_uri in zip(compact["run_id"], _col(compact, "artifact_uri"), strict=True):
            repo = get_artifact_repository(str(artifact_uri), tracking_uri=uri)
            local = getattr(repo, "artifact_dir", None)  # a local repository: read in place
            path = os.path.join(local, ROUNDS_FILE) if local else None
            try:
                if path is None or not os.path.isfile(path):
                    path = repo.download_artifacts(ROUNDS_FILE, os.path.join(tmp, str(run_id)))
                table = pd.read_csv(path, usecols=lambda c: c == "step" or not keys or c in keys)
            except Exception:  # noqa: BLE001 - a run cut short before its artifacts: its final metrics only
                continue
            tables.append(table.assign(run_uuid=run_id))
    if not tables:
        return pd.DataFrame(columns=["run_uuid", "key", "step", "value"])
    long = pd.concat(tables, ignore_index=True).melt(id_vars=["run_uuid", "step"], var_name="key", value_name="_v")
    long = long.dropna(subset=["_v"]).rename(columns={"_v": "value"})  # "value" is a metric's name too
    return long[["run_uuid", "key", "step", "value"]].reset_index(drop=True)


# -- the table ---------------------------------------------------------------------------------------------
def _col(df: pd.DataFrame, name: str, default: Any = "") -> pd.Series:
    return df[name] if name in df.columns else pd.Series(default, index=df.index, dtype=object)


def _task_key(df: pd.DataFrame) -> pd.Series:
    """``task`` tag plus the run's ``task.*`` params that set something and differ between the selected runs of
    that task (``"rastrigin dim=4"`` beside ``"rastrigin dim=2"``; a task run with one setting is just its name),
    so that labels stay short and two different tasks never share one."""
    cols = sorted(c for c in df.columns if c.startswith("params." + TASK_PARAM_PREFIX)
                  and c.removeprefix("params.") not in IGNORED_TASK_PARAMS)
    return _with_varied(df, _col(df, "tags.task", "?").fillna("?").astype(str), cols, "params." + TASK_PARAM_PREFIX)


def _with_varied(df: pd.DataFrame, names: pd.Series, cols: list[str], prefix: str,
                 within: pd.Series | None = None) -> pd.Series:
    """``names`` plus `` key=value`` for each column of ``cols`` that is set and takes more than one value among
    the runs of one name (``within``: among the runs of one name and one value of ``within`` only, so that a
    setting an algorithm resolves per task does not split it)."""
    key = names
    for c in cols:
        v = df[c]
        is_set = v.notna() & ~v.isin(["None", ""])
        spelled = v.astype(str).where(is_set, "")  # unset counts as one more value: "dim=2" differs from unset
        if within is None:
            differs = spelled.groupby(names).transform("nunique") > 1
        else:  # varies inside some (name, within) group: a swept setting, named on every run of that name
            inside = spelled.groupby([names, within]).transform("nunique") > 1
            differs = inside.groupby(names).transform("any")
        key = key.where(~(is_set & differs), key + " " + c.removeprefix(prefix) + "=" + v.astype(str))
    return key


def _algo_key(df: pd.DataFrame, names: pd.Series, tasks: pd.Series) -> pd.Series:
    """``algo`` label plus the ``algo.*`` params swept between its runs of one task (an ablation such as
    ``algo.steps=5,10`` gives ``"freeze_thaw steps=10"`` and ``"freeze_thaw steps=5"``; one setting: the name)."""
    cols = sorted(c for c in df.columns if c.startswith("params.algo.") and c != "params.algo.name")
    return _with_varied(df, names, cols, "params.algo.", within=tasks)


def _tidy(df: pd.DataFrame, experiments: dict[str, str]) -> pd.DataFrame:
    """Add the named columns of ``RUN_COLUMNS`` in front of the ``params.``/``tags.``/``metrics.`` ones."""
    out = pd.DataFrame(index=df.index)
    for c in ("run_id", "run_name", "experiment_id", "status", "start_time", "end_time", "artifact_uri"):
        out[c] = _col(df, c)
    out["experiment"] = out["experiment_id"].astype(str).map(experiments)
    out["algo"] = _col(df, "tags.algo", "?").fillna("?")
    cell = _col(df, "params.sweep.cell").fillna("None").astype(str)  # a study's named cell: a table row
    out["algo"] = out["algo"].where(cell.isin(["None", ""]), out["algo"] + " " + cell)
    twin = pd.to_numeric(_col(df, "params.sweep.twin", 0), errors="coerce").fillna(0).astype(int)
    out["algo"] = out["algo"].where(twin <= 0, out["algo"] + " twin" + twin.astype(str))  # an A/A twin: its own row
    out["task"] = _col(df, "tags.task", "?").fillna("?")
    out["task_key"] = _task_key(df)
    out["algo"] = _algo_key(df, out["algo"].astype(str), out["task_key"] + " seed=" + _col(df, "tags.seed", "?")
                            .fillna("?").astype(str))
    out["seed"] = _col(df, "tags.seed", "?").fillna("?").astype(str)
    out["direction"] = _col(df, "tags.direction").fillna("")
    out["regret_reference"] = _col(df, "tags.regret_reference", "none").fillna("none")
    out["rounds"] = pd.to_numeric(_col(df, "params.budget.rounds", np.nan), errors="coerce")
    out["sweep_id"] = _col(df, "tags.sweep_id").fillna("")
    out["parent_run_id"] = _col(df, "tags." + PARENT_TAG).fillna("")
    rest = df[sorted(c for c in df.columns if c.split(".", 1)[0] in ("params", "tags", "metrics"))]
    return pd.concat([out, rest], axis=1)


def _select(runs: pd.DataFrame, sweep_id: str | None, parent_run_id: str | None,
            tags: dict[str, Any] | None) -> pd.Series:
    keep = pd.Series(True, index=runs.index)
    if sweep_id:
        keep &= _col(runs, "tags.sweep_id") == str(sweep_id)
    for k, v in (tags or {}).items():
        keep &= _col(runs, f"tags.{k}") == str(v)
    if parent_run_id:
        keep &= (_col(runs, "tags." + PARENT_TAG) == str(parent_run_id)) | (runs["run_id"] == str(parent_run_id))
    return keep


def _progress(message: str) -> None:
    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


def load_study(uri: str, *, experiment: str | Iterable[str] | None = None, sweep_id: str | None = None,
               parent_run_id: str | None = None, tags: dict[str, Any] | None = None,
               include_failed: bool = True, metrics: Iterable[str] | None = CURVE_METRICS) -> StudyData:
    """Read the selected runs and their per-round curves in bulk.

    Args:
        uri: MLflow tracking URI (``sqlite:///...``, ``postgresql://...``, ``http://...``).
        experiment: experiment name(s), comma-separated or a list; None: every experiment.
        sweep_id: only runs tagged with this ``sweep_id``.
        parent_run_id: only the children of this study parent run (tag ``mlflow.parentRunId``).
        tags: exact tag values every selected run must carry, e.g. ``{"algo": "gp_ei"}``.
        include_failed: keep FAILED/KILLED runs (the statistics count them as the worst value); False keeps
            FINISHED runs only. RUNNING/SCHEDULED runs are never data.
        metrics: per-round metric keys to read into ``curves``; None reads every key.

    Returns:
        A :class:`StudyData`; ``runs`` may be empty (the caller words the error).

    Raises:
        SelectionError: an experiment that does not exist, or a ``parent_run_id`` that is not in the store.
    """
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp_ids = experiment_ids(client, experiment, uri)
    names = {e.experiment_id: e.name for e in client.search_experiments()}
    keys = tuple(metrics) if metrics is not None else None
    store = _sql_store(client)
    _progress(f"reading runs from {uri} ...")
    raw = _runs_sql(store, exp_ids) if store is not None else _runs_client(client, exp_ids)
    table = _tidy(raw, names) if len(raw) else pd.DataFrame(columns=RUN_COLUMNS)
    if parent_run_id and not (table["run_id"] == parent_run_id).any():
        raise SelectionError(f"parent_run_id='{parent_run_id}' is not a run of the selected experiments in {uri}")
    table = table[_select(table, sweep_id, parent_run_id, tags)]
    kind = _col(table, "tags." + KIND_TAG)
    parents = table[kind.isin(NOT_DATA_KINDS)].reset_index(drop=True)
    statuses = ("FINISHED",) + (FAILED_STATUSES if include_failed else ())
    superseded = _col(table, "tags." + SUPERSEDED_TAG) == "true"
    runs = table[~kind.isin(NOT_DATA_KINDS) & ~superseded & table["status"].isin(statuses)]
    # one order whatever the store: SQL returns rows as stored, a server newest first, and the bootstrap and
    # the tables follow the row order (the same numbers from sqlite, postgresql:// and http://)
    runs = runs.assign(_start=pd.to_numeric(runs["start_time"], errors="coerce")).sort_values(
        ["_start", "run_id"], kind="stable").drop(columns="_start").reset_index(drop=True)
    if parents.empty:
        parents = _outside_parent(client, runs, names)
    _progress(f"reading the curves of {len(runs)} runs ...")
    ids = list(runs["run_id"])
    long = _curves_sql(store, ids, keys) if store is not None else _curves_client(client, runs, keys)
    compact = _curves_compact(runs, uri, keys)
    if len(compact):
        long = pd.concat([long, compact], ignore_index=True)
    curves = _curves_table(long)
    selection = (f"store {mask_secrets(uri)}; experiment {experiment or 'all'}; sweep {sweep_id or 'any'}; "
                 f"parent {parent_run_id or 'any'}; tags {tags or 'any'}; "
                 f"{'FINISHED and FAILED/KILLED' if include_failed else 'FINISHED'} runs")
    return StudyData(runs, curves, parents, uri, selection)


def _outside_parent(client: Any, runs: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """The study parent of the selected runs when they share one that the selection itself left out (e.g. it
    sits in another experiment): one ``get_run``."""
    ids = {p for p in runs.get("parent_run_id", pd.Series(dtype=object)) if isinstance(p, str) and p}
    if len(ids) != 1:
        return pd.DataFrame(columns=RUN_COLUMNS)
    try:
        r = client.get_run(ids.pop())
    except Exception:  # noqa: BLE001 - a deleted or unreadable parent: the report just has none
        return pd.DataFrame(columns=RUN_COLUMNS)
    if r.data.tags.get(KIND_TAG) != "study":
        return pd.DataFrame(columns=RUN_COLUMNS)
    row = {"run_id": r.info.run_id, "run_name": r.info.run_name, "experiment_id": r.info.experiment_id,
           "status": r.info.status, "start_time": r.info.start_time, "end_time": r.info.end_time,
           **{f"tags.{k}": v for k, v in r.data.tags.items()}}
    return _tidy(pd.DataFrame([row]), names)


def _curves_table(long: pd.DataFrame) -> pd.DataFrame:
    """Long (run, key, step, value) rows -> one row per (run_id, step), one column per key."""
    if long.empty:
        return pd.DataFrame(columns=["run_id", "step"])
    long = long.drop_duplicates(["run_uuid", "step", "key"], keep="last")
    wide = long.set_index(["run_uuid", "step", "key"])["value"].unstack("key")
    wide.columns.name = None
    wide.index.names = ["run_id", "step"]
    return wide.reset_index().sort_values(["run_id", "step"], kind="stable").reset_index(drop=True)


# -- how far per-round arrays reach ---------------------------------------------------------------------------
def logged_rounds(curves: pd.DataFrame, run_ids: Iterable[str], rounds: int) -> int:
    """The last round in 1..``rounds`` at which any of ``run_ids`` logged a curve row (at least 1, at most
    ``rounds``): the width of their per-round arrays. Past a run's last logged round its best so far only carries
    forward, so nothing is lost; a run stopped by its cost budget has ``budget.rounds`` = 1,000,000 (no round
    limit) and logs far fewer rounds, so arrays out to ``budget.rounds`` would be runs x 10^6 floats."""
    if rounds <= 1:
        return rounds
    if not len(curves) or "step" not in curves.columns:
        return 1
    steps = curves.loc[curves["run_id"].isin(set(run_ids)), "step"].to_numpy(float)
    steps = steps[(steps >= 1) & (steps <= rounds)]
    return int(steps.max()) if steps.size else 1


def last_steps(curves: pd.DataFrame) -> dict[str, int]:
    """Each run's last logged step (runs without curve rows are absent)."""
    if not len(curves) or "step" not in curves.columns:
        return {}
    return {str(k): int(v) for k, v in curves.groupby("run_id", sort=False)["step"].max().items()}


# -- per-run view used by the per-task tables ----------------------------------------------------------------
def _per_round(curve: pd.DataFrame, key: str, rounds: int) -> np.ndarray:
    out = np.full(rounds, np.nan)
    if key in curve.columns:
        steps = curve["step"].to_numpy(int)
        ok = (steps >= 1) & (steps <= rounds)
        out[steps[ok] - 1] = curve[key].to_numpy(float)[ok]
    return out


def _task_widths(data: StudyData) -> dict[str, int]:
    """Per task_key: the last round any of its runs logged within its own ``budget.rounds`` (at least 1)."""
    last = last_steps(data.curves)
    widths: dict[str, int] = {}
    for run in data.runs.itertuples(index=False):
        rounds = int(run.rounds) if run.rounds == run.rounds else 0
        reached = min(last.get(str(run.run_id), 1), rounds)
        widths[run.task_key] = max(widths.get(run.task_key, 1), reached)
    return widths


def to_run_curves(data: StudyData) -> list[RunCurve]:
    """One :class:`RunCurve` per run with a positive ``budget.rounds`` (values: true value where logged), each
    ``min(budget.rounds, the last round any run of its task logged)`` long (see :func:`logged_rounds`)."""
    by_run = dict(tuple(data.curves.groupby("run_id", sort=False))) if len(data.curves) else {}
    out = []
    empty = pd.DataFrame(columns=["step"])
    walls = dict(zip(data.runs["run_id"], _col(data.runs, "metrics.wall_time", math.nan)))
    widths = _task_widths(data)
    for run in data.runs.itertuples(index=False):
        rounds = int(run.rounds) if run.rounds == run.rounds else 0
        if rounds <= 0:
            continue
        rounds = min(rounds, widths[run.task_key])
        c = by_run.get(run.run_id, empty)
        values, truth = _per_round(c, "value", rounds), _per_round(c, "true_value", rounds)
        values = np.where(np.isnan(truth), values, truth)
        regret = _per_round(c, "regret", rounds) if run.regret_reference == "optimum" else None
        fidelity = _per_round(c, "fidelity", rounds)
        task_key = tuple(str(run.task_key).split(" "))
        out.append(
            RunCurve(
                run.run_id,
                run.algo,
                task_key,
                run.seed,
                run.status,
                run.direction,
                run.regret_reference,
                values,
                regret,
                _per_round(c, "query_cost", rounds),
                float(walls[run.run_id]),
                extra={"run_name": run.run_name, "experiment_id": run.experiment_id},
                fidelity=fidelity if np.isfinite(fidelity).any() else None,
            )
        )
    by_task: dict[tuple[str, ...], list[RunCurve]] = {}
    for curve in out:
        by_task.setdefault(curve.task_key, []).append(curve)
    for key, group in data.runs.groupby("task_key", sort=False):  # one full level per task, as its incumbent's
        mine = by_task.get(tuple(str(key).split(" ")), [])
        level = full_fidelity(group, (c.fidelity for c in mine if c.fidelity is not None))
        for curve in mine:
            curve.full_fidelity = level
    return out


def load_curves(uri: str, experiment: str | Iterable[str] | None = None, sweep_id: str | None = None,
                include_failed: bool = False, tags: dict[str, Any] | None = None) -> list[RunCurve]:
    """Every selected run's curves (FINISHED runs only unless ``include_failed``), read in bulk."""
    return to_run_curves(load_study(uri, experiment=experiment, sweep_id=sweep_id, tags=tags,
                                    include_failed=include_failed))


BEST_CONFIG_TAG = "final.best_config"  # JSON, written by the tracker when the run ends
FULL_FIDELITY_TAG = "final.incumbent_fidelity"  # the task's full fidelity, the level the run's incumbent counts
FULL_TOL = 1e-9  # a level within this of the full one is the full one


def full_fidelity(runs: pd.DataFrame, levels: Iterable[np.ndarray]) -> float:
    """The level a task's incumbent is taken from: the largest ``final.incumbent_fidelity`` tag of its ``runs``
    (the task's full fidelity, written when a run ends), else (runs logged before that tag, or not ended) the
    highest of the ``levels`` they logged; NaN for a task without a fidelity."""
    tagged = pd.to_numeric(_col(runs, "tags." + FULL_FIDELITY_TAG, math.nan), errors="coerce")
    if np.isfinite(tagged).any():
        return float(np.nanmax(tagged))
    return max((float(np.nanmax(f)) for f in levels if np.isfinite(f).any()), default=math.nan)


def best_config(uri: str, run_id: str, runs: pd.DataFrame | None = None) -> dict[str, Any] | None:
    """The run's best configuration: its ``final.best_config`` tag (from the bulk-read ``runs`` table, so any
    store, ``postgresql://`` included, gives it), else its ``summary.json`` artifact (None if neither)."""
    column = f"tags.{BEST_CONFIG_TAG}"
    if runs is not None and column in runs.columns:
        tagged = runs.loc[runs["run_id"] == run_id, column]
        if len(tagged) and isinstance(tagged.iloc[0], str):
            try:
                return json.loads(tagged.iloc[0])
            except ValueError:
                pass
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = client.download_artifacts(run_id, "summary.json", tmp)
            with open(path) as fh:
                return json.load(fh).get("best_config")
    except Exception:  # noqa: BLE001 - artifacts switched off or not reachable: the table says n/a
        return None


def read_curves(data: StudyData, keys: Iterable[str]) -> pd.DataFrame:
    """More per-round metrics of the selected runs (``keys``: e.g. the objectives of a multi-objective study, which
    ``load_study`` does not read by default), as ``curves``: one row per (run_id, step), one column per key."""
    from mlflow.tracking import MlflowClient

    wanted = tuple(dict.fromkeys(keys))
    if data.runs.empty or not wanted:
        return pd.DataFrame(columns=["run_id", "step"])
    client = MlflowClient(tracking_uri=data.uri)
    store = _sql_store(client)
    runs = data.runs
    long = (_curves_sql(store, list(runs["run_id"]), wanted) if store is not None
            else _curves_client(client, runs, wanted))
    return _curves_table(long)
