"""The wheel and the sdist carry the config: a non-editable install works from any folder.

Builds the wheel (no build isolation: nothing is downloaded), installs it into a fresh virtualenv that sees
this environment's third-party packages but not the source tree, and runs a 3-round job, ``--help``, an
``experiment=`` composition and a report from a temporary folder.
"""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HYDRA_FULL_ERROR", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def _build(kind: str, out: Path) -> Path:
    pytest.importorskip("build", reason="the 'build' package (dev extra) builds the wheel and sdist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", f"--{kind}", "--no-isolation", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
        env=_clean_env(),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (artifact,) = out.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    return artifact


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build("wheel", tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed; returns its python."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # third-party packages (torch, mlflow, ...) come from this environment; hpoflow only from the wheel
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                           "--target", site, str(wheel)], capture_output=True, text=True, timeout=600, env=_clean_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=_clean_env())
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_the_wheel_carries_every_config_file(wheel: Path):
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"hpoflow/conf/{p.relative_to(REPO / 'conf')}" for p in (REPO / "conf").rglob("*.yaml")}
    assert wanted and wanted <= names, sorted(wanted - names)[:5]


def test_the_sdist_carries_every_config_file(tmp_path: Path):
    sdist = _build("sdist", tmp_path)
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = {f"hpoflow/conf/{p.relative_to(REPO / 'conf')}" for p in (REPO / "conf").rglob("*.yaml")}
    assert wanted <= names, sorted(wanted - names)[:5]


def test_the_installed_wheel_runs_a_job_help_an_experiment_and_a_report_from_any_folder(installed, tmp_path):
    where = _run(installed, tmp_path, "-c", "import hpoflow; print(hpoflow.__file__)").stdout.strip()
    assert str(REPO) not in where and "site-packages" in where, where
    assert "algo: " in _run(installed, tmp_path, "-m", "hpoflow", "--help").stdout
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    job = _run(installed, tmp_path, "-m", "hpoflow", "algo=random", "task=branin", "budget.rounds=3",
               f"tracking.uri={uri}", "tracking.experiment=wheel", "progress=false")
    assert "best value" in job.stdout
    composed = _run(installed, tmp_path, "-m", "hpoflow", "--cfg", "job", "experiment=smoke")
    assert "experiment" not in composed.stderr.lower()
    report = _run(installed, tmp_path, "-m", "hpoflow.report", f"tracking.uri={uri}", "tracking.experiment=wheel",
                  f"report.out={tmp_path / 'rep'}")
    assert "random" in report.stdout and (tmp_path / "rep" / "report.md").is_file()
