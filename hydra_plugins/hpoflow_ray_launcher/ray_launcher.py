"""A Hydra launcher that runs every sweep job as a Ray task (``hydra/launcher=ray``), and survives lost workers.

Ours rather than hydra-ray-launcher: that plugin pins ``cloudpickle<3``, always passes ``num_cpus`` and
``object_store_memory`` to ``ray.init`` (which a running cluster refuses) and awaits results in submission
order, so one crashed worker ends the sweep.

* Where Ray runs: ``hydra.launcher.address`` (``auto``, ``ray://HEAD:10001``, ``HOST:6379``), else
  ``$RAY_ADDRESS``, joins that cluster with no resource arguments; with neither, a local Ray is started on
  127.0.0.1 with ``hydra.launcher.num_cpus`` CPUs (default: all of this machine's).
* Lost workers: a job whose worker process or node dies (``WorkerCrashedError``, ``NodeDiedError``, ...) is
  submitted again, up to ``hydra.launcher.max_retries`` times (default 2). The new attempt is an ordinary study
  job: it finds its run in the store by config hash and resumes it from its last checkpoint
  (:mod:`hpoflow.store.sweeps`). An exception raised *by the job* (an objective under ``on_error=fail``) is never
  retried: the job's result carries it, as with any other launcher.
* Results are collected as they complete (``ray.wait``), so the other jobs go on whatever one job does.
* Run folders are under the sweep folder, made absolute on the driver (a Ray worker's working directory is
  wherever ``ray start`` ran).
"""
# no "from __future__ import annotations": Hydra execs plugin modules outside sys.modules, and dataclasses
# would then fail to resolve string annotations

import copy
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

log = logging.getLogger(__name__)

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT)
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's node address is 127.0.0.1 (read at import)
STOP_WAIT_S = 60.0  # how long a signalled driver waits for its cancelled jobs to mark their runs KILLED
NODE_ENV = "HPOFLOW_RAY_NODE"        # the Ray node id a job runs on (tagged on its MLflow run)
ATTEMPT_ENV = "HPOFLOW_RAY_ATTEMPT"  # 0 for a job's first attempt, n for its n-th retry
LOST_ERRORS = ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError",
               "LocalRayletDiedError", "RaySystemError")  # ray.exceptions: the job's process or node is gone


@dataclass
class RayLauncherConf:
    _target_: str = "hydra_plugins.hpoflow_ray_launcher.ray_launcher.RayLauncher"
    address: str | None = None    # null: $RAY_ADDRESS if set, else a local Ray on 127.0.0.1; auto: running cluster
    num_cpus: int | None = None   # CPUs of a local Ray (null: all); never passed when joining a cluster
    cpus_per_job: float = 1.0        # Ray resources reserved per job
    gpus_per_job: float = 0.0
    max_retries: int = 2             # resubmissions of a job whose worker process or node died
    include_dashboard: bool = False  # a local Ray's dashboard (needs ray[default])


ConfigStore.instance().store(group="hydra/launcher", name="hpoflow_ray", node=RayLauncherConf, provider="hpoflow")


class LauncherSettingError(ValueError):
    """A bad ``hydra.launcher.*`` value (one line: the key, the value, what is allowed)."""


def check_settings(settings: dict[str, Any]) -> None:
    """Refuse bad launcher settings before Ray is started."""
    retries = settings.get("max_retries")
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise LauncherSettingError(f"hydra.launcher.max_retries={retries!r} is not allowed; use an integer >= 0")
    for key in ("cpus_per_job", "gpus_per_job"):
        value = settings.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or (
                key == "cpus_per_job" and value == 0):
            raise LauncherSettingError(f"hydra.launcher.{key}={value!r} is not allowed; use a number "
                                       f"{'> 0' if key == 'cpus_per_job' else '>= 0'}")
    cpus = settings.get("num_cpus")
    if cpus is not None and (not isinstance(cpus, int) or isinstance(cpus, bool) or cpus < 1):
        raise LauncherSettingError(f"hydra.launcher.num_cpus={cpus!r} is not allowed; use null or an integer >= 1")


