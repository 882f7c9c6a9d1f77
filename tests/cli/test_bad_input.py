"""Bad-input fuzz: every bad override exits non-zero with one line naming the key, and leaves no run RUNNING."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cli.test_failures_cli import FAULTY, faulty_env
from tests.conftest import REPO, mlflow_runs

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
    ("bad output transform", ["surrogate.output_transform=log"], "surrogate.output_transform='log'"),
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
    # reliability round 3 (issue 31)
    ("100,000 threads", ["hardware.threads=100000"], "hardware.threads=100000"),
    ("negative threads", ["hardware.threads=-1"], "hardware.threads=-1"),
    ("folds > samples", ["task=breast_cancer", "task.folds=600"], "task.folds=600"),
    ("folds > class size", ["task=sklearn", "task.dataset=iris", "task.folds=1000"], "task.folds=1000"),
    ("folds > smallest class", ["task=wine", "task.folds=60"], "task.folds=60"),
    ("path of digits_cnn", ["task=digits_cnn", "task.path=/nonexistent"], "task.path='/nonexistent'"),
    ("5,000-digit seed", ["seed=" + "7" * 5000], "seed=<5000 digits>"),
    ("5,000-digit rounds", ["budget.rounds=" + "7" * 5000], "budget.rounds=<5000 digits>"),
    ("5,000-character algo", ["algo=" + "x" * 5000], "algo=<5000 characters> is not an option of algo"),
    ("5,000-character task in a list", ["task=branin," + "y" * 5000], "task=<5000 characters>"),
    ("unimportable _target_", [*PLUGIN, "task=faulty", "task._target_=nope_module.Task"], "task._target_='nope_module"),
    ("_target_ without module", [*PLUGIN, "task=faulty", "task._target_=Task"], "task._target_='Task'"),
    ("option after override", ["algo=random", "--config-dir", "/tmp", "task=branin"], "option '--config-dir'"),
    ("flag after override", ["algo=random", "--cfg", "job", "task=branin"], "option '--cfg'"),
    ("comma list without -m", ["algo=random,gp_ei"], "add -m"),
    ("zero rounds", ["budget.rounds=0"], "budget.rounds=0"),
    ("fractional rounds", ["budget.rounds=1.5"], "budget.rounds"),
    ("text seed", ["seed=abc"], "seed"),
    ("fractional seed", ["seed=1.5"], "seed"),
    ("text checkpoint_every", ["checkpoint_every=abc"], "checkpoint_every"),
    ("zero flush_every", ["tracking.flush_every=0"], "tracking.flush_every"),
    ("negative flush_every", ["tracking.flush_every=-3"], "tracking.flush_every"),
    ("negative heartbeat", ["tracking.heartbeat_s=-1"], "tracking.heartbeat_s"),
    ("NaN heartbeat", ["tracking.heartbeat_s=nan"], "tracking.heartbeat_s"),
    ("unknown hardware", ["hardware=tpu"], "hardware"),
    ("unknown device", ["hardware.device=tpu"], "hardware.device"),
    ("unknown dtype", ["hardware.dtype=float16"], "hardware.dtype"),
    ("text threads", ["hardware.threads=many"], "hardware.threads"),
    ("unknown surrogate", ["surrogate=nope"], "surrogate"),
    ("unknown task", ["task=nope"], "task"),
    ("unknown experiment", ["experiment=nope"], "experiment"),
    ("unknown tracking", ["tracking=nope"], "tracking"),
    ("text on_error", ["on_error=1"], "on_error"),
    # reliability round 4 (issue 42)
    ("broken YAML in --config-dir", ["--config-dir", str(REPO / "tests" / "fixtures" / "broken_yaml"), "task=broken"],
     "broken.yaml, line 4"),
    ("env var of the wrong type", ["seed=${oc.env:HOME}"], "seed:"),
    ("unset env var", ["tracking.experiment=${oc.env:HPOFLOW_SURELY_UNSET}"], "HPOFLOW_SURELY_UNSET"),
    ("run folder under /proc", ["hydra.run.dir=/proc/hpoflow/x"], "cannot create the output folder /proc/hpoflow"),
    ("run folder is a file", [f"hydra.run.dir={REPO / 'pyproject.toml'}"], "pyproject.toml (File exists)"),
    ("remove the task", ["~task"], "~task"),
    ("remove the budget", ["~budget"], "~budget"),
    ("remove rounds", ["~budget.rounds"], "~budget.rounds"),
    ("a key twice", ["seed=5", "seed=6"], "seed is given twice"),
    ("a group twice", ["algo=random", "algo=gp_ei"], "algo is given twice"),
    ("batch size -1", ["-m", "hydra.sweeper.max_batch_size=-1", "seed=0,1"], "max_batch_size=-1"),
    ("batch size 0", ["-m", "hydra.sweeper.max_batch_size=0", "seed=0,1"], "max_batch_size=0"),
    ("text in a sweep", ["-m", "seed=0,abc"], "seed=abc"),
    ("sweep folder is a file", ["-m", f"hydra.sweep.dir={REPO / 'pyproject.toml'}", "seed=0,1"], "pyproject.toml"),
    ("in-memory SQLite", ["tracking.uri=sqlite://"], "tracking.uri='sqlite://'"),
    ("in-memory SQLite, named", ["tracking.uri=sqlite:///:memory:"], "in-memory"),
    ("dead PostgreSQL", [f"tracking.uri=postgresql+psycopg2://bob:{SECRET}@127.0.0.1:1/mlflow"], "tracking.uri"),
    ("resume an unknown run id", ["resume=0123456789abcdef0123456789abcdef"], "no such MLflow run"),
    ("session cookie in clear", ["+task.session_cookie=" + SECRET], "session_cookie"),
]


def _registry_cases() -> list[tuple[str, list[str], str]]:
    """Per registered component: an unknown key, and a word where its first number belongs (so every algorithm,
    task and surrogate a plugin registers is fuzzed too)."""
    import dataclasses

    from hpoflow.config import registry

    cases = []
    for kind, group in registry.GROUP_OF_KIND.items():
        for entry in registry.entries(kind):
            choice = [f"{group}={entry.name}"]
            cases.append((f"{group}={entry.name} unknown key", [*choice, f"{group}.nope=1"], f"{group}.nope"))
            numbers = [f.name for f in dataclasses.fields(entry.config)
                       if str(f.type).split(" |")[0] in ("int", "float") and f.name not in entry.defaults]
            if numbers:
                key = f"{group}.{numbers[0]}"
                cases.append((f"{key} word ({entry.name})", [*choice, f"{key}=abc"], key))
    return cases


ALL_CASES = CASES + _registry_cases()


def _cli(cwd: Path, args: list[str], full_error: bool = False) -> subprocess.CompletedProcess:
    env = faulty_env()
    if full_error:
        env["HYDRA_FULL_ERROR"] = "1"
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "hpoflow", *_args(args)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _args(args: list[str]) -> list[str]:
    options = args[:2] if args[:1] == ["--config-dir"] else args[:1] if args[:1] == ["-m"] else []  # options first
    given = {a.split("=")[0].lstrip("+~") for a in args}  # a key given twice is refused on its own
    defaults = [a for a in ("task=branin", "algo=random", "budget.rounds=3") if a.split("=")[0] not in given]
    return [*options, *defaults, *args[len(options):]]


@pytest.mark.cli
def test_bad_overrides_fail_fast_with_one_line_naming_the_key(tmp_path):
    """Every case: exit 2, one ``Error:`` line naming the key, no traceback, no secret, and no run created."""
    from tests.cli_server import warm_server

    invocations = []
    for i, (_, args, _) in enumerate(ALL_CASES):
        own = any(a.startswith("tracking.uri") for a in args)
        uri = [] if own else [f"tracking.uri=sqlite:///{tmp_path / f'{i}.db'}"]
        invocations.append((tmp_path / str(i), _args([*args, *uri])))
    server, results = warm_server(faulty_env()), []  # one start-up, a fork per case
    for cwd, args in invocations:
        cwd.mkdir(parents=True, exist_ok=True)
        proc = server.run("hpoflow", args, cwd, timeout=600)
        results.append((proc.returncode, proc.stdout, proc.stderr))
    problems = []
    for i, ((name, args, fragment), (code, out, err)) in enumerate(zip(ALL_CASES, results)):
        lines = [ln for ln in err.splitlines() if ln.strip() and " INFO " not in ln]
        print(f"\n{name:34s} exit {code}: {lines[0][:150] if lines else ''}", end="")
        if code != 2 or len(lines) != 1 or not lines[0].startswith("Error:") or fragment not in lines[0] \
                or "Traceback" in err or SECRET in out + err:
            problems.append(f"{name} {[a[:80] for a in args]}: exit {code}, stderr {err[-600:]!r}")
        db = tmp_path / f"{i}.db"
        if db.exists() and mlflow_runs(f"sqlite:///{db}", parents=True):
            problems.append(f"{name}: a run (or a study's parent run) was created before the input was refused")
    print(f"\nbad-input fuzz: {len(ALL_CASES) - len(problems)} of {len(ALL_CASES)} cases hold")
    assert len(ALL_CASES) >= 140
    assert not problems, "\n".join(problems)


@pytest.mark.cli
def test_a_few_bad_inputs_through_a_fresh_interpreter(tmp_path):
    """The warm server's verdicts (tests/cli_server.py) hold for a real ``python -m hpoflow`` start-up too."""
    picked = [c for c in CASES if c[0] in ("unknown algo", "option after override", "5,000-digit seed")]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda c: _cli(tmp_path / c[0].replace(" ", "_"), c[1]), picked))
    for (name, _, fragment), proc in zip(picked, results):
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and " INFO " not in ln]
        assert proc.returncode == 2 and len(lines) == 1 and fragment in lines[0], (name, proc.stderr[-1000:])


@pytest.mark.parametrize("args", [["algo.beta=abc", "algo=gp_ucb"], ["task=rastrigin", "task.low=3", "task.high=1"]],
                         ids=["compose", "validate"])
def test_full_traceback_with_hydra_full_error(tmp_path, args):
    proc = _cli(tmp_path, [*args, "tracking=off"], full_error=True)
    assert proc.returncode != 0 and "Traceback" in proc.stderr
