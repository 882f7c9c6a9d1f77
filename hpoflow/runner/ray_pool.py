"""``budget.executor=ray``: a run's evaluations as Ray tasks, on a running cluster or a Ray started here.

:class:`RayExecutor` is a :class:`concurrent.futures.Executor`, so :func:`hpoflow.runner.workers.drive_parallel`
drives it exactly as the thread and process pools. The task is put into Ray's object store once; each trial is
one Ray task, retried by Ray when its worker dies (``RETRIES``); a trial lost for good (its future raises
``WorkerCrashedError``, ``TaskCancelledError``, ...) is recorded as a failed round by the loop, so the run never
hangs and nothing logged is lost. Ray is joined at ``RAY_ADDRESS`` when it is set; otherwise a Ray is started on
127.0.0.1 only (no dashboard) and shut down at the end. Ray is an optional extra (``pip install
'hpoflow[cluster]'``): without it, ``executor=ray`` is refused in one line by the settings' validation.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from hpoflow.runner.loop import evaluate
from hpoflow.tasks.base import Task

RETRIES = 2  # Ray re-runs a trial whose worker process died this many times before it counts as lost


def init_args(env: dict[str, str], workers: int) -> dict[str, Any]:
    """``ray.init`` keyword arguments: join ``RAY_ADDRESS``, or start a loopback-only Ray with ``workers`` CPUs."""
    address = env.get("RAY_ADDRESS")
    if address:
        host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
        loopback = host in ("localhost", "::1") or host.startswith("127.")
        return {"address": address, **({"_node_ip_address": "127.0.0.1"} if loopback else {})}
    return {"address": "local", "_node_ip_address": "127.0.0.1", "include_dashboard": False,
            "num_cpus": max(workers, os.cpu_count() or 1)}


def ray_error(address: str, exc: BaseException) -> str:
    """One line for a failed ``ray.init``: where, Ray's own first line, and what to check."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    where = "a local Ray" if address == "local" else f"Ray at {address}"
    name = type(exc).__name__
    if name == "AuthenticationError" or "authentication" in text.lower():
        first = text.split(". ")[0]
        return (f"{where} refused the connection ({name}: {first}); with token authentication, RAY_AUTH_MODE "
                "must be token and the cluster's token must be found (the file RAY_AUTH_TOKEN_PATH names, "
                "RAY_AUTH_TOKEN, or ~/.ray/auth_token) here and where ray start ran")
    if address != "local" and isinstance(exc, (ConnectionError, TimeoutError)):
        return (f"{where} cannot be reached ({name}: {text[:300]}); is its head node running (ray start --head), "
                "is the address right (hydra.launcher.address or RAY_ADDRESS), and, if the cluster uses token "
                "authentication, does this shell have RAY_AUTH_MODE set to token and the token ray start had?")
    return f"{where} could not be started or joined ({name}: {text[:300]})"


def _evaluate_task(task: Task, config: dict[str, Any], round: int, observe: bool, fidelity: float | None = None,
                   config_id: int | None = None) -> Any:
    return evaluate(task, config, round, observe, fidelity, config_id)


class RayExecutor(Executor):
    """Evaluations of ``task`` as Ray tasks (one CPU each); ``submit(evaluate, task, config, round, observe)``."""

    def __init__(self, task: Task, workers: int) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            args = init_args(dict(os.environ), workers)
            try:
                ray.init(**args, ignore_reinit_error=True, log_to_driver=False)
            except Exception as exc:  # noqa: BLE001 - auth, unreachable, a start that timed out: one line
                from hpoflow.config.launchers import ray_start_error
                from hpoflow.config.settings import ConfigError

                line = ray_error(args["address"], exc)
                if line.endswith(")") and "could not be started or joined" in line:  # nothing more specific
                    raise ConfigError(ray_start_error(exc, args["address"])) from None
                raise ConfigError(f"budget.executor=ray: {line}") from None
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES)(_evaluate_task)
        self._task = ray.put(task)  # sent once, not with every trial
        self._refs: list[Any] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Start one evaluation; ``fn`` must be :func:`hpoflow.runner.loop.evaluate` with its task first."""
        if fn is not evaluate or kwargs:
            raise TypeError("RayExecutor runs evaluate(task, config, round, observe) only")
        ref = self._remote.remote(self._task, *args[1:])
        self._refs.append(ref)
        return ref.future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel what still runs (``cancel_futures`` or not ``wait``); stop the Ray started here."""
        ray = self._ray
        if cancel_futures or not wait:
            for ref in self._refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished, or its worker is gone: nothing to cancel
                    pass
        self._refs.clear()
        if self._started and ray.is_initialized():
            ray.shutdown()
