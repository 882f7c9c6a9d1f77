"""Hydra callback of a multirun: the store, the study's parent run, and the account at the end.

``on_multirun_start`` (in the process that launches the jobs) creates the store once (parallel jobs never race
to create the schema), checks an ``experiment=`` study against the command's overrides, opens the study's
parent run and hands its id to every job by appending overrides to ``hydra.overrides.hydra``: Hydra composes
every job's config from that list (``load_sweep_config``), whichever launcher runs it. ``on_multirun_end``
prints the study's account and ends the parent run; a sweep that stops early (a failed job, Ctrl-C) ends it
from ``close_open_studies`` or at exit. The launching process stops its workers on SIGTERM/SIGINT
(:mod:`hpoflow.store.sweep_signals`).
"""
from __future__ import annotations

import atexit
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from hydra.experimental.callback import Callback

_OPEN: list[StudyCallback] = []
GROUPS = ("algo", "task", "surrogate", "hardware", "tracking")  # config groups: choosing outside a study contradicts it


def _values(override_value: str) -> list[str]:
    return [v.strip() for v in str(override_value).split(",") if v.strip()]


def _user_overrides(config: Any) -> dict[str, str]:
    out = {}
    for item in config.hydra.overrides.task:
        key, sep, value = str(item).partition("=")
        if sep:
            out[key.lstrip("+~")] = value
    return out


def contradiction(experiment: str, overrides: dict[str, str]) -> str | None:
    """A message when the command contradicts the study ``experiment`` declares, else None.

    Narrowing is allowed (``algo=gp_ei`` when the study sweeps ``algo: random,gp_ei``), and so is any setting
    (``seed=range(0,50)``, ``task.steps_scale=1``: the paper-scale overrides). Contradictions: a group choice
    (algo, task, surrogate, ...) outside what the study declares, and a key its cells set per cell.
    """
    import yaml

    from hpoflow.config.schema import CONF_DIR

    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    declared = yaml.safe_load(path.read_text()) if path.is_file() else {}
    sweeper = (declared.get("hydra") or {}).get("sweeper") or {}
    choices = {str(k): _values(v) for k, v in (sweeper.get("params") or {}).items() if str(k) in GROUPS}
    for item in declared.get("defaults") or []:  # "override /task: tv_synthetic" fixes a group choice
        if isinstance(item, dict):
            for key, value in item.items():
                group = str(key).removeprefix("override /")
                if str(key).startswith("override /") and "/" not in group:
                    choices.setdefault(group, _values(value))
    per_cell = {str(k) for cell in (sweeper.get("cells") or {}).values() for k in (cell or {})}
    for key, value in overrides.items():
        if key in per_cell:
            return (f"{key}={value} contradicts experiment={experiment}, whose cells set {key}; allowed: "
                    f"sweep.cell=<cells> to run some of them ({', '.join(sweeper['cells'])})")
        if key in choices and not set(_values(value)) <= set(choices[key]):
            return (f"{key}={value} contradicts experiment={experiment}, which declares {key} in "
                    f"{{{', '.join(choices[key])}}}; allowed: a subset of those values (copy "
                    f"conf/experiment/{experiment}.yaml to declare another study)")
    return None


def _plain(node: Any) -> dict[str, Any]:
    """A DictConfig as a plain dict, interpolations left as written."""
    from omegaconf import OmegaConf

    value = OmegaConf.to_container(node, resolve=False, throw_on_missing=False)
    if not isinstance(value, dict):
        raise TypeError(f"expected a mapping in the composed config, got {type(value).__name__}")
    return cast("dict[str, Any]", value)  # a DictConfig's keys are strings


