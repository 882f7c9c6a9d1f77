"""The README and the documentation site's commands, checked fast: every ``python -m hpoflow`` command composes and
validates in-process (a renamed group, option or key fails here at once), every ``make`` target and paper study
exists, and the ``mlflow ui`` command serves the store. ``tests/test_docs_pages.py`` runs every page's commands and
python blocks; ``tests/docs_pages.py`` reads the pages.

Kept here for the tests that import them: ``README`` (all the docs' text: README.md and docs/, wherever a section
moved), ``section_commands``, ``scratch``, ``shell_env``.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from tests.conftest import REPO
from tests.docs_pages import (
    CLUSTER,
    DOCS,
    all_blocks,
    all_commands,
    commands,
    kind,
    scratch,
    section_commands,
    shell_env,
)

README = DOCS  # what a user reads: README.md and every page of docs/
__all__ = ["README", "scratch", "section_commands", "shell_env"]


def bash_commands() -> list[str]:
    return [c for _, c in all_commands()]


def test_the_docs_have_commands_of_every_kind():
    kinds = {k for k, _ in all_commands()}
    assert {"make", "browser", "server", "run", "study", "covered", "results"} <= kinds, kinds


def test_make_targets_and_paper_studies_exist():
    makefile = (REPO / "Makefile").read_text()
    for k, cmd in all_commands():
        if k == "make":
            assert re.search(rf"^{cmd.split()[1]}:", makefile, re.MULTILINE), cmd
    from hpoflow.report.papers import LAYOUTS

    for cmd in (c for k, c in all_commands() if k == "study"):
        name = re.search(r"experiment=(\w+)", cmd).group(1)  # type: ignore[union-attr]
        assert (REPO / "conf" / "experiment" / f"{name}.yaml").is_file(), cmd
        assert "hpoflow.report" not in cmd or name in LAYOUTS, f"no report layout for {cmd}"


def _overrides(cmd: str) -> list[str] | None:
    """The overrides of a plain ``python -m hpoflow`` job (first value of each sweep list), else None."""
    tokens = shlex.split(cmd)
    if tokens[:3] != ["python", "-m", "hpoflow"] or "--config-dir" in tokens or kind(cmd) == "study":
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


def test_the_docs_hpoflow_commands_compose_and_validate():
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.schema import register_configs
    from hpoflow.config.settings import validate

    register_configs()
    jobs = [o for b in all_blocks() if b.lang == "bash" and b.section not in CLUSTER and not b.generated
            for o in map(_overrides, commands(b.body)) if o is not None]  # cluster sections: tests/cluster
    assert len(jobs) >= 5
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        for overrides in jobs:
            cfg = compose(config_name="config", overrides=overrides)
            settings = validate(OmegaConf.to_container(cfg, resolve=True, enum_to_str=True))
            for ov in overrides:
                key, value = ov.split("=", 1)
                if "." not in key and key in ("algo", "task", "surrogate"):
                    assert settings.raw[key]["name"] == value




def test_readme_mlflow_ui_command_serves_the_store(tmp_path):
    (cmd,) = {c for k, c in all_commands() if k == "server"}  # README and Getting started: the same
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
                time.sleep(0.5)
        pytest.fail("mlflow ui did not answer /health")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
