"""Hardware target: device, dtype, threads; and seeding of Python, NumPy and torch."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

DEVICES = ("cpu", "cuda", "auto")
DTYPES = ("float64", "float32", "auto")


@dataclass(frozen=True)
class HardwareConfig:
    name: str = "auto"
    device: str = "auto"   # cpu | cuda | auto (cuda when available)
    dtype: str = "auto"    # float64 | float32 | auto (float64; GPs need it on CPU)
    threads: int = 0       # torch intra-op threads; 0 leaves torch's default

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"hardware.device='{self.device}' is unknown; allowed: {', '.join(DEVICES)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"hardware.dtype='{self.dtype}' is unknown; allowed: {', '.join(DTYPES)}")
        cpus = os.cpu_count() or 1
        if not 0 <= self.threads <= cpus:
            raise ValueError(f"hardware.threads={self.threads} is out of range; allowed: 0 (torch's default) to "
                             f"{cpus} (this machine's CPUs)")


@dataclass(frozen=True)
class Resolved:
    device: Any
    dtype: Any
    description: str


def setup(config: HardwareConfig) -> Resolved:
    """Pick device and dtype, set the thread count."""
    import torch

    if config.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("hardware.device='cuda' but no CUDA device is available; allowed here: cpu, auto")
    device = torch.device("cuda" if config.device == "cuda" or (config.device == "auto" and
                                                              torch.cuda.is_available()) else "cpu")
    dtype = torch.float32 if config.dtype == "float32" else torch.float64
    if config.threads:
        torch.set_num_threads(config.threads)
    return Resolved(device, dtype, f"{device.type}/{str(dtype).removeprefix('torch.')}/{torch.get_num_threads()}t")


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch: the same config and seed give the same trajectory."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