def init_args(address: str | None, env: dict[str, str], num_cpus: int | None,
              include_dashboard: bool) -> dict[str, Any]:
    """``ray.init`` keyword arguments: join a cluster with none that conflict, or start a loopback-only Ray."""
    target = address or env.get("RAY_ADDRESS") or None
    if target:
        return {"address": target}  # a running cluster refuses num_cpus, num_gpus, object_store_memory
    args: dict[str, Any] = {"address": "local", "_node_ip_address": "127.0.0.1",
                            "include_dashboard": include_dashboard}
    if include_dashboard:
        args["dashboard_host"] = "127.0.0.1"
    if num_cpus is not None:
        args["num_cpus"] = num_cpus
    return args


class RayUnavailable(RuntimeError):
    """Ray could not be started or joined; the message is one line (the CLI prints ``Error: ...``, exit 2)."""

    exit_status = 2  # read by hpoflow.cli.errors: a setting (address, token, environment) to fix, nothing ran


def on_loopback(address: str) -> bool:
    """Whether Ray runs on this machine's loopback only: a local Ray, an address on 127.x/localhost, or ``auto``
    naming such a cluster (Ray's own address file). Then the driver must take 127.0.0.1 as its node address
    (Ray otherwise takes the address that routes outside, and finds no node of the cluster with it)."""
    if address == "auto":
        try:
            address = (Path(os.environ.get("RAY_TMPDIR", "/tmp")) / "ray" / "ray_current_cluster").read_text().strip()
        except OSError:
            return False
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return address == "local" or host in ("localhost", "::1") or host.startswith("127.")


def _shared(refs: Sequence[Any]) -> list[Any]:
    """The sweep's shared objects (Hydra context, config, task function, singletons), fetched and unpickled once
    per worker process rather than once per job (Ray reuses a worker for many jobs; the refs are passed in a
    list so that Ray does not resolve them for every task)."""
    import ray

    from hydra_plugins.hpoflow_ray_launcher._worker_cache import SHARED  # the same dict in every task

    key = "|".join(ref.hex() for ref in refs)
    if key not in SHARED:
        SHARED.clear()  # a new sweep in this worker: drop the last one's objects
        SHARED[key] = ray.get(list(refs))
    return list(SHARED[key])


