"""Every command in the README runs: fenced ``bash`` blocks line by line (in order, in one scratch folder),
``python`` blocks as scripts. Budgets are shrunk (``budget.rounds=3``). That full run starts a dozen
processes (minutes on a loaded 2-core machine), so it is marked ``slow`` (``pytest -m slow tests/test_readme.py``);
the default suite composes and validates every ``python -m hpoflow`` command of the README in-process, so
a renamed group, option or key in the README fails there at once.

Not run here, but checked: ``make run``/``make test`` (targets exist; they are what CI runs), the paper
reproductions (the scripts exist; each takes many minutes), ``scripts/check_ui.py`` (run with ``--help``;
the full check is ``tests/scripts/test_check_ui.py``), and ``mlflow ui`` (started for real in a slow test).
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env

ROUNDS = 3
# a python block headed by a package or test file's path is that file's text, not a script (the worked example
# of a built-in algorithm: tests/core/test_component.py writes those files and runs them)
FILE_LISTING = re.compile(r"# (hpoflow|tests)/\S+\.py -- ")
README = (REPO / "README.md").read_text()


def blocks(lang: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"```{lang}\n(.*?)```", README, re.DOTALL)]


def bash_commands() -> list[str]:
    """One command per line (``\\`` continuations joined), trailing ``# comments`` removed."""
    out = []
    for body in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            line = re.split(r"\s+#\s", line.strip(), maxsplit=1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


CLUSTER_SECTIONS = ("### Running a study on a Ray cluster", "### A large study straight into the database",
                    "### SLURM", "### A shared tracking server (PostgreSQL)")  # tests/cluster/test_readme_cluster.py


def section_commands(title: str) -> list[str]:
    """The bash commands of one README section (up to the next heading of any level)."""
    start = README.index(title) + len(title)
    end = min(i for i in (README.find("\n#", start),) if i > 0)
    section = README[start:end]
    out = []
    for body in re.findall(r"```bash\n(.*?)```", section, re.DOTALL):
        for line in body.replace("\\\n", " ").splitlines():
            line = re.split(r"\s+#\s", line.strip(), maxsplit=1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def kind(cmd: str) -> str:
    if any(cmd in section_commands(title) for title in CLUSTER_SECTIONS):
        return "cluster"  # needs the cluster extra (and PostgreSQL): tests/cluster/test_readme_cluster.py
    if cmd.startswith("make "):
        return "make"
    if re.match(r"python scripts/(reproduce_\w+|table_a\d_\w+)\.py", cmd):
        return "reproduction"
    if re.match(r"python -m hpoflow(\.report)? (-m )?experiment=(?!smoke\b)\w+", cmd):
        return "study"  # a paper study: minutes to hours; its file and its report layout are checked instead
    if cmd.startswith("python scripts/check_ui.py"):
        return "browser"
    if cmd.startswith(("mlflow ui", "mlflow server")):
        return "server"
    return "run"


def shrink(cmd: str) -> str:
    """Tiny budgets for hpoflow jobs (``--help``/``--cfg`` run nothing and stay as written)."""
    if not re.search(r"-m hpoflow(\s|$)", cmd) or "--help" in cmd or "--cfg" in cmd:
        return cmd
    cmd = re.sub(r"budget\.rounds=\d+", f"budget.rounds={ROUNDS}", cmd)
    return cmd if "budget.rounds=" in cmd else f"{cmd} budget.rounds={ROUNDS}"


def shell_env() -> dict[str, str]:
    env = cli_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python, mlflow
    env["MPLBACKEND"] = "Agg"
    return env


def scratch(tmp_path: Path) -> Path:
    for name in ("examples", "scripts"):
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def test_readme_has_commands_of_every_kind():
    kinds = [kind(c) for c in bash_commands()]
    assert {"make", "browser", "server", "run"} <= set(kinds)  # paper reproductions are studies now
    assert blocks("python"), "the library example"
    assert README.index("make run") < README.index("## Usage")


def test_make_targets_and_reproduction_scripts_exist():
    makefile = (REPO / "Makefile").read_text()
    for cmd in bash_commands():
        if kind(cmd) == "make":
            assert re.search(rf"^{cmd.split()[1]}:", makefile, re.MULTILINE), cmd
    from hpoflow.report.papers import LAYOUTS

    for cmd in (c for c in bash_commands() if kind(c) == "study"):
        name = re.search(r"experiment=(\w+)", cmd).group(1)  # type: ignore[union-attr]
        assert (REPO / "conf" / "experiment" / f"{name}.yaml").is_file(), cmd
        assert "hpoflow.report" not in cmd or name in LAYOUTS, f"no report layout for {cmd}"
    missing = [c.split()[1] for c in bash_commands() if kind(c) == "reproduction"
               if not (REPO / c.split()[1]).exists()]
    if missing:
        pytest.skip(f"reproduction scripts not merged into this branch yet: {', '.join(missing)}")


def _overrides(cmd: str) -> list[str] | None:
    """The overrides of a plain ``python -m hpoflow`` job (first value of each sweep list), else None."""
    tokens = shlex.split(cmd)
    if tokens[:3] != ["python", "-m", "hpoflow"] or "--config-dir" in tokens or kind(cmd) in ("study", "cluster"):
        return None
    out: list[str] = []
    args = iter(tokens[3:])
    for tok in args:
        if tok in ("--cfg", "-c", "--package", "-p"):
            next(args, None)  # the flag's argument (e.g. ``job``)
        if tok.startswith("-") or tok == "..." or tok.startswith(("hydra/", "hydra.")) or tok.endswith("=..."):
            continue  # launcher choices need their plugins; the job's own config is what is checked here
        key, _, value = tok.partition("=")
        out.append(f"{key}={value.split(',')[0]}")
    return out


def test_readme_hpoflow_commands_compose_and_validate():
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.schema import register_configs
    from hpoflow.config.settings import validate

    register_configs()
    jobs = [o for o in map(_overrides, bash_commands()) if o is not None]
    assert len(jobs) >= 5
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        for overrides in jobs:
            cfg = compose(config_name="config", overrides=overrides)
            settings = validate(OmegaConf.to_container(cfg, resolve=True, enum_to_str=True))
            for ov in overrides:
                key, value = ov.split("=", 1)
                if "." not in key and key in ("algo", "task", "surrogate"):
                    assert settings.raw[key]["name"] == value


def library_blocks() -> list[str]:
    """The python blocks of the README's library section."""
    section = README[README.index("## Using hpoflow as a Python library"):README.index("## Adding your own task")]
    return [m.group(1) for m in re.finditer(r"```python\n(.*?)```", section, re.DOTALL)]


def test_readme_library_snippets_run_and_stay_short(tmp_path, monkeypatch, capsys):
    """minimize, Study, make_algorithm and the parallel study (maximize with workers, a Study with pending trials)
    as the README shows them, each under 15 lines, run in-process in order (the parallel Study reuses the space
    and objective of the block before it, as a reader running them in one session would)."""
    snippets = library_blocks()
    assert [("minimize(" in b, "Study(" in b, "make_algorithm(" in b, "workers=" in b or "can_ask" in b)
            for b in snippets] == [(True, False, False, False), (False, True, False, False),
                                   (False, False, True, False), (False, False, False, True),
                                   (False, True, False, True)]
    assert all(len(b.strip().splitlines()) < 15 for b in snippets)
    monkeypatch.chdir(tmp_path)
    session: dict = {"__name__": "__main__"}
    for i, body in enumerate(snippets):
        scope = session if i >= 3 else {"__name__": "__main__"}
        exec(compile(body, f"README library block {i}", "exec"), scope)  # noqa: S102 - our README
        printed = capsys.readouterr().out.strip().splitlines()
        assert printed and "None" not in printed[-1], f"block {i} printed {printed}"
    assert len(session["study"].records) == 12 and session["study"].best_value > 0.5
    assert max(r.metrics["pending"] for r in session["study"].records) == 3  # 4 trials were pending at once
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'outputs' / 'mlflow.db'}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert sorted(r.data.tags["task"] for r in runs if r.info.status == "FINISHED") == \
        ["loss", "my-training", "parallel"]
    (parallel,) = [r for r in runs if r.data.tags["task"] == "parallel"]
    assert parallel.data.params["budget.workers"] == "4" and parallel.data.metrics["best_value"] > 0.5
    assert (tmp_path / "outputs" / "my-training.json").is_file()


def concrete(cmd: str, work: Path) -> str:
    """A command whose arguments are the README's examples of a run (``resume=outputs/runs/<date>/<folder>``, a run
    id, ``tracking.uri=...``) pointed at a run the commands before it made in ``work``."""
    if "resume=" not in cmd:
        return cmd
    folders = sorted(work.glob("outputs/runs/*/*/checkpoint.json"), key=lambda p: p.stat().st_mtime)
    assert folders, "no run folder for the README's resume examples"
    folder = folders[-1].parent
    cmd = re.sub(r"resume=outputs/runs/\S+", f"resume={folder.relative_to(work)}", cmd)
    if re.search(r"resume=[0-9a-f]{32}\b", cmd):
        cmd = re.sub(r"resume=[0-9a-f]{32}\b", f"resume={_run_id(folder)}", cmd)
        cmd = cmd.replace("tracking.uri=...", f"tracking.uri=sqlite:///{work / 'outputs' / 'mlflow.db'}")
    return cmd


def _run_id(folder: Path) -> str:
    """The MLflow run a run folder's checkpoint belongs to."""
    from hpoflow.core.checkpoint import load

    return str(load(folder / "checkpoint.json").meta["run_id"])


def test_every_readme_command_runs(tmp_path):
    """Every README command that runs on this machine in seconds, run by CI (the cluster sections: tests/cluster;
    studies and reproductions: their files and report layouts are checked elsewhere)."""
    work, env = scratch(tmp_path), shell_env()
    ran = []
    for cmd in bash_commands():
        k = kind(cmd)
        if k in ("make", "reproduction", "server", "study", "cluster"):
            continue
        cmd = f"{cmd} --help" if k == "browser" else shrink(concrete(cmd, work))
        proc = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert proc.returncode == 0, f"README command failed: {cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        ran.append(cmd)
    assert any("hpoflow.report" in c for c in ran) and any("--config-dir" in c for c in ran)
    assert list((work / "outputs" / "report" / "branin").glob("regret_vs_round_*.svg"))
    python = [b for b in blocks("python") if not FILE_LISTING.match(b)]
    for i, body in enumerate(python):
        script = work / f"readme_example_{i}.py"
        continues = "can_ask" in body and "def accuracy" not in body  # the parallel Study reuses the block before
        script.write_text(python[i - 1] + "\n" + body if continues else body)
        proc = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert proc.returncode == 0, f"README python block {i} failed:\n{proc.stderr[-4000:]}"


def test_readme_mlflow_ui_command_serves_the_store(tmp_path):
    (cmd,) = [c for c in bash_commands() if kind(c) == "server"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["bash", "-c", f"exec {cmd} --port {port}"], cwd=scratch(tmp_path), env=shell_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, "mlflow ui exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    assert r.status == 200
                    return
            except OSError:
                time.sleep(2)
        pytest.fail("mlflow ui did not answer /health")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
