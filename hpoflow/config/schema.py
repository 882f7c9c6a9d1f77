"""Structured config schema: every registered component's dataclass backs its YAML option.

Each option is a YAML file, ``conf/<group>/<name>.yaml``, whose defaults list pulls the dataclass stored
here as ``schema/<group>/<name>`` (Hydra's "structured config schema + YAML" pattern). Composing the
config then type-checks every override (``algo.beta=abc`` fails before any work) and rejects unknown keys.
A registered component without a YAML file (a plugin) is stored as ``<group>/<name>`` directly, so it is
still selectable. Only dataclasses are imported here: no torch, gpytorch or mlflow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpoflow.core.budget import Budget as BudgetConfig  # defaults and checks: hpoflow/core/budget.py
from hpoflow.core.hardware import HardwareConfig


@dataclass
class TrackingConfig:
    name: str = "mlflow"
    enabled: bool = True
    uri: str | None = None         # default: sqlite:///<cwd>/outputs/mlflow.db
    experiment: str | None = None  # default: the task name
    run_name: str | None = None    # default: <algo>-<task>-s<seed>
    flush_every: int = 100            # rounds between batched metric writes (also flushed every 10 s and at exit)
    artifacts: bool = True            # config.yaml, summary.json, trajectory.csv
    plots: bool = False  # also regret.png and (1-d/2-d tasks) surrogate.png: ~0.5 s per run (matplotlib)
    heartbeat_s: float = 10.0  # seconds between the run lease's heartbeats (a dead writer is found after max(3x, 30 s))
    compact: bool = False  # per-round values and curves as two artifacts, final values as metrics, no checkpoint


@dataclass
class SweepConfig:
    """Studies (multiruns): re-run policy; the other keys are set by the study itself, for its jobs."""

    rerun_failed: bool = False            # a re-run of the same sweep also reruns its FAILED runs (else kept)
    parent_run_id: str | None = None   # set by the study: its MLflow parent run (the job's run nests under it)
    invocation: str | None = None      # set by the study: this invocation of the sweep command
    study: str | None = None           # set by the study: its name (the experiment=, or the MLflow experiment)
    cell: str | None = None            # set by the cells sweeper: the named cell (table row) of this job
    twin: int = 0  # k > 0: an A/A twin, the algorithm seeded seed + TWIN_STRIDE*k, reported as '<algo> twin<k>'


@dataclass
class RootConfig:
    algo: Any = None
    surrogate: Any = None
    task: Any = None
    hardware: Any = None
    tracking: Any = None
    seed: int = 0
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    on_error: str = "fail"  # fail | skip
    progress: bool = True   # live progress bar on a terminal (the log file always gets a line per round)
    checkpoint_every: int = 1        # rounds between resumable checkpoints (0: none)
    resume: str | None = None     # run folder, checkpoint file or MLflow run id to continue
    sweep: SweepConfig = field(default_factory=SweepConfig)


CONF_DIR = Path(__file__).resolve().parent.parent / "conf"  # the packaged config (top-level conf/ in a checkout)
HARDWARE_OPTIONS = {"cpu": "cpu", "cuda": "cuda", "auto": "auto"}  # option name -> device
DESCRIPTIONS = {  # the hardware and tracking options, described (the first line of their generated YAML files)
    "hardware": {"cpu": "CPU, float64, torch's default threads", "cuda": "an NVIDIA GPU (fails clearly without one)",
                 "auto": "cuda when available, else cpu"},
    "tracking": {"mlflow": "MLflow tracking: one run per (algo, task, seed) in the embedded SQLite store or "
                           "tracking.uri",
                 "off": "no tracking: nothing is logged (results are printed)"},
}


def fixed_options() -> dict[str, dict[str, Any]]:
    """``{group: {option: dataclass instance}}`` for the groups that are not registry kinds (hardware, tracking)."""
    return {"hardware": {n: HardwareConfig(name=n, device=d) for n, d in HARDWARE_OPTIONS.items()},
            "tracking": {"mlflow": TrackingConfig(), "off": TrackingConfig(name="off", enabled=False)}}


def schema_options() -> dict[str, dict[str, Any]]:
    """``{group: {option: dataclass instance}}``: the schema (with the option's defaults) of every option."""
    from hpoflow.config import registry

    out: dict[str, dict[str, Any]] = {}
    for kind, group in registry.GROUP_OF_KIND.items():
        out[group] = {e.name: e.make_config() for e in registry.entries(kind)}
    return {**out, **fixed_options()}


def node(obj: Any) -> Any:
    """``obj`` (an option's dataclass instance) as a type-checked OmegaConf node that overrides can still write.

    Frozen dataclasses become read-only nodes, and nested ones (``algo.optimizer``) carry their own flag.
    """
    from omegaconf import Container, ListConfig, OmegaConf

    cfg = OmegaConf.structured(obj)

    def writable(c: Any) -> None:
        OmegaConf.set_readonly(c, None)
        for key in (range(len(c)) if isinstance(c, ListConfig) else list(c.keys())):
            child = c._get_node(key)
            if isinstance(child, Container):
                writable(child)

    writable(cfg)
    OmegaConf.set_readonly(cfg, False)
    return cfg


_REGISTERED: list[Any] = []  # the options last stored (the ConfigStore is per process)


def register_configs() -> None:
    """Store the root schema and every option's schema (``schema/<group>/<name>``) in Hydra's ConfigStore.

    A second call with the same registry stores nothing again: building the ~115 typed nodes costs ~0.4 CPU s,
    once per process (a plugin registered since the last call makes it store everything again).
    """
    from hydra.core.config_store import ConfigStore

    from hpoflow.config import resolvers

    resolvers.register()  # conf/config.yaml's own resolvers (budget.rounds: ${hpoflow.rounds:...}): any composition
    cs = ConfigStore.instance()
    options_now = schema_options()
    if _REGISTERED and _REGISTERED[0] == options_now and cs.repo.get("root_schema.yaml") is not None:
        return
    cs.store(name="root_schema", node=RootConfig)
    for group, options in options_now.items():
        for name, cfg in options.items():
            cs.store(group=f"schema/{group}", name=name, node=node(cfg))
            if not (CONF_DIR / group / f"{name}.yaml").is_file():  # a plugin without a YAML file
                cs.store(group=group, name=name, node=node(cfg))
    _REGISTERED[:] = [options_now]
