"""Structured config schema: every registered component's dataclass becomes a Hydra group option.

Composing the config then type-checks every override (``algo.beta=abc`` fails before any work),
and rejects unknown keys. Only dataclasses are imported here: no torch, gpytorch or mlflow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from hpoflow.hardware import HardwareConfig


@dataclass
class BudgetConfig:
    rounds: int = 30
    cost: Optional[float] = None  # stop once cumulative query cost reaches this


@dataclass
class TrackingConfig:
    name: str = "mlflow"
    enabled: bool = True
    uri: Optional[str] = None         # default: sqlite:///<cwd>/outputs/mlflow.db
    experiment: Optional[str] = None  # default: the task name
    run_name: Optional[str] = None    # default: <algo>-<task>-s<seed>
    flush_every: int = 100            # rounds between batched metric writes (also flushed every 10 s and at exit)
    artifacts: bool = True            # config, trajectory CSV, regret plot
    heartbeat_s: float = 10.0         # seconds between the run lease's heartbeats (a dead writer is found after max(3x, 30 s))


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
    resume: Optional[str] = None     # run folder, checkpoint file or MLflow run id to continue


def register_configs() -> None:
    """Store the root schema and one option per registered component in Hydra's ConfigStore."""
    from hydra.core.config_store import ConfigStore

    from hpoflow import registry

    cs = ConfigStore.instance()

    def node(obj: Any) -> Any:  # frozen dataclasses become read-only nodes; overrides must stay possible
        from omegaconf import Container, ListConfig, OmegaConf

        cfg = OmegaConf.structured(obj)

        def writable(c: Any) -> None:  # nested frozen dataclasses (algo.optimizer) carry their own flag
            OmegaConf.set_readonly(c, None)
            for key in (range(len(c)) if isinstance(c, ListConfig) else list(c.keys())):
                child = c._get_node(key)
                if isinstance(child, Container):
                    writable(child)

        writable(cfg)
        OmegaConf.set_readonly(cfg, False)
        return cfg

    cs.store(name="root_schema", node=RootConfig)
    for kind, group in registry.GROUP_OF_KIND.items():
        for entry in registry.entries(kind):
            cs.store(group=group, name=entry.name, node=node(entry.make_config()))
    for name, device in (("cpu", "cpu"), ("cuda", "cuda"), ("auto", "auto")):
        cs.store(group="hardware", name=name, node=node(HardwareConfig(name=name, device=device)))
    cs.store(group="tracking", name="mlflow", node=TrackingConfig())
    cs.store(group="tracking", name="off", node=TrackingConfig(name="off", enabled=False))
