"""The CLI's job, one per Hydra job: validate the composed config, plan the run (fresh, resumed, or skipped in a
re-run study), build and run it through :mod:`hpoflow.runner`, print the summary or one ``Error:`` line.

Exit status: 0 done, 1 the run failed (objective error under ``on_error=fail``, the store vanished or became
read-only, another process took the run over), 2 bad config or a refused resume, 128 + N after signal N
(SIGTERM: 143, Ctrl-C: 130; the run is KILLED with every completed round logged and can be resumed; a sweep under
a process launcher, joblib or submitit_local, stops its workers first: :mod:`hpoflow.store.sweep_signals`).
A full disk under the store or the run folder: one line, exit 1, the run FAILED and resumable.
In a multirun, a failing job prints its one-line error and is recorded as failed (its MLflow run is
FAILED); Hydra's sweeper still runs every other job of the sweep and exits non-zero at the end.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf

if TYPE_CHECKING:
    from hpoflow.config.settings import Settings
    from hpoflow.runner.loop import RunResult


def run_job(cfg: DictConfig) -> None:
    """One job of ``python -m hpoflow``: validate, plan (fresh, resumed or skipped), run, report in one line."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from hpoflow.cli.errors import JobFailed
    from hpoflow.cli.outputs import (
        RUN_LOST,
        disk_full_message,
        exit_without_store_cleanup,
        interrupted_message,
        lost_message,
        mask_hydra_outputs,
        sweep_id_from,
    )
    from hpoflow.config.settings import ConfigError, validate
    from hpoflow.core.signals import Interrupted
    from hpoflow.core.signals import install as install_signal_handlers
    from hpoflow.runner.loop import ObjectiveError
    from hpoflow.store.health import StoreLost, disk_full
    from hpoflow.store.params import mask_secrets
    from hpoflow.store.resume import plan_job
    from hpoflow.store.sweep_signals import idle_worker, in_worker, leave_worker

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)  # a traceback per error; ours: one line
    install_signal_handlers()
    mask_hydra_outputs(hc)

    def fail(message: str, status: int) -> None:
        message = mask_secrets(message)
        print(f"Error: {message}", file=sys.stderr, flush=True)
        if multirun:  # never sys.exit inside a sweep job: SystemExit would stop the whole sweep
            raise JobFailed(f"job {hc.job.num}: {message}", status)
        sys.exit(status)

    try:
        experiment = hc.runtime.choices.get("experiment")
        if experiment and not multirun:  # before validate: answered without importing torch (validate may)
            raise ConfigError(f"experiment={experiment} is a study (a sweep): run it with -m "
                              f"(python -m hpoflow -m experiment={experiment})")
        raw = resolved(cfg)
        settings = validate(raw)
        plan = plan_job(settings, list(hc.overrides.task), raw, multirun)
        if isinstance(plan, str):  # a study re-run: this job's run is already FINISHED (or kept FAILED)
            print(f"job {hc.job.num}: {plan}", flush=True)
            return
        settings, resume = plan
        # no config text: the config.yaml artifact is dumped from the resolved settings (MlflowTracker.start)
        run_from_settings(settings, "", sweep_id_from(hc.sweep.dir) if multirun else None,
                          run_dir=hc.runtime.output_dir, resume=resume)
    except ConfigError as exc:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        fail(str(exc), 2)
    except ObjectiveError as exc:  # the run is already FAILED in MLflow with every earlier step logged
        fail(f"run failed: {exc}", 1)
    except RUN_LOST as exc:  # the store vanished or another writer took over: the checkpoint is kept
        message = mask_secrets(lost_message(exc, hc.runtime.output_dir, cfg.get("resume")))
        if isinstance(exc, StoreLost):  # the store is unusable: no other job can use it either
            print(f"Error: {message}", file=sys.stderr, flush=True)
            exit_without_store_cleanup(1)
        fail(message, 1)
    except Exception as exc:  # a full disk under the store or the run folder: the run is FAILED, resumable
        if not disk_full(exc) or os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"Error: {mask_secrets(disk_full_message(hc.runtime.output_dir, cfg.get('resume')))}", file=sys.stderr,
              flush=True)
        exit_without_store_cleanup(1)  # closing SQLite would write into the full disk again
    except Interrupted as exc:  # the run is KILLED with every completed round logged: one line, 128 + signal
        if in_worker():  # a process launcher's worker: the launching process prints the sweep's one line
            leave_worker(exc.exit_code)
        message = interrupted_message(exc, hc.runtime.output_dir, cfg.get("resume"))
        print(f"Error: {mask_secrets(message)}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)
    finally:
        idle_worker()  # between jobs a worker leaves quietly on a signal


def resolved(cfg: DictConfig) -> dict[str, Any]:
    """The job's config with every interpolation resolved; an unresolvable one (an unset ``${oc.env:X}``, a value
    of the wrong type) is a ConfigError naming the key."""
    from omegaconf.errors import OmegaConfBaseException

    from hpoflow.config.settings import ConfigError

    try:
        return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None)
        reason = str(getattr(exc, "msg", None) or exc).splitlines()[0]
        raise ConfigError(f"{key}: {reason}; allowed: a value of the setting's type (an environment variable "
                          "that is set)" if key else reason) from None


def run_from_settings(s: Settings, config_text: str = "", sweep_id: str | None = None,
                      print_summary: bool = True, run_dir: str | None = None,
                      resume: tuple[Any, str] | None = None) -> RunResult | None:
    """The CLI's job: build the run (:func:`hpoflow.runner.build.open_run`), run it, print the summary.

    ``run_dir``: where the per-round checkpoint is written (``<run_dir>/checkpoint.json``).
    ``resume``: ``(loop state, checkpoint path)`` from :func:`hpoflow.store.resume.resume_settings`: continue that run.
    """
    from hpoflow.cli.outputs import print_run_summary
    from hpoflow.core.checkpoint import FILENAME
    from hpoflow.runner.build import execute, open_run

    state, checkpoint_path = resume if resume is not None else (None, None)
    if state is not None and state.meta.get("status") == "FINISHED":
        how = ("; its store says FINISHED with every round, the process ended before its checkpoint said so"
               if state.meta.get("finished_by") == "store" else "")
        print(f"resume: the run already finished ({state.round} rounds{how}); nothing to do", file=sys.stdout)
        return None
    if state is not None:
        config_text = state.meta.get("config_text", config_text)
    if checkpoint_path is None and run_dir is not None and s.checkpoint_every > 0:
        checkpoint_path = str((Path(run_dir) / FILENAME).resolve())
    run = open_run(s, config_text=config_text, sweep_id=sweep_id, checkpoint_path=checkpoint_path, resume=state)
    result = execute(run, s.progress)
    if print_summary:
        from hpoflow.runner.build import algorithm_tags

        print_run_summary(result.summary, run.uri, run.run_id, getattr(run.loop.tracker, "experiment_id", None),
                          algorithm_tags(run.loop.algorithm), run.loop.task.objectives, result.records)
    return result
