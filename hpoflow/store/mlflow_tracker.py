"""MLflow tracker: one run per (algorithm, task, seed); metrics buffered and written with log_batch."""
from __future__ import annotations

import csv
import json
import tempfile
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hpoflow.core import signals
from hpoflow.core.fidelity import curve_key
from hpoflow.core.objectives import Objectives, pareto_front
from hpoflow.core.records import Record, RunStatus, at_full_fidelity
from hpoflow.store import lease as leases
from hpoflow.store.backend import artifact_location, get_or_create_experiment, is_database, make_client, retry
from hpoflow.store.curve_figure import FILENAME as CURVES_FILE
from hpoflow.store.curve_figure import plot_learning_curves
from hpoflow.store.health import StoreHealth, StoreLost
from hpoflow.store.params import mask_secrets, redact_tree, to_mlflow_params

MAX_BATCH = 1000  # MLflow's limit on metrics per log_batch call
MAX_PARAMS = 100  # ... and on params per call
MAX_TAG = 5000    # longest tag value written (MLflow's limit is 8000 characters)
STEP_MARKER = "query_cost"  # logged every round, and last: its presence at step t means round t is stored
COMPACT_TAG = "hpoflow.compact"     # "true": per-round values in ROUNDS_FILE, curves in CURVES_TABLE (not metrics)
ROUNDS_FILE = "round_metrics.csv"   # compact runs: one row per round (``step``, then every metric logged that round)
CURVES_TABLE = "learning_curves.csv"  # compact runs: one row per curve point (``config_id``, ``step``, ``value``)


