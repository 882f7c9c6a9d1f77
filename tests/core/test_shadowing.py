"""A folder named hpoflow (the clone, run from its parent) shadowing the installed package: the one-line hint."""
from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

import hpoflow
from hpoflow.core.shadowing import shadowing_hint
from tests.conftest import REPO

# What setuptools' editable install appends to sys.meta_path: it maps hpoflow's modules to the checkout, after the
# path finder, so a folder named hpoflow on sys.path wins the top-level import as a namespace package.
EDITABLE_FINDER = """
import importlib.util, runpy, sys
from importlib.machinery import PathFinder
from pathlib import Path
ROOT = Path({root!r})
class Editable:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split('.')[0] != 'hpoflow':
            return None
        base = ROOT.joinpath(*name.split('.'))
        if (base / '__init__.py').is_file():
            return importlib.util.spec_from_file_location(name, base / '__init__.py',
                                                          submodule_search_locations=[str(base)])
        if base.with_suffix('.py').is_file():
            return importlib.util.spec_from_file_location(name, base.with_suffix('.py'))
        return None
sys.meta_path.insert(sys.meta_path.index(PathFinder) + 1, Editable)  # before any installed one
sys.path[:] = [p for p in sys.path if not p or Path(p).resolve() != ROOT.resolve()]  # no path-based install either
sys.path.insert(0, {cwd!r})
import pytest

import hpoflow
print('namespace' if getattr(hpoflow, '__file__', None) is None else 'package', flush=True)
sys.argv = ['hpoflow', '--help']
runpy.run_module('hpoflow', run_name='__main__', alter_sys=True)
"""


def test_the_package_itself_gives_no_hint():
    assert shadowing_hint(hpoflow) is None


def test_a_namespace_package_names_its_folder(tmp_path):
    (tmp_path / "hpoflow" / "hpoflow").mkdir(parents=True)
    (tmp_path / "hpoflow" / "hpoflow" / "__init__.py").write_text("")
    ns = types.ModuleType("hpoflow")
    ns.__path__ = [str(tmp_path / "hpoflow")]  # what Python gives a folder without __init__.py
    hint = shadowing_hint(ns)
    assert hint is not None and "\n" not in hint
    assert f"finds the folder {tmp_path / 'hpoflow'} (the clone" in hint and f"cd {tmp_path / 'hpoflow'}" in hint


def test_the_cli_prints_the_hint_when_a_clone_shadows_an_editable_install(tmp_path: Path):
    (tmp_path / "hpoflow").mkdir()  # the clone's folder, beside the user's script
    code = EDITABLE_FINDER.format(root=str(REPO), cwd=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("namespace\nhpoflow: declarative")  # the shadowing happened; --help still ran
    assert proc.stderr.startswith(f"note: 'import hpoflow' in {tmp_path} finds the folder {tmp_path / 'hpoflow'}")


def test_with_the_documented_setup_a_folder_named_hpoflow_beside_a_script_does_not_shadow_the_package(tmp_path: Path):
    """``make setup`` installs the clone on sys.path (editable_mode=compat): a script next to a folder named hpoflow
    imports the package, not an empty namespace (setuptools' default editable finder would lose to the folder)."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    if list(site.glob("__editable___hpoflow_*finder.py")):
        pytest.skip("hpoflow is installed with setuptools' editable finder, not as `make setup` installs it")
    (tmp_path / "hpoflow").mkdir()
    (tmp_path / "script.py").write_text("import hpoflow\nprint(hpoflow.minimize.__name__)\n")
    proc = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and proc.stdout == "minimize\n", proc.stderr[-2000:]
