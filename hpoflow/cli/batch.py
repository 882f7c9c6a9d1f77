"""``python -m hpoflow.batch``: a study's jobs one after another in this process, for thousands of cheap runs.

It takes what ``python -m hpoflow -m`` takes (``experiment=<name>``, sweeps such as ``seed=range(0,20)``,
settings) and runs the same jobs into the same study: the same parent run, the same runs (a re-run of either
command skips the runs the other finished). What it saves is the per-job overhead of a Hydra multirun (two
compositions of the whole config and a run folder per job, ~0.6 s): the config is composed once per combination
of config-group choices (``algo=``, ``task=``, ...), each job's values (``seed=3``, ``task.benchmark=...``) are
written into a copy as Hydra writes a command line's values, and MLflow, torch and the recorded benchmarks are
loaded once. Replayed studies (``task=lc_replay``) with ``tracking.compact=true`` then cost about 0.1 s a run.

Every job is composed and validated before the first one runs (a bad value anywhere: one line, exit 2, nothing
run). No run folder is written; a run is checkpointed only when the command sets ``checkpoint_every``, into
``outputs/batch/<study>/<job>/``. A failing job prints its one line and the others go on (exit 1 at the end);
SIGTERM or Ctrl-C ends the run in progress KILLED with its rounds logged and exits 128 + N. Written by hand
because Hydra has no API that composes many jobs from one defaults tree; it uses Hydra's own override parser,
sweep expansion (``BasicSweeper.split_arguments``) and value writer (``ConfigLoaderImpl._apply_overrides_to_config``).
"""
from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpoflow.config.settings import ConfigError

GROUP_PREFIXES = ("hydra/",)  # Hydra's own groups (hydra/launcher=...): a choice, never a value


@dataclass
class Job:
    """One job of the study: its overrides, as Hydra's sweeper gives them, and its validated settings."""

    number: int
    overrides: list[str]
    settings: Any = None
    raw: dict[str, Any] = field(default_factory=dict)


def _conf_dir() -> Path:
    from hpoflow.config.schema import CONF_DIR

    return CONF_DIR


def is_group_choice(key: str) -> bool:
    """Whether ``key`` (an override's key, ``+``/``~`` stripped) chooses a config group (``algo``, ``task``,
    ``experiment``, ``hydra/launcher``) rather than writing a value (``seed``, ``task.benchmark``)."""
    key = key.lstrip("+~").split("@", 1)[0]
    return key.startswith(GROUP_PREFIXES) or (_conf_dir() / key).is_dir()