def _run_job(hydra_context: HydraContext, config: DictConfig, task_function: TaskFunction) -> JobReturn:
    """Hydra's ``run_job`` (hydra.core.utils, 1.3) for a job config this worker owns, with the hydra node copied
    once instead of five times (two ``HydraConfig.set_config``, the task config's and the Hydra config's deep
    copies): at ~40 ms per job those copies were a tenth of a cheap job's CPU. Same steps otherwise: output
    folder, working directory (``hydra.job.chdir``), logging, ``env_set``, callbacks; of ``.hydra/*.yaml`` only
    ``overrides.yaml`` (what reproduces the job): the composed config is the MLflow run's ``config.yaml``
    artifact and params, and Hydra's own config the sweep's ``multirun.yaml`` (written once); dumping both
    per job cost ~10% of a cheap job's CPU. Written by hand because Hydra's own function has no way to skip the
    copies."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import JobRuntime, _flush_loggers, _save_config, env_override

    callbacks = hydra_context.callbacks
    old_cwd = os.getcwd()
    instance = HydraConfig.instance()
    orig_hydra_cfg = instance.cfg
    instance.set_config(config)  # the only copy of the hydra node (subdir may read ${hydra:...})
    output_dir = os.path.abspath(os.path.join(str(OmegaConf.select(config, "hydra.sweep.dir")),
                                              str(OmegaConf.select(config, "hydra.sweep.subdir"))))
    hydra_cfg = instance.cfg
    assert isinstance(hydra_cfg, DictConfig)  # typed HydraConf by Hydra; a DictConfig holding ``hydra``
    for node in (config.hydra.runtime, hydra_cfg.hydra.runtime):  # the job's config and HydraConfig's copy
        with read_write(node), open_dict(node):
            node.output_dir = output_dir
    chdir = False
    try:
        ret = JobReturn()
        content = config.__dict__["_content"]  # the task's config: a copy without the hydra node, made
        hydra_node = content.pop("hydra")       # without copying that node first
        try:
            task_cfg = copy.deepcopy(config)
        finally:
            content["hydra"] = hydra_node
        ret.cfg, ret.hydra_cfg = task_cfg, hydra_cfg
        overrides = OmegaConf.to_container(config.hydra.overrides.task)
        assert isinstance(overrides, list)
        ret.overrides = overrides
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        chdir = hydra_cfg.hydra.job.chdir
        if chdir is None:  # as Hydra: the working directory changes only under version_base < 1.2
            from hydra import version

            chdir = not version.base_at_least("1.2")
        if chdir:
            os.chdir(output_dir)
            ret.working_dir = output_dir
        else:
            ret.working_dir = os.getcwd()
        configure_log(config.hydra.job_logging, config.hydra.verbose)
        if config.hydra.output_subdir is not None:  # the job's overrides only: its composed config is the run's
            hydra_output = Path(output_dir) / Path(config.hydra.output_subdir)  # config.yaml artifact and params,
            _save_config(config.hydra.overrides.task, "overrides.yaml", hydra_output)  # Hydra's in multirun.yaml
        with env_override(hydra_cfg.hydra.job.env_set):
            callbacks.on_job_start(config=config, task_function=task_function)
            try:
                ret.return_value = task_function(task_cfg)
                ret.status = JobStatus.COMPLETED
            except Exception as e:  # noqa: BLE001 - as Hydra: the job's result carries it
                ret.return_value = e
                ret.status = JobStatus.FAILED
        ret.task_name = JobRuntime.instance().get("name")
        _flush_loggers()
        callbacks.on_job_end(config=config, job_return=ret)
        return ret
    finally:
        instance.cfg = orig_hydra_cfg
        if chdir:
            os.chdir(old_cwd)


def _execute_job(idx: int, attempt: int, overrides: Sequence[str], shared_refs: Sequence[Any],
                 composed: DictConfig | None, sweep_dir: str) -> JobReturn:
    """One sweep job inside a Ray worker (a reused worker keeps its signal handlers and environment).

    ``composed``: the job's config as the driver composed it (Hydra's sweeper composes every job once to
    validate the batch; composing it again here would double the cost of Hydra per job); None: compose here.
    """
    import ray

    hydra_context, config, task_function, singleton_state = _shared(shared_refs)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    saved = {key: os.environ.get(key) for key in (NODE_ENV, ATTEMPT_ENV)}
    os.environ[NODE_ENV] = ray.get_runtime_context().get_node_id()
    os.environ[ATTEMPT_ENV] = str(attempt)
    try:
        setup_globals()
        if Singleton._instances is not singleton_state["instances"]:  # once per sweep in this worker: it re-scans
            Singleton.set_state(singleton_state)                      # Hydra's plugins (~0.1 s)
        sweep_config = composed if composed is not None else \
            hydra_context.config_loader.load_sweep_config(config, list(overrides))
        with open_dict(sweep_config):
            sweep_config.hydra.sweep.dir = sweep_dir  # absolute: this worker runs wherever ray start ran
            sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
            sweep_config.hydra.job.num = idx
        ret = _run_job(hydra_context, sweep_config, task_function)
        ret.cfg = ret.hydra_cfg = None  # the driver reads status, return value and overrides only; a thousand
        return ret                      # results with both configs would hold hundreds of MB there
    finally:
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class ComposedConfigs:
    """Keeps the job configs that Hydra's sweeper composes on the driver to validate a batch
    (``validate_batch_is_legal`` calls ``config_loader.load_sweep_config`` for every job just before
    ``launch``), so that the launcher ships them to the workers instead of composing every job twice; the
    composition itself takes the value-only shortcut of :class:`~hydra_plugins.hpoflow_ray_launcher.compose.
    SweepComposer` where it can.

    Installed on the config loader instance by :meth:`RayLauncher.setup`; :meth:`take` hands over and forgets
    a job's config (a miss, e.g. under a sweeper that does not validate, returns None: the worker composes).
    """

    ATTR = "load_sweep_config"

    def __init__(self, loader: Any) -> None:
        from hydra_plugins.hpoflow_ray_launcher.compose import SweepComposer

        self.loader = loader
        self.configs: dict[tuple[str, ...], DictConfig] = {}
        hydra_compose = type(loader).load_sweep_config
        self.composer = SweepComposer(loader, lambda master, overrides: hydra_compose(loader, master, overrides))
        self.install()

    def install(self) -> None:
        def load_sweep_config(master_config: DictConfig, sweep_overrides: list[str]) -> DictConfig:
            cfg = self.composer.compose(master_config, sweep_overrides)
            self.configs[tuple(sweep_overrides)] = cfg
            return cfg

        setattr(self.loader, self.ATTR, load_sweep_config)

    def uninstall(self) -> None:
        """The loader as it was (it is pickled for the workers: no closure, no kept configs with it)."""
        self.loader.__dict__.pop(self.ATTR, None)

    def take(self, overrides: Sequence[str]) -> DictConfig | None:
        return self.configs.pop(tuple(overrides), None)


class DriverSignal(KeyboardInterrupt):
    """SIGTERM (or SIGINT) received by the driver while it waits for the jobs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_RECEIVED: list[int] = []  # the signals the driver received (Ray's wait may re-raise a plain KeyboardInterrupt)


