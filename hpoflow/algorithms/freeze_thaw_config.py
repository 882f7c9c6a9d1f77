"""Config dataclass and registry entry of the freeze-thaw method (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.algorithms.multi_fidelity_config import MF_TASKS, check_eta_and_min_fidelity
from hpoflow.core.component import algorithm

ACQUISITIONS = ("ei", "mfpi_random")


def _whole(value: object, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


@dataclass(frozen=True)
class FreezeThawConfig:
    """Pausable trials climbing a ladder of levels one job at a time, steered by a power-law ensemble."""

    name: str = "freeze_thaw"
    eta: float = 2.0                 # factor between consecutive levels a trial climbs, one per job (near 1: one unit)
    min_fidelity: float | None = None  # null: the task's fidelity minimum (the level a new configuration starts at)
    acquisition: str = "ei"  # ei (DPL's: EI at the full level) | mfpi_random (ifBO's: random horizon and threshold)
    pool: int = 64                   # new random configurations scored beside the paused trials at each decision
    init_configs: int = 5            # new configurations started before the model decides
    members: int = 5                 # networks in the power-law ensemble
    hidden: int = 16                 # units of each of their two hidden layers
    lr: float = 0.02                 # Adam's step size
    init_steps: int = 200            # Adam steps of the first fit
    steps: int = 10                  # Adam steps of each later fit (warm-started from the last weights)
    clip: float | None = None        # null: mean/std scaling; a number: median/IQR scaling, worse values clipped there
    first_jumps: int = 2             # k > 1 workers, no full-level value yet: this many trials go straight to it
    batch: int = 64                  # points in each Adam step's minibatch (drawn from every observed curve point)

    def __post_init__(self) -> None:
        check_eta_and_min_fidelity(self.eta, self.min_fidelity)
        if self.acquisition not in ACQUISITIONS:
            raise ValueError(f"algo.acquisition='{self.acquisition}' is unknown; allowed: {', '.join(ACQUISITIONS)}")
        for key, low in (("pool", 1), ("init_configs", 1), ("members", 2), ("hidden", 1), ("init_steps", 0),
                         ("steps", 0), ("batch", 1), ("first_jumps", 0)):
            if not _whole(getattr(self, key), low):
                raise ValueError(f"algo.{key}={getattr(self, key)!r} must be an integer >= {low}")
        if self.clip is not None and (isinstance(self.clip, bool) or not isinstance(self.clip, (int, float))
                                      or not self.clip > 0):
            raise ValueError(f"algo.clip={self.clip!r} must be a number > 0 or null (mean/std scaling)")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not self.lr > 0:
            raise ValueError(f"algo.lr={self.lr!r} must be a number > 0")


BUILTINS = [
    algorithm("freeze_thaw", "hpoflow.algorithms.freeze_thaw:FreezeThaw", FreezeThawConfig, "freeze-thaw: every "
              "trial pausable; a power-law ensemble of learning curves picks, job by job, the paused trial to "
              "continue by one level or a new configuration to start (DPL; needs a task with a fidelity)",
              tasks=MF_TASKS, smoke=("task=branin_mf",)),
]
