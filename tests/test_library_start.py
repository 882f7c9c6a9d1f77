"""The library's first call needs no torch (issue 29): random search on a continuous space runs without importing
it, with the very points torch's generator gave, and torch is still seeded by ``seed`` when it is imported later.
``scripts/bench_library_start.py`` measures the CPU time; these tests check the mechanism."""
from __future__ import annotations

import json
import subprocess
import sys

import torch

import hpoflow
from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.random_search import RandomSearch, TorchCompatibleRandom
from hpoflow.core.records import PlainSuggestion
from hpoflow.core.space import parse_space
from hpoflow.tasks.function import FunctionTask
from tests.conftest import cli_env

SPACE = {"x": ("float", -1.0, 1.0), "y": ("log", 1e-3, 1.0)}

CHILD = """
import json, sys
import hpoflow
result = hpoflow.minimize(lambda c: (c["x"] - 0.3) ** 2 + c["y"], {"x": ("float", -1.0, 1.0), "y": ("log", 1e-3,
                          1.0)}, algo="random", rounds=3, seed=5)
loaded = "torch" in sys.modules
import torch
print(json.dumps({"torch_loaded": loaded, "configs": [r.config for r in result.records],
                  "torch_draw": torch.rand(3).tolist()}))
"""


def test_a_first_random_call_never_imports_torch_and_gives_torchs_points_and_seed():
    proc = subprocess.run([sys.executable, "-c", CHILD], env=cli_env(), capture_output=True, text=True, check=False,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["torch_loaded"] is False  # the subprocess check: an import of torch on this path fails it
    # the same configurations as random search drawing with torch (the CLI's path, torch loaded here)
    assert out["configs"] == [r.config for r in hpoflow.minimize(lambda c: 0.0, SPACE, algo="random", rounds=3,
                                                                 seed=5).records]
    torch.manual_seed(5)
    assert out["torch_draw"] == torch.rand(3).tolist()  # seeded by seed=5 when it was first imported


def test_the_torch_compatible_stream_is_torchs_float64_stream():
    for seed in (0, 1, 11, 5 * 1_000_003 + 11, 2**33 + 7):
        g = torch.Generator()
        g.manual_seed(seed)
        assert TorchCompatibleRandom(seed).rand(40) == torch.rand(8, 5, generator=g, dtype=torch.float64).reshape(
            -1).tolist()


def test_random_search_makes_plain_suggestions_whose_x_is_the_float64_tensor_of_its_point():
    task = FunctionTask(parse_space(SPACE), None)
    algo = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=4, seed=2))
    s = algo.ask()
    assert isinstance(s, PlainSuggestion) and s.point() == list(s.u)
    assert s.x.dtype == torch.float64 and s.x.tolist() == list(s.u) and task.space.decode(s.x) == s.config
    g = torch.Generator()
    g.manual_seed(2 * 1_000_003 + 11)
    assert s.x.tolist() == torch.rand(1, 2, generator=g, dtype=torch.float64)[0].tolist()
    single = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=4, seed=2, dtype=torch.float32))
    assert not isinstance(single.ask(), PlainSuggestion) and single.ask().x.dtype == torch.float32


def test_reading_the_generator_hands_the_draws_over_to_torch_without_a_jump():
    task = FunctionTask(parse_space(SPACE), None)
    plain = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=6, seed=4))
    switched = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=6, seed=4))
    first = [switched.ask().config for _ in range(2)]
    switched.generator.get_state()  # what a subclass's state_dict does
    rest = [switched.ask() for _ in range(3)]
    assert not any(isinstance(s, PlainSuggestion) for s in rest)
    assert first + [s.config for s in rest] == [plain.ask().config for _ in range(5)]


FIRST_EVALUATION = """
import json, sys
import hpoflow
seen = {}
def fn(config):
    if not seen:
        seen.update({m: m in sys.modules for m in ("torch", "gpytorch", "sympy", "scipy.optimize", "scipy.stats")})
    return (config["x"] - 0.3) ** 2 + (config["y"] + 0.1) ** 2
hpoflow.minimize(fn, {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, algo="auto", rounds=ROUNDS)
print(json.dumps(seen))
"""


def _modules_at_first_evaluation(rounds: int) -> dict[str, bool]:
    proc = subprocess.run([sys.executable, "-c", FIRST_EVALUATION.replace("ROUNDS", str(rounds))], env=cli_env(),
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_validating_algo_auto_imports_no_torch():
    """Issue 41: validating the settings checked auto's surrogate by importing surrogates/gp.py (torch, gpytorch:
    1.1 CPU s); the registry entries now declare their models' protocols. At 40 rounds on 2 floats auto runs
    COBYQA, which needs no torch at all."""
    seen = _modules_at_first_evaluation(40)
    assert not seen["torch"] and not seen["gpytorch"] and not seen["sympy"], seen


def test_the_default_auto_run_builds_its_gp_model_and_imports_scipy_only_when_it_first_fits():
    """At the default budget auto runs GP-EI: its first points are the initial design, which needs torch but not
    gpytorch's model (torch imports sympy for its first kernel, ~0.35 CPU s) nor scipy's optimisers."""
    seen = _modules_at_first_evaluation(30)
    assert seen["torch"] and not seen["sympy"] and not seen["scipy.optimize"] and not seen["scipy.stats"], seen


TRACKED_CHILD = """
import json, sys
import hpoflow
result = hpoflow.minimize(lambda c: (c["x"] - 0.3) ** 2 + c["y"], {"x": ("float", -1.0, 1.0), "y": ("log", 1e-3,
                          1.0)}, algo="random", rounds=3, seed=5, tracking=sys.argv[1], checkpoint=sys.argv[2])
print(json.dumps({"torch_loaded": "torch" in sys.modules, "run_id": result.run_id}))
"""


def test_a_tracked_checkpointed_random_run_never_imports_torch_and_says_so_in_its_hardware_tag(tmp_path):
    """Tracking and checkpoints add no torch import (1-2 s: most of a short run's tracking cost before issue 42):
    the hardware tag, written at the end, says the run used none; a run that imports torch keeps its tag."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = subprocess.run([sys.executable, "-c", TRACKED_CHILD, uri, str(tmp_path / "ck.json")], env=cli_env(),
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["torch_loaded"] is False
    run = MlflowClient(uri).get_run(out["run_id"])
    assert run.info.status == "FINISHED" and run.data.tags["hardware"] == "cpu/no-torch"
    assert run.data.metrics["query_cost"] == 3
    with_torch = hpoflow.minimize(lambda c: 0.0, SPACE, algo="random", rounds=2, seed=5, tracking=uri)  # torch loaded
    assert MlflowClient(uri).get_run(with_torch.run_id).data.tags["hardware"].startswith("cpu/float64/")