def _raise_driver_signal(signum: int, frame: Any) -> None:
    _RECEIVED.append(signum)
    raise DriverSignal(signum)


def _driver_signals() -> dict[int, Any]:
    """SIGTERM and SIGINT raise :class:`DriverSignal` in the driver (main thread only); the old handlers."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in HANDLED_SIGNALS}
    for sig in HANDLED_SIGNALS:
        signal.signal(sig, _raise_driver_signal)
    return previous


def lost_error_types() -> tuple[type[BaseException], ...]:
    import ray.exceptions as rex

    return tuple(getattr(rex, name) for name in LOST_ERRORS if hasattr(rex, name))


class JobLost(RuntimeError):
    """A job whose worker died more often than ``max_retries`` allows (exit status 1, like a failed job)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _job_lost(idx: int, attempts: int, exc: BaseException) -> BaseException:
    try:
        from hpoflow.cli.errors import JobFailed
    except ImportError:  # the plugin without hpoflow: a plain error
        return JobLost(f"job {idx}: its worker died {attempts} times ({type(exc).__name__})")
    return JobFailed(f"job {idx}: its worker died {attempts} times, last: {type(exc).__name__} "
                     "(hydra.launcher.max_retries)", 1)


def _note_counts(retried: int, failed: int) -> None:
    try:
        from hpoflow.store import sweeps
    except ImportError:
        return
    sweeps.note_launch(retried=retried, lost=failed)