class Composer:
    """Hydra compositions of ``conf/``, one per combination of group choices, reused for every job."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, ...], Any] = {}

    def compose(self, choices: list[str], with_hydra: bool = False) -> Any:
        """The DictConfig for the group-choice overrides ``choices`` (a copy: callers write into it).

        Raises:
            ConfigError: an unknown option (Hydra's error as one line).
        """
        from hydra import compose as hydra_compose
        from hydra import initialize_config_dir

        from hpoflow.config.compose import one_line, register_all

        key = (*choices, f"hydra={with_hydra}")
        if key not in self._cache:
            register_all()
            try:
                with initialize_config_dir(config_dir=str(_conf_dir()), version_base="1.3"):
                    self._cache[key] = hydra_compose(config_name="config", overrides=list(choices),
                                                     return_hydra_config=with_hydra)
            except Exception as exc:
                message = one_line(exc)
                if message is None:
                    raise
                raise ConfigError(message) from None
        return copy.deepcopy(self._cache[key])  # keeps the schema's types: "200" becomes 200.0 as in Hydra's job

    def job_config(self, overrides: list[str]) -> Any:
        """The job's config: its group choices composed (cached), then its values written as Hydra writes them.

        Raises:
            ConfigError: a key the config does not have, a value of the wrong type (one line).
        """
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.core.override_parser.overrides_parser import OverridesParser

        from hpoflow.config.compose import one_line

        parsed = OverridesParser.create().parse_overrides(overrides)
        choices = [str(o.input_line) for o in parsed if is_group_choice(o.key_or_group)]
        values = [o for o in parsed if not is_group_choice(o.key_or_group)]
        cfg = self.compose(choices)
        try:
            ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
        except Exception as exc:
            message = one_line(exc)
            if message is None:
                raise
            raise ConfigError(message) from None
        return cfg


def expand(args: list[str], composer: Composer) -> tuple[list[list[str]], Any, dict[str, Any]]:
    """The study's jobs (each its list of overrides, in Hydra's order: the first key varies slowest), the
    composed config of the command (``hydra`` included) and the sweeper's declared ``params``.

    Raises:
        ConfigError: an override Hydra cannot parse or compose, a sweeper this command does not run.
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides(args)
    except HydraException as exc:
        raise ConfigError(" ".join(str(exc).split())) from None
    plain = [str(o.input_line) for o in parsed if not o.is_sweep_override()]
    choices = [o for o in plain if is_group_choice(o.split("=", 1)[0])]
    base = composer.compose(choices, with_hydra=True)
    sweeper = str(OmegaConf.select(base, "hydra.sweeper._target_") or "")
    if not sweeper.endswith("BasicSweeper"):
        raise ConfigError(f"this study's sweeper ({sweeper or 'unknown'}) chooses its own jobs; run it with "
                          "python -m hpoflow -m " + " ".join(args))
    declared = OmegaConf.select(base, "hydra.sweeper.params")
    params = OmegaConf.to_container(declared, resolve=False) if declared is not None else {}  # the study's key
    values = OmegaConf.to_container(declared, resolve=True) if declared is not None else {}  # ${hpoflow.lc_suite:}
    assert isinstance(params, dict) and isinstance(values, dict)
    lines = [f"{k!s}={v!s}" for k, v in values.items()] + list(args)
    try:
        jobs = BasicSweeper.split_arguments(parser.parse_overrides(lines), None)
    except HydraException as exc:
        raise ConfigError(" ".join(str(exc).split())) from None
    return (jobs[0] if jobs else []), base, {str(k): v for k, v in params.items()}


def build_jobs(args: list[str], composer: Composer) -> tuple[list[Job], Any, dict[str, Any]]:
    """Every job composed and validated (before any runs); the command's config and declared params.

    Raises:
        ConfigError: the first bad job, named by its overrides.
    """
    from hpoflow.cli.main import resolved
    from hpoflow.config.settings import validate

    lines, base, params = expand(args, composer)
    if not lines:
        raise ConfigError("the command declares no jobs; allowed: experiment=<name> or sweeps such as seed=0,1,2")
    jobs = []
    for number, overrides in enumerate(lines):
        try:
            raw = resolved(composer.job_config(overrides))
            raw.pop("hydra", None)
            jobs.append(Job(number, overrides, validate(raw), raw))
        except ConfigError as exc:
            raise ConfigError(f"job {number} ({' '.join(overrides)}): {exc}") from None
    return jobs, base, params


def main(argv: list[str] | None = None) -> int:
    """The command: returns the exit status (0 every job finished, 1 a job failed, 2 bad input, 128 + N)."""
    from hpoflow.core.signals import Interrupted
    from hpoflow.core.signals import install as install_signal_handlers
    from hpoflow.store.output_masking import install as install_output_masking
    from hpoflow.store.params import mask_secrets

    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.split("\n\n")[0] + "\n\nUsage: python -m hpoflow.batch experiment=<name> [key=value ...]")
        return 0
    install_output_masking()
    install_signal_handlers()
    try:
        return run_batch(args)
    except ConfigError as exc:
        print(f"Error: {mask_secrets(str(exc))}", file=sys.stderr, flush=True)
        return 2
    except Interrupted as exc:
        print(f"Error: {mask_secrets(str(exc))}; a re-run of the same command continues the study",
              file=sys.stderr, flush=True)
        return exc.exit_code


