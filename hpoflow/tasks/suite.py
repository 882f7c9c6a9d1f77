"""The learning-curve suite: 42 tasks (14 datasets x an MLP, a linear model and boosted trees; ``suite_tasks()`` lists
those recorded so far, ``results/lc_suite.txt`` describes them), 1,024 configurations each, shipped as
``hpoflow/tasks/curves/suite/<dataset>-<family>.npz`` and replayed by ``task=lc_replay
task.benchmark=<dataset>-<family>``.

A task file holds, for ``n`` configurations and ``T`` fidelity steps (written by ``scripts/record_suite.py``):

- ``points``: ``[n, d]`` float32, the configurations in ``[0, 1]^d`` (a scrambled Sobol design, encoded by the space);
- ``val_error``: ``[n, T]`` float32, the validation balanced error rate after each step (the replayed value);
- ``test_error``: ``[n, T]`` float32, the same on the test split (reported beside it, never optimised);
- ``val_logloss``: ``[n, T]`` float16, the validation cross-entropy in nats;
- ``seconds``: ``[n, T]`` float32, the training seconds of each step;
- ``meta``: a JSON string: the dataset's source, rows, features and classes, the space, the fidelity, the recording's
  CPU seconds and library versions.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SUITE = Path(__file__).parent / "curves" / "suite"


def suite_tasks() -> list[str]:
    """The suite's tasks shipped with the package, ``<dataset>-<family>``, sorted."""
    return sorted(p.name.removesuffix(".npz") for p in SUITE.glob("*.npz") if not p.name.startswith("."))


def is_suite_task(name: str) -> bool:
    """Whether ``name`` is a shipped suite task or a path to a suite ``.npz`` file."""
    return name.endswith(".npz") or (SUITE / f"{name}.npz").is_file()


@lru_cache(maxsize=64)
def load_suite_task(name: str) -> dict[str, Any]:
    """A suite task in the replay's benchmark form: ``space``, ``direction``, ``fidelity``, ``configs`` (``n``
    dicts), ``curves`` (``n x T`` values), ``step_seconds`` (``n x T``), ``test_curves`` (``n x T``) and ``meta``.

    Raises:
        ValueError: no such task or file (one line).
    """
    import numpy as np
    import torch

    from hpoflow.core.space import parse_space

    path = Path(name).expanduser() if name.endswith(".npz") else SUITE / f"{name}.npz"
    if not path.is_file():
        raise ValueError(f"task.benchmark='{name}' is not a suite task; allowed: {', '.join(suite_tasks())}")
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        points = z["points"].astype(np.float64)
        curves, tests, seconds = (z[k].astype(np.float64) for k in ("val_error", "test_error", "seconds"))
    space = parse_space(meta["space"])
    configs = [space.decode(torch.from_numpy(u)) for u in points]
    return {"space": meta["space"], "direction": meta["direction"], "fidelity": meta["fidelity"],
            "configs": configs, "curves": curves.tolist(), "test_curves": tests.tolist(),
            "step_seconds": seconds.tolist(), "meta": meta}
