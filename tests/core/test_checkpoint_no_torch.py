"""A run that never imports torch checkpoints and resumes exactly without it (issue 42: a run's fixed cost).

Random search on a task drawing from the *global* Python and NumPy generators (what the checkpoint's global RNG
state carries), interrupted at round 6 and resumed, each step in a fresh interpreter: torch is imported by none,
the checkpoint holds no torch state, and the resumed trajectory equals the uninterrupted one, also when the
resuming process has torch loaded (then seeded by ``seed_everything``, as on its first import).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hpoflow.core.checkpoint import load
from tests.conftest import cli_env

CHILD = """
import json, random, sys
import numpy as np
if sys.argv[3] == "torch":
    import torch  # the resuming process has torch loaded (a warm worker, a task that uses it)
from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.checkpoint import Checkpointer, load
from hpoflow.core.hardware import seed_everything
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.base import Task

class GlobalNoise(Task):
    name, direction, optimum = "global_noise", Direction.MINIMIZE, 0.0
    def __init__(self, interrupt_at=0):
        self.space = SearchSpace.of(Float("a", -1.0, 1.0), Float("b", -1.0, 1.0))
        self.interrupt_at = interrupt_at
    def evaluate(self, config, *, round, observe=True):
        if round == self.interrupt_at:
            raise KeyboardInterrupt
        f = (config["a"] - 0.2) ** 2 + (config["b"] + 0.4) ** 2
        return Evaluation(value=f + 0.1 * np.random.standard_normal() + 0.01 * random.random(), true_value=f)

mode, path = sys.argv[1], sys.argv[2]
seed_everything(3)
task = GlobalNoise(interrupt_at=6 if mode == "interrupt" else 0)
algo = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=10, seed=3))
kwargs = {"checkpoint": Checkpointer(path)} if mode != "reference" else {}
if mode == "resume":
    kwargs["resume"] = load(path)
try:
    result = run(task, algo, None, Budget(10), **kwargs)
    values = [r.value for r in result.records]
except KeyboardInterrupt:
    values = None
print(json.dumps({"values": values, "torch": "torch" in sys.modules}))
"""


def _child(mode: str, path: str, torch: str = "no") -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, path, torch], env=cli_env(), capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("resumer", ["no", "torch"], ids=["resumed-without-torch", "resumed-with-torch"])
def test_a_run_without_torch_checkpoints_and_resumes_exactly_without_importing_it(tmp_path, resumer):
    path = str(tmp_path / "checkpoint.json")
    reference = _child("reference", path)
    interrupted = _child("interrupt", path)
    assert interrupted["values"] is None and not interrupted["torch"]
    state = load(path)
    assert state.round == 5 and "torch" not in state.global_rng  # nothing imported torch to save its state
    resumed = _child("resume", path, resumer)
    assert resumed["torch"] == (resumer == "torch")  # restoring never imports torch itself
    assert resumed["values"] == reference["values"] and len(reference["values"]) == 10
