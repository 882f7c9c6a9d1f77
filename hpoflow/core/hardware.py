"""Hardware target: device, dtype, threads; and seeding of Python, NumPy and torch."""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import random
import sys
from dataclasses import dataclass
from typing import Any

DEVICES = ("cpu", "cuda", "auto")
DTYPES = ("float64", "float32", "auto")
NO_TENSORS = "cpu/no-torch"  # the hardware tag of a run that never imported torch (plain Python/NumPy on the CPU)


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


class Resolved:
    """The device, dtype and a one-line description (``cpu/float64/4t``) of a hardware config.

    Resolved on first use: a run whose algorithm needs no tensors (random search on a continuous space) never
    imports torch (1-2 s), so ``device``, ``dtype`` and ``description`` import it only when read.
    ``dtype_name`` (``float64`` | ``float32``) needs no torch.
    """

    def __init__(self, config: HardwareConfig) -> None:
        self.config = config
        self.dtype_name = "float32" if config.dtype == "float32" else "float64"
        self._values: tuple[Any, Any, str] | None = None

    def _resolve(self) -> tuple[Any, Any, str]:
        if self._values is None:
            import torch

            config = self.config
            if config.device == "cuda" and not torch.cuda.is_available():
                raise ValueError("hardware.device='cuda' but no CUDA device is available; allowed here: cpu, auto")
            device = torch.device("cuda" if config.device == "cuda" or (config.device == "auto" and
                                                                      torch.cuda.is_available()) else "cpu")
            dtype = torch.float32 if self.dtype_name == "float32" else torch.float64
            if config.threads:
                torch.set_num_threads(config.threads)
            self._values = (device, dtype,
                            f"{device.type}/{str(dtype).removeprefix('torch.')}/{torch.get_num_threads()}t")
        return self._values

    @property
    def device(self) -> Any:
        return self._resolve()[0]

    @property
    def dtype(self) -> Any:
        return self._resolve()[1]

    @property
    def description(self) -> str:
        return self._resolve()[2]

    def description_if_used(self) -> str | None:
        """The description if torch is loaded (resolving it then costs nothing), else None: the run has used no
        tensors so far, and importing torch (1-2 s) only to describe it would make tracking dearer than the run."""
        if self._values is None and sys.modules.get("torch") is None:
            return None
        return self.description

    def final_description(self) -> str:
        """At a run's end: the description if the run used torch, else :data:`NO_TENSORS` (it ran without)."""
        return self.description_if_used() or NO_TENSORS


def setup(config: HardwareConfig) -> Resolved:
    """Pick device and dtype, set the thread count: now if torch is loaded or the config names a device or a
    thread count (a bad one is refused here, before the run), otherwise when first read.

    Raises:
        ValueError: ``hardware.device=cuda`` without a CUDA device.
    """
    resolved = Resolved(config)
    if sys.modules.get("torch") is not None or config.device == "cuda" or config.threads:
        resolved._resolve()
    return resolved


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch: the same config and seed give the same trajectory.

    torch is seeded now if it is loaded, else as soon as something imports it (:func:`seed_on_import`): the same
    state either way, without importing it (1-2 s) for a run that needs no tensors.
    """
    import numpy as np

    random.seed(seed)
    np.random.seed(seed % 2**32)
    if sys.modules.get("torch") is not None:
        import torch

        torch.manual_seed(seed)
    else:
        seed_on_import(seed)


class _SeedTorchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of ``torch`` so that ``torch.manual_seed(seed)`` runs right after
    torch is imported (hand-written: the import system has no post-import hook)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader, seed = spec.loader, self.seed
        exec_module = loader.exec_module

        def exec_and_seed(module: Any) -> None:
            exec_module(module)
            module.manual_seed(seed)

        loader.exec_module = exec_and_seed  # type: ignore[method-assign]
        return spec


def seed_on_import(seed: int) -> None:
    """Seed torch's global RNG with ``seed`` when torch is first imported (the last call's seed wins)."""
    for finder in [f for f in sys.meta_path if isinstance(f, _SeedTorchOnImport)]:
        sys.meta_path.remove(finder)
    sys.meta_path.insert(0, _SeedTorchOnImport(seed))
