"""Bad-input fuzz: every bad override exits non-zero with one line naming the key, and leaves no run RUNNING."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO, mlflow_runs
from tests.test_failures_cli import FAULTY, faulty_env

pytestmark = pytest.mark.cli  # every case starts python -m hpoflow in a subprocess (make test-fast skips it)

PLUGIN = ("--config-dir", str(FAULTY / "conf"))
SECRET = "hunter2"  # must never appear in any output
CASES = [  # (id, CLI arguments, fragment the one-line error must contain)
    ("unknown algo", ["algo=nope"], "algo"),
    ("unknown task key", ["task=rastrigin", "task.nope=1"], "task.nope"),
    ("unknown top-level key", ["rounds=3"], "rounds"),
    ("unknown launcher", ["hydra/launcher=nope"], "hydra/launcher"),
    ("wrong type float", ["algo=gp_ucb", "algo.beta=abc"], "algo.beta"),
    ("wrong type int", ["budget.rounds=ten"], "budget.rounds"),
    ("wrong type nested", ["algo=gp_ei", "algo.optimizer.num_restarts=1.5"], "algo.optimizer.num_restarts"),
    ("inverted bounds", ["task=rastrigin", "task.low=3", "task.high=1"], "task.low=3"),
    ("negative budget", ["budget.rounds=-5"], "budget.rounds=-5"),
    ("negative cost budget", ["budget.cost=-1"], "budget.cost"),
    ("negative seed", ["seed=-1"], "seed"),
    ("unknown policy", ["on_error=ignore"], "on_error"),
    ("bad kernel", ["surrogate.kernel=cosine"], "surrogate.kernel"),
    ("negative checkpoint_every", ["checkpoint_every=-1"], "checkpoint_every"),
    ("resume from nowhere", ["resume=/nonexistent/run"], "resume"),
    ("missing data file", [*PLUGIN, "task=faulty", "task.path=/nonexistent/data.csv"], "task.path"),
    ("data path is a folder", [*PLUGIN, "task=faulty", f"task.path={REPO / 'tests'}"], "task.path"),
    ("unwritable store", ["tracking.uri=sqlite:////proc/nope/mlflow.db"], "tracking.uri"),
    # reliability round 2 (issue 15): nonsense that used to run
    ("NaN cost budget", ["budget.cost=nan"], "budget.cost=nan"),
    ("NaN noise", ["task.noise_std=nan"], "task.noise_std=nan"),
    ("NaN beta", ["algo=gp_ucb", "algo.beta=nan"], "algo.beta=nan"),
    ("inf bound", ["task=rastrigin", "task.low=-inf"], "task.low=-inf"),
    ("new top-level key", ["+foo=1"], "'foo' is not a setting"),
    ("dim of a fixed-dim task", ["task=hartmann6", "task.dim=3"], "task.dim=3"),
    ("rounds 2**70", [f"budget.rounds={2**70}"], "budget.rounds"),
    ("empty store URI", ["tracking.uri="], "tracking.uri is empty"),
    ("5,000-char run name", ["tracking.run_name=" + "x" * 5000], "tracking.run_name"),
    ("seed 2**70", [f"seed={2**70}"], "seed"),
    ("dim 1e11", ["task=styblinski_tang", "task.dim=100000000000"], "task.dim"),
    ("zero heartbeat", ["tracking.heartbeat_s=0"], "tracking.heartbeat_s"),
    ("dead server, password", [f"tracking.uri=http://bob:{SECRET}@127.0.0.1:1"], "tracking.uri"),
]


def _cli(cwd: Path, args: list[str], full_error: bool = False) -> subprocess.CompletedProcess:
    env = faulty_env()
    if full_error:
        env["HYDRA_FULL_ERROR"] = "1"
    cwd.mkdir(parents=True, exist_ok=True)
    options = args[:2] if args[:1] == ["--config-dir"] else []  # options must precede the overrides
    return subprocess.run([sys.executable, "-m", "hpoflow", *options, "task=branin", "algo=random",
                           "budget.rounds=3", *args[len(options):]],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_bad_overrides_fail_fast_with_one_line_naming_the_key(tmp_path):
    def case(i: int) -> subprocess.CompletedProcess:
        name, args, _ = CASES[i]
        uri = (
            []
            if any(a.startswith("tracking.uri") for a in args)
            else [f"tracking.uri=sqlite:///{tmp_path / f'{i}.db'}"]
        )
        return _cli(tmp_path / str(i), [*args, *uri])

    with ThreadPoolExecutor(max_workers=3) as pool:  # each start costs ~1-2 s of CPU: a few at a time
        results = list(pool.map(case, range(len(CASES))))
    problems = []
    for i, ((name, args, fragment), proc) in enumerate(zip(CASES, results)):
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and " INFO " not in ln]
        print(f"\n{name:26s} exit {proc.returncode}: {lines[0] if lines else ''}", end="")
        if proc.returncode == 0 or len(lines) != 1 or not lines[0].startswith("Error:") or fragment not in lines[0] \
                or "Traceback" in proc.stderr or SECRET in proc.stdout + proc.stderr:
            problems.append(f"{name} {args}: exit {proc.returncode}, stderr {proc.stderr[-600:]!r}")
        db = tmp_path / f"{i}.db"
        if db.exists() and any(r.info.status == "RUNNING" for r in mlflow_runs(f"sqlite:///{db}")):
            problems.append(f"{name}: a run was left RUNNING")
    print(f"\nbad-input fuzz: {len(CASES) - len(problems)} of {len(CASES)} cases hold")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("args", [["algo.beta=abc", "algo=gp_ucb"], ["task=rastrigin", "task.low=3", "task.high=1"]],
                         ids=["compose", "validate"])
def test_full_traceback_with_hydra_full_error(tmp_path, args):
    proc = _cli(tmp_path, [*args, "tracking=off"], full_error=True)
    assert proc.returncode != 0 and "Traceback" in proc.stderr