class RayLauncher(Launcher):
    """Hydra launcher: sweep jobs as Ray tasks, lost workers retried, results gathered as they complete."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None
        self.retried = 0
        self.failed = 0
        self.composed: ComposedConfigs | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config, self.task_function, self.hydra_context = config, task_function, hydra_context
        self.composed = ComposedConfigs(hydra_context.config_loader)

    def _init_ray(self) -> Any:
        args = init_args(self.settings.get("address"), dict(os.environ), self.settings.get("num_cpus"),
                         bool(self.settings.get("include_dashboard")))
        if on_loopback(args["address"]):  # read when ray is imported: the driver's own address is then 127.0.0.1
            os.environ.setdefault(LOOPBACK_ENV, "0")
        import ray

        if ray.is_initialized():
            return ray
        log.info("Ray: %s", "joining " + args["address"] if args["address"] != "local" else
                 f"a local instance on 127.0.0.1 ({args.get('num_cpus', 'all')} CPUs)")
        try:
            ray.init(**args, ignore_reinit_error=True)
        except Exception as exc:  # noqa: BLE001 - Ray's many failures (auth, unreachable, a start that timed out)
            try:
                from hpoflow.config.launchers import ray_start_error
                from hpoflow.runner.ray_pool import ray_error
            except ImportError:  # the plugin without hpoflow: Ray's own first line
                raise RayUnavailable(f"Ray at {args['address']}: {type(exc).__name__}: {exc}") from exc
            line = ray_error(args["address"], exc)
            if "could not be started or joined" in line:  # nothing more specific: the start that timed out
                from hpoflow.config.settings import ConfigError

                raise ConfigError(ray_start_error(exc, args["address"])) from None
            raise RayUnavailable(line) from exc
        return ray

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        assert self.config is not None and self.task_function is not None and self.hydra_context is not None
        check_settings(self.settings)
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir)).resolve()
        sweep_dir.mkdir(parents=True, exist_ok=True)
        config = OmegaConf.create(self.config)  # a copy (the resolver cache too: same timestamps and uids)
        OmegaConf.copy_cache(from_config=self.config, to_config=config)
        with open_dict(config):
            config.hydra.sweep.dir = str(sweep_dir)  # absolute: workers run elsewhere
        ray = self._init_ray()
        log.info("Launching %d jobs on Ray, sweep output dir: %s", len(job_overrides), sweep_dir)
        if self.composed is not None:
            log.info("Composed on the driver: %d in full, %d as copies differing in values only",
                     self.composed.composer.full_compositions, self.composed.composer.shortcuts)
        for i, overrides in enumerate(job_overrides):
            log.info("\t#%d : %s", initial_job_idx + i, " ".join(filter_overrides(overrides)))
        remote = ray.remote(_execute_job).options(
            num_cpus=float(self.settings.get("cpus_per_job", 1.0)),
            num_gpus=float(self.settings.get("gpus_per_job", 0.0)),
            max_retries=0, retry_exceptions=False)  # retries are ours: counted, and only for lost workers
        composed: list[Any] = [None] * len(job_overrides)
        if self.composed is not None:
            self.composed.uninstall()  # before the context is pickled
            for pos, overrides in enumerate(job_overrides):
                cfg = self.composed.take(overrides)
                composed[pos] = None if cfg is None else ray.put(cfg)  # one copy, kept until the job is done
        try:
            shared = [ray.put(x) for x in (self.hydra_context, config, self.task_function, Singleton.get_state())]
        finally:
            if self.composed is not None:
                self.composed.install()  # the next batch is validated (composed) before its launch too
        pending: dict[Any, tuple[int, int]] = {}

        def submit(pos: int, attempt: int) -> None:
            ref = remote.remote(initial_job_idx + pos, attempt, list(job_overrides[pos]), shared, composed[pos],
                                str(sweep_dir))
            pending[ref] = (pos, attempt)

        for pos in range(len(job_overrides)):
            submit(pos, 0)
        results: list[JobReturn | None] = [None] * len(job_overrides)
        previous = _driver_signals()
        lost = lost_error_types()
        max_retries = int(self.settings.get("max_retries", 2))
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                pos, attempt = pending.pop(done[0])
                try:
                    results[pos] = ray.get(done[0])
                    composed[pos] = None  # its config is no longer needed
                except lost as exc:
                    idx = initial_job_idx + pos
                    if attempt < max_retries:
                        self.retried += 1
                        print(f"job {idx}: its worker was lost ({type(exc).__name__}); retrying "
                              f"({attempt + 1} of {max_retries}), it resumes from its checkpoint",
                              file=sys.stderr, flush=True)
                        submit(pos, attempt + 1)
                        continue
                    self.failed += 1
                    print(f"Error: job {idx}: its worker was lost {attempt + 1} times ({type(exc).__name__}); "
                          "not retried again (hydra.launcher.max_retries)", file=sys.stderr, flush=True)
                    results[pos] = JobReturn(overrides=list(job_overrides[pos]), status=JobStatus.FAILED,
                                             _return_value=_job_lost(idx, attempt + 1, exc))
        except KeyboardInterrupt as exc:  # Ctrl-C / SIGTERM of the driver: the running jobs end KILLED, then we go
            for sig in HANDLED_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)  # the jobs are being closed: a second signal must not cut that
            for ref in pending:
                ray.cancel(ref, force=False)  # a KeyboardInterrupt inside the job: its run is marked KILLED
            ray.wait(list(pending), num_returns=len(pending), timeout=STOP_WAIT_S)
            signum = int(getattr(exc, "signum", _RECEIVED[0] if _RECEIVED else signal.SIGINT))
            print(f"Error: the sweep was interrupted by {signal.Signals(signum).name}; its running jobs were stopped "
                  "(KILLED); run the same command again to resume them", file=sys.stderr, flush=True)
            sys.exit(128 + signum)
        finally:
            for old_signal, handler in previous.items():
                if handler is not None:
                    signal.signal(old_signal, handler)
            _note_counts(self.retried, self.failed)
        return [r for r in results if r is not None]