class StudyCallback(Callback):
    """One MLflow parent run per multirun (a *study*); see :mod:`hpoflow.store.sweeps`."""

    def __init__(self) -> None:
        self.client: Any = None
        self.experiment_id: str | None = None
        self.parent_run_id: str | None = None
        self.invocation: str | None = None
        self.name: str | None = None
        self.created = False  # the parent run was created by this invocation

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        from omegaconf import OmegaConf, read_write

        from hpoflow.config.launchers import check_launcher
        from hpoflow.store.backend import default_uri, make_client
        from hpoflow.store.sweep_signals import install as stop_workers_on_signals

        stop_workers_on_signals()  # a process launcher's workers are stopped with the sweep, never orphaned
        launcher = OmegaConf.to_container(config.hydra.launcher, resolve=False)
        problem = check_launcher(launcher if isinstance(launcher, dict) else {})  # type: ignore[arg-type]
        if problem:  # before any job is built or submitted
            print(f"Error: {problem}", file=sys.stderr, flush=True)
            sys.exit(2)
        batch = config.hydra.sweeper.get("max_batch_size")
        if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
            print(f"Error: hydra.sweeper.max_batch_size={batch!r} is not a batch size; allowed: null (all jobs at "
                  "once) or an integer >= 1", file=sys.stderr, flush=True)
            sys.exit(2)
        choices = config.hydra.runtime.choices
        experiment = choices.get("experiment")
        overrides = _user_overrides(config)
        if experiment:
            problem = contradiction(str(experiment), overrides)
            if problem:
                print(f"Error: {problem}", file=sys.stderr, flush=True)
                sys.exit(2)
        tracking = config.get("tracking") or {}
        if not tracking.get("enabled", True):
            return
        uri = tracking.get("uri") or default_uri()
        from hpoflow.config.validation import uri_scheme_problem

        problem = uri_scheme_problem(str(uri))
        if problem:
            print(f"Error: {problem}", file=sys.stderr, flush=True)
            sys.exit(2)
        try:
            self.client = make_client(uri)
        except Exception as exc:  # noqa: BLE001 - an unusable store: one line, before any job
            print(f"Error: tracking.uri={uri!r}: cannot open the MLflow store ({type(exc).__name__}: "
                  f"{str(exc).splitlines()[0][:300] if str(exc) else ''})", file=sys.stderr, flush=True)
            sys.exit(2)
        declared_params = config.hydra.sweeper.get("params")
        params = _plain(declared_params) if declared_params is not None else {}
        composed = _plain(config)
        composed.pop("hydra", None)
        study = open_study(self.client, uri, tracking.get("experiment"), str(experiment) if experiment else None,
                           params, list(overrides_list(config)), choices.get("task"), composed,
                           str(Path(str(config.hydra.sweep.dir)).resolve()))
        self.name, self.invocation, self.experiment_id = study.name, study.invocation, study.experiment_id
        self.parent_run_id, self.created = study.parent_run_id, study.created
        mlflow_experiment = study.mlflow_experiment
        injected = [f"sweep.parent_run_id={self.parent_run_id}", f"sweep.invocation={self.invocation}",
                    f"sweep.study='{self.name}'"]
        if not tracking.get("experiment"):
            injected.append(f"tracking.experiment='{mlflow_experiment}'")
        with read_write(config.hydra.overrides):
            for item in injected:
                config.hydra.overrides.hydra.append(item)
        _OPEN.append(self)
        atexit.register(self.close, interrupted=True)

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        account = self.close()
        if account is not None and (account.failed or account.killed or account.running):
            sys.exit(1)

    def close(self, interrupted: bool = False, error: str | None = None) -> Any:
        """End the parent run once, printing the study's account; returns it (None when nothing was open)."""
        experiment_id, parent_run_id, invocation, name = (self.experiment_id, self.parent_run_id, self.invocation,
                                                          self.name)  # all set once the parent run is open
        if experiment_id is None or parent_run_id is None or invocation is None or name is None or self not in _OPEN:
            return None
        _OPEN.remove(self)
        from hpoflow.store import sweeps

        try:
            return sweeps.close_parent(self.client, experiment_id, parent_run_id, invocation, name,
                                       interrupted=interrupted, error=error)
        except Exception as exc:  # noqa: BLE001 - the jobs' runs are already safe; say why the parent is not
            print(f"Warning: could not close study run {self.parent_run_id}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return None


    def discard(self) -> None:
        """The sweep was refused before any job ran (a job's config cannot be composed): a parent run this
        invocation created is deleted, one it reopened is closed as before; nothing else was written."""
        if self not in _OPEN or self.parent_run_id is None or self.experiment_id is None:
            return
        from hpoflow.store import sweeps
        from hpoflow.store.backend import retry

        parent = self.parent_run_id
        children = retry(lambda: self.client.search_runs(
            [self.experiment_id], f"tags.`{sweeps.PARENT_TAG}` = '{parent}'", max_results=1))
        if children or not self.created:
            self.close()
            return
        _OPEN.remove(self)
        try:
            retry(lambda: self.client.delete_run(parent))
        except Exception as exc:  # noqa: BLE001 - the refusal is what the user needs to read
            print(f"Warning: could not delete the empty study run {parent}: {type(exc).__name__}", file=sys.stderr)


@dataclass(frozen=True)
class OpenStudy:
    """A study's parent run, open (RUNNING) for this invocation."""

    experiment_id: str
    parent_run_id: str
    invocation: str
    name: str               # the study's name: ``experiment=``, else the MLflow experiment
    mlflow_experiment: str  # where its runs go (``tracking.experiment``, else the one task, else "sweeps")
    created: bool           # the parent run was created now (not reopened)


def open_study(client: Any, uri: str, tracking_experiment: str | None, experiment: str | None,
               params: dict[str, Any], overrides: list[str], default_task: str | None, composed: dict[str, Any],
               sweep_dir: str) -> OpenStudy:
    """Create or reopen the parent run of the study that ``experiment``, its sweeper ``params`` and the command's
    ``overrides`` declare (the same declaration finds the same parent, whichever command runs it: ``python -m
    hpoflow -m`` or ``python -m hpoflow.batch``). ``composed``: the config without ``hydra`` (``study.yaml``)."""
    from omegaconf import OmegaConf

    from hpoflow.store import sweeps
    from hpoflow.store.backend import artifact_location, get_or_create_experiment
    from hpoflow.store.params import redact_tree

    given = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if sep:
            given[key.lstrip("+~")] = value
    tasks = set(_values(given.get("task", ""))) | set(_values(params.get("task", "")))
    mlflow_experiment = tracking_experiment or (
        next(iter(tasks)) if len(tasks) == 1 else (default_task if not tasks else "sweeps"))
    name = str(experiment or mlflow_experiment)
    key = sweeps.study_key(experiment, params, overrides)
    invocation = sweeps.new_invocation()
    experiment_id = get_or_create_experiment(client, str(mlflow_experiment), artifact_location(uri))
    declared = {"experiment": experiment, "sweep": params, "overrides": overrides}
    text = OmegaConf.to_yaml(OmegaConf.create(redact_tree(composed)))
    parent_run_id, created = sweeps.open_parent(client, experiment_id, key, name, {"hpoflow.sweep_dir": sweep_dir},
                                                {"study": declared}, text)
    return OpenStudy(experiment_id, parent_run_id, invocation, name, str(mlflow_experiment), created)


def overrides_list(config: Any) -> list[str]:
    return [str(o) for o in config.hydra.overrides.task]


def close_open_studies(interrupted: bool = False, error: str | None = None) -> None:
    """End every study this process opened (a sweep stopped by a failed job; by a signal: ``interrupted``, the
    parent run KILLED; or by ``error``: the launcher could not start, the parent run FAILED with that tag): counts,
    status, account."""
    for callback in _OPEN.copy():  # close() removes the callback from _OPEN
        callback.close(interrupted=interrupted, error=error)


def discard_open_studies() -> None:
    """A sweep refused before its first job: see :meth:`StudyCallback.discard`."""
    for callback in _OPEN.copy():
        callback.discard()


InitStoreCallback = StudyCallback  # the name configs of earlier versions use