def run_batch(args: list[str]) -> int:
    """Compose and validate every job, open the study, run the jobs; the exit status."""
    from hpoflow.config.validation import uri_scheme_problem
    from hpoflow.runner.build import open_store
    from hpoflow.store.backend import default_uri
    from hpoflow.store.callbacks import _plain, open_study

    composer = Composer()
    jobs, base, params = build_jobs(args, composer)
    tracking = jobs[0].raw.get("tracking") or {}
    if not tracking.get("enabled", True):
        raise ConfigError("tracking.enabled=false: a batch study records every run in MLflow; allowed: a store")
    uri = str(tracking.get("uri") or default_uri())
    problem = uri_scheme_problem(uri)
    if problem:
        raise ConfigError(problem)
    client = open_store(uri)  # one line, before any job
    composed = _plain(base)
    composed.pop("hydra", None)
    experiment = base.hydra.runtime.choices.get("experiment")
    study = open_study(client, uri, tracking.get("experiment"), str(experiment) if experiment else None, params,
                       list(args), base.hydra.runtime.choices.get("task"), composed, "batch")
    return _run_jobs(jobs, study, client, args)


def _run_jobs(jobs: list[Job], study: Any, client: Any, args: list[str]) -> int:
    """Run each job of the open ``study`` (skipping what the store already has); close the study."""
    from hpoflow.cli.main import run_from_settings
    from hpoflow.config.settings import validate
    from hpoflow.core.signals import Interrupted
    from hpoflow.runner.loop import ObjectiveError
    from hpoflow.store import sweeps
    from hpoflow.store.params import mask_secrets
    from hpoflow.store.resume import plan_job

    known = sweeps.children_by_hash(client, study.experiment_id, study.parent_run_id)
    explicit_checkpoints = any(a.lstrip("+").startswith("checkpoint_every=") for a in args)
    failed = 0
    started = time.perf_counter()
    try:
        for done, job in enumerate(jobs):
            raw = job.raw
            raw["sweep"] = {**(raw.get("sweep") or {}), "parent_run_id": study.parent_run_id,
                            "invocation": study.invocation, "study": study.name}
            raw["tracking"] = {**raw["tracking"], "experiment": raw["tracking"].get("experiment")
                               or study.mlflow_experiment}
            if not explicit_checkpoints:
                raw["checkpoint_every"] = 0
            settings = validate(raw)
            plan = plan_job(settings, [], raw, True, known)
            if isinstance(plan, str):
                continue
            settings, resume = plan
            run_dir = (Path("outputs", "batch", study.name, f"{job.number}-s{settings.seed}")
                       if settings.checkpoint_every > 0 else None)
            if run_dir is not None:
                run_dir.mkdir(parents=True, exist_ok=True)
            try:
                run_from_settings(settings, "", study.parent_run_id, print_summary=False,
                                  run_dir=str(run_dir) if run_dir else None, resume=resume)
            except ObjectiveError as exc:
                failed += 1
                print(f"Error: job {job.number}: run failed: {mask_secrets(str(exc))}", file=sys.stderr, flush=True)
            _progress(done + 1, len(jobs), started)
    except Interrupted:
        sweeps.close_parent(client, study.experiment_id, study.parent_run_id, study.invocation, study.name,
                            interrupted=True)
        raise
    account = sweeps.close_parent(client, study.experiment_id, study.parent_run_id, study.invocation, study.name)
    return 1 if failed or account.failed or account.killed or account.running else 0


def _progress(done: int, total: int, started: float) -> None:
    """A line every tenth of the jobs (and at the end) on stderr: how far, how fast."""
    if done == total or done % max(1, total // 10) == 0:
        rate = done / max(time.perf_counter() - started, 1e-9)
        print(f"batch: {done}/{total} jobs, {rate:.1f} jobs/s", file=sys.stderr, flush=True)