class MlflowTracker:
    """Write a run to MLflow through ``MlflowClient``.

    Metrics are buffered and flushed every ``flush_every`` rounds, after ``flush_seconds``, and in
    ``finish``, which writes the last metrics and the final tags in one batch, logs the config, summary and
    trajectory CSV (and, with ``plots``, the regret plot and the artifact writers' figures) in one call, then
    sets the status. Plots are off by default: matplotlib costs ~0.5 s per run, and MLflow's UI charts
    every logged metric itself.
    Every write is retried on transient store errors (``store.retry``).

    With ``run_id`` the tracker continues an existing run (resume): the steps the store already holds
    are read once, and ``log`` skips their metrics, so that each step is logged exactly once. This relies
    on batches being written in order, each atomically, with ``STEP_MARKER`` last in every round.

    One writer per run: the tracker holds the run's lease (``hpoflow.store.lease``) from ``start`` to
    ``finish``, refreshed every ``heartbeat_s`` seconds; continuing a run whose lease is alive raises
    ``LeaseHeld``, a FINISHED one ``RunFinished``. Before each batch the store's health is checked: a SQLite
    file that vanished or became read-only raises ``StoreLost``; then nothing more is written.

    Fencing: before every batch (and, through :meth:`fence`, before every checkpoint write) the writer checks
    that it still holds the lease at its epoch (``lease.Heartbeat.fence``); a writer that was paused while
    another process took the run over raises ``LeaseLost`` and writes nothing more, not even a status.
    ``finish(FINISHED)`` returns only once the store holds every round and says FINISHED; otherwise it raises
    ``StoreLost`` (or ``LeaseLost``), so that the caller never reports success for a run the store lost.

    Compact (``compact=True``, ``tracking.compact``): nothing is written per round; ``finish`` logs each metric's
    final value (at the step it was last logged) and the per-round values and learning curves as the artifacts
    ``ROUNDS_FILE`` and ``CURVES_TABLE``, with the tag ``COMPACT_TAG``. A metric row costs ~0.5 ms in SQLite and a
    replayed run logs ~1,000 of them (its curves), about ten times the rest of the run; the report reads both
    forms. A compact run cannot be continued (its rounds live in memory until it ends): it is never checkpointed.
    """

    def __init__(self, uri: str, experiment: str, run_name: str | None = None, flush_every: int = 100,
                 flush_seconds: float = 10.0, artifacts: bool = True, run_id: str | None = None,
                 heartbeat_s: float = leases.DEFAULT_HEARTBEAT_S, plots: bool = False, take_over: bool = False,
                 objectives: Objectives | None = None, compact: bool = False) -> None:
        self.uri, self.experiment, self.run_name = uri, experiment, run_name
        self.compact = compact
        self._round_metrics: list[tuple[int, dict[str, float]]] = []  # compact: (round, metrics) of every round
        self.flush_every, self.flush_seconds, self.artifacts = flush_every, flush_seconds, artifacts
        self.plots = plots
        self.objectives = objectives  # several objectives: the run's Pareto front is written as pareto.json/.csv
        self._points: list[Record] = []  # the evaluations with values (several objectives): pareto.json/.csv
        self._curves: dict[int, list[list[float]]] = {}  # config id -> [[step, value], ...]: learning_curves.png
        self.client = make_client(uri)
        self.artifact_store: Any = self.client  # log_artifact(s) of the run: its repository once it is known
        self.run_id: str | None = run_id
        self.experiment_id: str | None = None
        self._buffer: list[Any] = []
        self._rows: list[dict[str, Any]] = []
        self._rounds_since_flush = 0
        self._last_flush = time.monotonic()
        self._config_text = ""
        self._finished = False
        self._artifact_writers: list[Callable[[Path], list[Path]]] = []
        self._stored_steps: set[int] = set()
        self.heartbeat_s = heartbeat_s
        self.take_over = take_over  # continuing a run whose writer is known dead (a launcher's retry)
        self.health = StoreHealth(uri)
        self._heartbeat: leases.Heartbeat | None = None
        self._lease: leases.Lease | None = None
        self._lost: BaseException | None = None  # LeaseLost / StoreLost once seen: nothing more is written
        self.before_flush: Callable[[], None] | None = None  # called before metrics or tags are written: the
        # deferred checkpoint save (hpoflow.core.checkpoint.Checkpointer.defer_s) goes to its file first
        self.after_flush: Callable[[], None] | None = None  # called after each metric batch written (not in a
        self._closing: RunStatus | None = None                 # FINISHED end): the checkpoint's store copy
        self.final_tags: Callable[[], dict[str, str]] | None = None  # tags known only at the end (the hardware
        # of a run that imported no torch), written with the final tags

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, params: dict[str, Any], tags: dict[str, str], config_text: str = "") -> None:
        """Create the run (or continue ``run_id``). The config.yaml artifact is the redacted ``params``."""
        if params:
            import yaml

            config_text = yaml.safe_dump(redact_tree(params), sort_keys=False, default_flow_style=False)
        self._config_text = config_text
        if self.run_id is not None:  # resuming an existing run
            run_id = self.run_id
            self._lease = leases.acquire(self.client, run_id, self.heartbeat_s,  # LeaseHeld, RunFinished
                                         grace_s=0.0 if self.take_over else None)
            self._start_heartbeat()
            info = retry(lambda: self.client.get_run(run_id)).info
            self.experiment_id = info.experiment_id
            self.artifact_store = RunArtifacts.of(info.artifact_uri, self.uri, self.client)
            history = retry(lambda: self.client.get_metric_history(run_id, STEP_MARKER))
            self._stored_steps = {m.step for m in history}
            retry(lambda: self.client.update_run(run_id, status="RUNNING"))
            for key, value in tags.items():
                retry(partial(self.client.set_tag, run_id, key, str(value)))
            if "error" in retry(lambda: self.client.get_run(run_id)).data.tags:
                retry(lambda: self.client.delete_tag(run_id, "error"))  # the earlier crash is over
            return
        exp_id = get_or_create_experiment(self.client, self.experiment, artifact_location(self.uri))
        self.experiment_id = exp_id
        self._lease = leases.Lease.mine(self.heartbeat_s)
        run_tags = {**{k: mask_secrets(str(v)) for k, v in tags.items()}, **self._lease.tags()}
        run = retry(lambda: self.client.create_run(exp_id, tags=run_tags, run_name=self.run_name))
        self.run_id = run.info.run_id
        self._start_heartbeat()
        from mlflow.entities import Param

        items = [Param(k, v) for k, v in to_mlflow_params(params).items()]
        for i in range(0, len(items), MAX_PARAMS):
            retry(partial(self.client.log_batch, run.info.run_id, params=items[i:i + MAX_PARAMS]))
        self.artifact_store = RunArtifacts.of(run.info.artifact_uri, self.uri, self.client)  # after the params: a
        # run lost before them is one without params (hpoflow.store.sweeps.check_same_config)

    def _start_heartbeat(self) -> None:
        assert self.run_id is not None and self._lease is not None
        self.health = StoreHealth(self.uri)
        self._heartbeat = leases.Heartbeat(self.client, self.run_id, self._lease, check=self.health.check).start()

    def _check(self) -> None:
        """Raise if the lease or the store is lost (the heartbeat's finding, the fence, the store's file)."""
        if self._lost is not None:
            raise self._lost
        try:
            if self._heartbeat is not None:
                self._heartbeat.fence()
            self.health.check()
        except (leases.LeaseLost, StoreLost) as exc:
            self._lost = exc
            raise

    def fence(self) -> None:
        """Raise ``LeaseLost`` if another process took the run over (called before each checkpoint write).

        A lost store does not stop the checkpoint: it is then the only copy of the last rounds.
        """
        if isinstance(self._lost, leases.LeaseLost):
            raise self._lost
        if self._heartbeat is not None and not self._finished:
            try:
                self._heartbeat.fence()
            except leases.LeaseLost as exc:
                self._lost = exc
                raise

    def log(self, record: Record, metrics: dict[str, float]) -> None:
        from mlflow.entities import Metric

        if self._lost is not None:
            raise self._lost
        if self._heartbeat is not None:
            self._heartbeat.raise_if_failed()
        if self.compact:
            self._round_metrics.append((record.round, dict(metrics)))
        elif record.round not in self._stored_steps:
            ts = int(time.time() * 1000)
            self._buffer.extend(Metric(k, float(v), ts, record.round) for k, v in metrics.items()
                                if k != STEP_MARKER)
            self._buffer.extend(Metric(curve_key(record.config_id if record.config_id is not None else record.round),
                                       float(value), ts, int(step)) for step, value in record.curve)
            if STEP_MARKER in metrics:
                self._buffer.append(Metric(STEP_MARKER, float(metrics[STEP_MARKER]), ts, record.round))
        row: dict[str, Any] = {"round": record.round, **{f"param.{k}": v for k, v in record.config.items()}}
        row.update({k: metrics.get(k) for k in ("value", "best_value", "regret", "cumulative_regret",
                                                 "simple_regret", "query_cost", "wall_time")})
        row["queried"], row["failed"] = record.queried, record.failed
        if record.fidelity is not None:
            row["fidelity"], row["config_id"] = record.fidelity, record.config_id
        row.update({f"values.{k}": v for k, v in record.values.items()})  # objectives and constraints, raw
        if self.objectives is not None and record.queried and not record.failed and record.values:
            self._points.append(record)
        if record.curve:
            self._curves.setdefault(record.config_id if record.config_id is not None else record.round,
                                    []).extend(record.curve)
        self._rows.append(row)
        self._rounds_since_flush += 1
        if (self._rounds_since_flush >= self.flush_every or len(self._buffer) >= MAX_BATCH
                or time.monotonic() - self._last_flush >= self.flush_seconds):
            self.flush()

    def flush(self, tags: dict[str, str] | None = None) -> None:
        """Write the buffered metrics, in batches of ``MAX_BATCH``; ``tags`` ride along with the last batch."""
        if self.run_id is None:
            return
        run_id = self.run_id
        from mlflow.entities import RunTag

        if self._buffer or tags:
            self._check()
            if self.before_flush is not None:
                self.before_flush()
        pending = [RunTag(k, v) for k, v in (tags or {}).items()]
        while self._buffer or pending:
            batch = self._buffer[:MAX_BATCH]
            last = len(self._buffer) <= MAX_BATCH
            tags_now = pending if last else []
            with signals.deferred():  # a batch is written whole, and dropped from the buffer, or neither
                retry(partial(self.client.log_batch, run_id, metrics=batch, tags=tags_now))
                self._buffer = self._buffer[MAX_BATCH:]
            if batch and self.after_flush is not None and self._closing is not RunStatus.FINISHED:
                self.after_flush()
            if last:
                pending = []
        self._rounds_since_flush = 0
        self._last_flush = time.monotonic()

    def finish(self, status: RunStatus, summary: dict[str, Any], error: str | None = None) -> None:
        """Write the last metrics, final tags and artifacts, then the status.

        Raises:
            LeaseLost, StoreLost: only for ``FINISHED``: another process took the run over, or the store was
                lost or does not hold every round afterwards (a FAILED/KILLED end, already raising, stays quiet).
                Nothing is written once either is known.
        """
        if self.run_id is None or self._finished:
            return
        self._finished = True
        self._closing = status
        try:
            self._check()  # fence + store health, while the heartbeat still runs (its findings count)
        except (leases.LeaseLost, StoreLost):
            self._stop_heartbeat()
            if status is RunStatus.FINISHED:
                raise
            return  # another process writes this run now, or the store is gone: write nothing
        self._stop_heartbeat()  # its other errors (a flaky server) must not stop the final writes
        terminated = False
        try:
            tags = {f"final.{key}": repr(summary[key]) for key in ("best_value", "cumulative_regret", "simple_regret",
                                                                   "hypervolume", "pareto_size", "incumbent_fidelity")
                    if isinstance(summary.get(key), (int, float))}  # incumbent_fidelity: the level best_value counts
            best = json.dumps(summary.get("best_config"), default=str, separators=(",", ":"))
            if summary.get("best_config") is not None and len(best) <= MAX_TAG:  # the report reads it from any store
                tags["final.best_config"] = best
            if isinstance(summary.get("cost_note"), str):  # a cost budget: what was spent of it, and why it ended
                tags["final.cost_note"] = summary["cost_note"][:MAX_TAG]
            if self.final_tags is not None:
                tags.update(self.final_tags())
            if error:
                tags["error"] = mask_secrets(error)[:5000]
            if self.compact:
                self._buffer_final_metrics()
            self.flush(tags)  # the last metrics and the final tags: one write
            if status is not RunStatus.FINISHED:  # the status before the artifacts: SIGTERM is often followed by
                terminated = True                 # SIGKILL after a short grace (Ray, Kubernetes), which must not
                retry(lambda: self.client.set_terminated(self.run_id, status=status.value))  # leave it RUNNING
            if self.artifacts:
                self._write_artifacts(summary)
            if status is RunStatus.FINISHED:
                retry(lambda: self.client.set_terminated(self.run_id, status=status.value))
                terminated = True
                self._verify_finished()
        except (leases.LeaseLost, StoreLost):
            if status is RunStatus.FINISHED:
                raise
            return
        finally:
            if not terminated and self._lost is None:
                retry(lambda: self.client.set_terminated(self.run_id, status=status.value))
            if self._lease is not None and self._lost is None and not (terminated and status is RunStatus.FINISHED):
                leases.release(self.client, self.run_id, self._lease)  # a FINISHED run is never re-opened: its
                # lease tags are left as they are (releasing costs a read and five deletes per run)

    def _buffer_final_metrics(self) -> None:
        """Compact: each metric's last value, at the round it was last logged (``STEP_MARKER`` last)."""
        from mlflow.entities import Metric

        last: dict[str, tuple[int, float]] = {}
        for round, metrics in self._round_metrics:
            for key, value in metrics.items():
                last[key] = (round, float(value))
        ts = int(time.time() * 1000)
        marker = last.pop(STEP_MARKER, None)
        self._buffer.extend(Metric(k, v, ts, step) for k, (step, v) in last.items())
        if marker is not None:
            self._buffer.append(Metric(STEP_MARKER, marker[1], ts, marker[0]))

    def _stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        self._heartbeat = None

    def _verify_finished(self) -> None:
        """After the last write: the store is still the same file, holds every round, and says FINISHED.

        Not read back from a database server (PostgreSQL, MySQL, SQL Server): it acknowledged each write after
        committing it, and no file can be swapped under it; a SQLite file (or a server that may write one) is.
        """
        try:
            self.health.check()  # a SQLite file removed in the last flush interval took the writes with it
        except StoreLost as exc:
            self._lost = exc
            raise
        if is_database(self.uri):
            return
        run_id = self.run_id
        expected = {row["round"] for row in self._rows if row.get("query_cost") is not None}
        if self.compact:  # only the last round's values are metrics
            expected = {max(expected)} if expected else set()
        stored = {m.step for m in retry(lambda: self.client.get_metric_history(run_id, STEP_MARKER))}
        status = retry(lambda: self.client.get_run(run_id)).info.status
        if not expected <= stored or status != RunStatus.FINISHED.value:
            self._lost = StoreLost(f"the final flush of run {run_id} was not stored (the store holds "
                                   f"{len(stored & expected)} of {len(expected)} rounds, status {status})")
            raise self._lost

    # -- artifacts ----------------------------------------------------------------------------
    def add_artifact_writer(self, writer: Callable[[Path], list[Path]]) -> None:
        """Call ``writer(folder)`` in ``finish`` when ``plots`` is on; the files it returns are logged too.

        Used for figures only the caller can draw (e.g. the surrogate picture). A writer that raises is
        reported as a warning and never changes the run's status.
        """
        self._artifact_writers.append(writer)

    def _write_artifacts(self, summary: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            if self._config_text:
                (folder / "config.yaml").write_text(self._config_text)
            (folder / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
            if self._rows:
                write_trajectory(self._rows, folder / "trajectory.csv")
                if self.plots:
                    plot_trajectory(self._rows, folder / "regret.png")
            if self.objectives is not None:
                top = summary.get("incumbent_fidelity")  # the front: full-fidelity evaluations only
                write_pareto(self.objectives, [(dict(r.config), dict(r.values)) for r in self._points
                                               if at_full_fidelity(r, top)], folder)
            if self.compact:
                write_compact_tables(self._round_metrics, self._curves, folder)
            elif self._curves:
                try:
                    plot_learning_curves(self._curves, folder / CURVES_FILE)
                except Exception as exc:  # noqa: BLE001 - a figure must never fail the run
                    warnings.warn(f"learning-curve figure failed: {type(exc).__name__}: {exc}", stacklevel=2)
            for writer in self._artifact_writers if self.plots else []:
                try:
                    paths = writer(folder)
                except Exception as exc:  # noqa: BLE001 - a figure must never fail the run
                    warnings.warn(f"artifact writer {writer!r} failed: {type(exc).__name__}: {exc}", stacklevel=2)
                    continue
                outside = [p for p in paths if Path(p).resolve().parent != folder.resolve()]
                for path in outside:  # files written elsewhere are logged one by one
                    retry(partial(self.artifact_store.log_artifact, self.run_id, str(path)))
            run_id = self.run_id
            retry(lambda: self.artifact_store.log_artifacts(run_id, str(folder)))  # one call for the whole folder


class RunArtifacts:
    """A run's artifact repository, opened from the artifact URI that creating (or reading) the run returned,
    with ``MlflowClient``'s ``log_artifact(s)`` signature: the client would read the run once more (one
    request per run on a server) to find that URI before its first upload."""

    def __init__(self, repo: Any) -> None:
        self.repo = repo

    @classmethod
    def of(cls, artifact_uri: str, tracking_uri: str, client: Any) -> Any:
        """The run's repository, or ``client`` itself where MLflow cannot open it from the URI alone."""
        from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

        try:
            return cls(get_artifact_repository(artifact_uri, tracking_uri=tracking_uri))
        except Exception:  # noqa: BLE001 - an unusual scheme: MLflow's own lookup (one read of the run) then
            return client

    def log_artifact(self, run_id: str, local_path: str, artifact_path: str | None = None) -> None:
        self.repo.log_artifact(local_path, artifact_path)

    def log_artifacts(self, run_id: str, local_dir: str, artifact_path: str | None = None) -> None:
        self.repo.log_artifacts(local_dir, artifact_path)


def write_pareto(objectives: Objectives, points: list[tuple[dict[str, Any], dict[str, float]]],
                 folder: Path) -> list[Path]:
    """The run's feasible non-dominated evaluations: ``pareto.json`` (the spec and ``front``: ``[{"config",
    "values"}]``, raw values, in evaluation order) and ``pareto.csv`` (one row per point: ``param.*`` then the
    values)."""
    front = pareto_front(objectives, points)
    (folder / "pareto.json").write_text(json.dumps({**objectives.describe(), "front": front}, indent=2,
                                                   default=str))
    rows = [{**{f"param.{k}": v for k, v in p["config"].items()}, **p["values"]} for p in front]
    write_trajectory(rows, folder / "pareto.csv", header=[*objectives.names, *objectives.constraints])
    return [folder / "pareto.json", folder / "pareto.csv"]


def write_compact_tables(round_metrics: list[tuple[int, dict[str, float]]], curves: dict[int, list[list[float]]],
                         folder: Path) -> None:
    """A compact run's per-round values (``ROUNDS_FILE``: ``step`` and one column per metric, empty where a
    round did not log it) and learning curves (``CURVES_TABLE``: ``config_id, step, value``)."""
    write_trajectory([{"step": round, **metrics} for round, metrics in round_metrics], folder / ROUNDS_FILE,
                     header=["step"])
    with open(folder / CURVES_TABLE, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["config_id", "step", "value"])
        writer.writerows([config_id, step, value] for config_id, points in curves.items() for step, value in points)


def write_trajectory(rows: list[dict[str, Any]], path: Path, header: list[str] | None = None) -> None:
    """``rows`` as CSV, columns in first-seen order (``header``: the columns of an empty table)."""
    keys: list[str] = [] if rows else list(header or [])
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def plot_trajectory(rows: list[dict[str, Any]], path: Path) -> Path | None:
    """Cumulative and simple regret per round (or the best value when regret is unknown)."""
    from matplotlib.figure import Figure  # no pyplot: a third of its import time, and no GUI backend

    rounds = [r["round"] for r in rows]
    fig = Figure(figsize=(9, 3.5))
    axes = fig.subplots(1, 2)
    if any(r.get("cumulative_regret") is not None for r in rows):
        axes[0].plot(rounds, [r.get("cumulative_regret") for r in rows])
        axes[0].set_ylabel("cumulative regret")
        axes[1].plot(rounds, [r.get("simple_regret") for r in rows])
        axes[1].set_ylabel("simple regret")
        axes[1].set_yscale("symlog", linthresh=1e-3)
    else:
        axes[0].plot(rounds, [r.get("value") for r in rows], ".")
        axes[0].set_ylabel("value")
        axes[1].plot(rounds, [r.get("best_value") for r in rows])
        axes[1].set_ylabel("best value")
    for ax in axes:
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.96, wspace=0.3)  # tight_layout costs ~0.3 s
    fig.savefig(path, dpi=100)
    return path
