"""Hydra entry point: compose -> validate -> call the library (build, run, print the summary).

Exit status: 0 done, 1 the run failed (objective error under ``on_error=fail``, the store vanished or became
read-only, another process took the run over), 2 bad config or a refused resume, 128 + N after signal N
(SIGTERM: 143, Ctrl-C: 130; the run is KILLED with every completed round logged and can be resumed).
In a multirun, a failing job prints its one-line error and is recorded as failed (its MLflow run is
FAILED); Hydra's sweeper still runs every other job of the sweep and exits non-zero at the end.
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__" and any(a in ("--help", "-h") for a in sys.argv[1:]):
    from hpoflow.cli_help import help_text

    print(help_text())
    sys.exit(0)

from hpoflow.output_masking import install as install_output_masking

install_output_masking()
if __name__ == "__main__":
    from hpoflow.cli_errors import argv_error

    _problem = argv_error(sys.argv[1:])
    if _problem:  # what Hydra's parser would answer with its 8-line usage or a traceback
        print(f"Error: {_problem}", file=sys.stderr)
        sys.exit(2)  # before Hydra: its launcher lines, logs and run files never show a secret

import hydra  # noqa: E402 - after the fast --help path, which needs no Hydra
from omegaconf import DictConfig, OmegaConf

from hpoflow.cli_errors import JobFailed
from hpoflow.cli_errors import install as install_error_reporter
from hpoflow.identity import register_resolvers
from hpoflow.schema import register_configs

register_configs()
register_resolvers()
install_error_reporter()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from hpoflow.app import ConfigError, run_from_settings, validate
    from hpoflow.cli_outputs import (
        RUN_LOST,
        exit_without_store_cleanup,
        interrupted_message,
        lost_message,
        mask_hydra_outputs,
        sweep_id_from,
    )
    from hpoflow.loop import ObjectiveError
    from hpoflow.resume import plan_job
    from hpoflow.signals import Interrupted
    from hpoflow.signals import install as install_signal_handlers
    from hpoflow.tracking.health import StoreLost
    from hpoflow.tracking.params import mask_secrets

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    install_signal_handlers()
    mask_hydra_outputs(hc)

    def fail(message: str, status: int) -> None:
        message = mask_secrets(message)
        print(f"Error: {message}", file=sys.stderr, flush=True)
        if multirun:  # never sys.exit inside a sweep job: SystemExit would stop the whole sweep
            raise JobFailed(f"job {hc.job.num}: {message}", status)
        sys.exit(status)

    try:
        raw = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
        settings = validate(raw)  # type: ignore[arg-type]
        experiment = hc.runtime.choices.get("experiment")
        if experiment and not multirun:
            raise ConfigError(f"experiment={experiment} is a study (a sweep): run it with -m "
                              f"(python -m hpoflow -m experiment={experiment})")
        plan = plan_job(settings, list(hc.overrides.task), raw, multirun)  # type: ignore[arg-type]
        if isinstance(plan, str):  # a study re-run: this job's run is already FINISHED (or kept FAILED)
            print(f"job {hc.job.num}: {plan}", flush=True)
            return
        settings, resume = plan
        run_from_settings(settings, OmegaConf.to_yaml(cfg), sweep_id_from(hc.sweep.dir) if multirun else None,
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
    except Interrupted as exc:  # the run is KILLED with every completed round logged: one line, 128 + signal
        message = interrupted_message(exc, hc.runtime.output_dir, cfg.get("resume"))
        print(f"Error: {mask_secrets(message)}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
