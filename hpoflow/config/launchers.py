"""Checks of a sweep's launcher settings (``hydra.launcher.*``) before any job is submitted: one line each.

A SLURM study that is refused by ``sbatch`` only after its jobs were built, or that waits in a queue it cannot
run in, costs a researcher hours; the settings SLURM needs are checked here instead. Required for
``hydra/launcher=slurm``: ``partition`` (a partition name, ``sinfo -s`` lists them), ``timeout_min`` (the time
limit of each job, minutes, > 0), ``mem_gb`` (memory per node, GB, > 0) and ``array_parallelism`` (how many jobs of
the array run at once, >= 1).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SLURM_TARGET = "SlurmLauncher"

SLURM_REQUIRED = {  # key -> (what it is, allowed)
    "partition": ("the SLURM partition to submit to", "a partition name (sinfo -s lists them)"),
    "timeout_min": ("each job's time limit in minutes", "an integer > 0"),
    "mem_gb": ("memory per node in GB", "a number > 0"),
    "array_parallelism": ("how many jobs of the array run at once", "an integer >= 1"),
}


RAY_TARGET = "hpoflow_ray_launcher.ray_launcher.RayLauncher"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_launcher(launcher: Mapping[str, Any]) -> str | None:
    """A one-line error for a launcher config that cannot work, or None (SLURM, and hpoflow's Ray launcher)."""
    target = str(launcher.get("_target_", ""))
    if target.endswith(RAY_TARGET):
        from hydra_plugins.hpoflow_ray_launcher.ray_launcher import check_settings

        try:
            check_settings(dict(launcher))
        except ValueError as exc:  # LauncherSettingError (Hydra may load plugin modules twice: not by class)
            return str(exc)
        return None
    if not target.endswith(SLURM_TARGET):
        return None
    for key, (what, allowed) in SLURM_REQUIRED.items():
        value = launcher.get(key)
        ok = {"partition": isinstance(value, str) and value.strip() != "",
              "timeout_min": isinstance(value, int) and _number(value) and value >= 1,
              "mem_gb": isinstance(value, (int, float)) and _number(value) and value > 0,
              "array_parallelism": isinstance(value, int) and _number(value) and value >= 1}[key]
        if not ok:
            shown = "null" if value is None else repr(value)
            return (f"hydra.launcher.{key}={shown} is not allowed for hydra/launcher=slurm ({what}); allowed: "
                    f"{allowed}, e.g. hydra.launcher.{key}="
                    f"{ {'partition': 'cpu', 'timeout_min': 60, 'mem_gb': 8, 'array_parallelism': 64}[key]}")
    return None


def ray_start_error(exc: BaseException, address: Any) -> str:
    """One line for ``ray.init`` failing: a local Ray that did not start in time, a cluster that cannot be joined."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")[:300]
    where = ("start a local Ray on 127.0.0.1" if address in (None, "", "local", "auto")
             else f"join the Ray cluster at {address}")
    return (f"Ray: could not {where} ({type(exc).__name__}{': ' + first if first else ''}); allowed: a running "
            "cluster named by RAY_ADDRESS (ray start --head), or a machine with the CPU and memory to start one "
            "(ray status shows what runs)")
