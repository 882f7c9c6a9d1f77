"""digits_cnn with its epoch fidelity on the GPU against the CPU: seconds per epoch of the same configurations,
and one Hyperband study on each device (in process, no store). Run where torch sees a GPU (the device tool);
without one it times the CPU only and says so.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/gpu_cnn_epochs.py
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from hpoflow.algorithms.base import BuildContext  # noqa: E402
from hpoflow.algorithms.multi_fidelity import MultiFidelity  # noqa: E402
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig  # noqa: E402
from hpoflow.core.budget import Budget  # noqa: E402
from hpoflow.runner.loop import run  # noqa: E402
from hpoflow.tasks.training import make_digits_task  # noqa: E402

TUNE = ("lr", "momentum", "weight_decay", "width")


def task(device: str, epochs: int, batch: int):
    return make_digits_task("digits_cnn", fidelity=True, epochs=epochs, tune=TUNE, batch_size=batch, device=device)


def per_epoch(device: str, epochs: int, batch: int, n: int) -> tuple[float, list[float]]:
    """Seconds per epoch over ``n`` seeded configurations trained to ``epochs``; their final validation losses."""
    t = task(device, epochs, batch)
    configs = [t.space.decode(u) for u in t.space.sample(n, torch.Generator().manual_seed(0), torch.float64)]
    t.evaluate_at(configs[0], fidelity=1, config_id=None, round=0)  # warm-up (CUDA context, kernels)
    if device == "cuda":
        torch.cuda.synchronize()
    start, losses = time.perf_counter(), []
    for i, c in enumerate(configs):
        losses.append(t.evaluate_at(c, fidelity=epochs, config_id=None, round=i + 1).value)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / (n * epochs), losses


def study(device: str, epochs: int, batch: int, full: int) -> tuple[float, float, int]:
    """Hyperband with a budget of ``full`` full-fidelity evaluations: wall seconds, best loss, rounds."""
    t = task(device, epochs, batch)
    algo = MultiFidelity(MultiFidelityConfig(name="hyperband", scheduler="hyperband"), BuildContext(t, 100_000, 0))
    start = time.perf_counter()
    result = run(t, algo, budget=Budget(rounds=100_000, cost=float(full * epochs)))
    best = result.summary["best_value"]  # None: no evaluation at the full fidelity
    return time.perf_counter() - start, float("nan") if best is None else float(best), len(result.records)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=27)
    parser.add_argument("--configs", type=int, default=4)
    parser.add_argument("--full", type=int, default=10, help="the Hyperband study's budget in full evaluations")
    args = parser.parse_args()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU only)"
    print(f"torch {torch.__version__}, GPU: {gpu}, CPU threads: {torch.get_num_threads()}")
    print("| device | batch | s per epoch | final val loss of the configurations |")
    print("|---|---|---|---|")
    times = {}
    for batch in (32, 256):
        for device in devices:
            s, losses = per_epoch(device, args.epochs, batch, args.configs)
            times[device, batch] = s
            print(f"| {device} | {batch} | {s:.4f} | {', '.join(f'{v:.3f}' for v in losses)} |")
        if "cuda" in devices:
            print(f"| GPU / CPU time ratio | {batch} | {times['cuda', batch] / times['cpu', batch]:.2f} | |")
    print("\n| device | Hyperband study (budget: full evaluations) | wall s | best val loss | rounds |")
    print("|---|---|---|---|---|")
    for device in devices:
        wall, best, rounds = study(device, args.epochs, 32, args.full)
        print(f"| {device} | {args.full} x {args.epochs} epochs | {wall:.1f} | {best:.4f} | {rounds} |")


if __name__ == "__main__":
    main()
