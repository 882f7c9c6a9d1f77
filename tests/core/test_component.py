"""Built-ins declare their registry entries beside their config dataclasses; the registry finds them there."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from hpoflow.config import registry
from hpoflow.core.component import algorithm, entry, surrogate
from tests.conftest import REPO, cli_env


def test_every_builtin_is_registered_under_its_declared_entry() -> None:
    builtins = registry.builtin_entries()
    assert len(builtins) >= 50
    assert len({(e.kind, e.name) for e in builtins}) == len(builtins)
    for e in builtins:
        assert registry.get(e.kind, e.name) is e
        assert isinstance(e.target, str) and ":" in e.target, f"{e.name}: a lazy 'module:attribute' target"
        assert e.make_config().name == e.name
        assert not e.surrogate or e.surrogate in {s.name for s in registry.entries("surrogate")}


def test_an_entrys_defaults_override_the_dataclass_for_that_name_only() -> None:
    from hpoflow.algorithms.configs import GPEIConfig

    e = algorithm("my_ei", "m:C", GPEIConfig, "x", surrogate="gp", xi=0.5)
    assert e.make_config().xi == 0.5 and e.make_config(xi=0.1).xi == 0.1 and GPEIConfig().xi == 0.0
    with pytest.raises(ValueError, match="only an algorithm selects a surrogate"):
        surrogate("my_gp", "m:f", GPEIConfig, surrogate="gp")
    with pytest.raises(ValueError, match="kind 'model' is unknown"):
        entry("model", "x", "m:f", GPEIConfig)


def test_two_builtins_with_one_name_are_refused_naming_both_modules(tmp_path, monkeypatch) -> None:
    package = tmp_path / "fakecomponents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    declare = textwrap.dedent("""
        from hpoflow.algorithms.configs import RandomConfig
        from hpoflow.core.component import algorithm
        BUILTINS = [algorithm("same", "m:C", RandomConfig, "x")]
        """)
    (package / "a_config.py").write_text(declare)
    (package / "b_config.py").write_text(declare)
    (package / "heavy.py").write_text("raise ImportError('only *config* modules are imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "COMPONENT_PACKAGES", ("fakecomponents",))
    with pytest.raises(ValueError, match="algo=same is declared twice: in fakecomponents.a_config and "
                                         "fakecomponents.b_config"):
        registry.builtin_entries.__wrapped__()


def test_finding_the_builtins_imports_no_torch() -> None:
    code = ("import sys; from hpoflow.config import registry; n = len(registry.builtin_entries()); "
            "print(n, 'torch' in sys.modules, 'hpoflow.config.builtins' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=cli_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    n, torch, builtins = out.stdout.split()
    assert int(n) >= 50 and torch == "False" and builtins == "False"


# --- the plug-in tutorial's worked example (docs/tutorials/plugin.md): a built-in algorithm in three files ---
SECTION = "## Adding a built-in algorithm: three files"
_CHECK = """
import json, sys
import hpoflow.algorithms
hpoflow.algorithms.__path__.append(sys.argv[1])  # the README's two modules, as if under hpoflow/algorithms/
from hpoflow.cli.docs import groups_markdown
from hpoflow.config import conf_files, registry
entry = registry.get("algorithm", "hill_climb")
namespace = {}
exec(open(sys.argv[2]).read(), namespace)
passed = []
for name, test in list(namespace.items()):
    if name.startswith("test_"):
        test()
        passed.append(name)
print(json.dumps({"yaml": conf_files.generated()["algo/hill_climb.yaml"], "passed": passed,
                  "row": [r for r in groups_markdown().splitlines() if "`hill_climb`" in r]}))
"""


def _worked_example() -> tuple[dict[str, str], str]:
    """The section's file listings (``{path: text}``, from each block's first-line comment) and its YAML block."""
    import re

    readme = (REPO / "docs" / "tutorials" / "plugin.md").read_text()
    section = readme[readme.index(SECTION):].split("\n## ", 1)[0]
    files = {m.group(1): m.group(0) for m in re.finditer(r"(?<=```python\n)# (\S+\.py) -- .*?(?=```)", section, re.S)}
    (yaml_block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return files, yaml_block


def test_the_readme_worked_example_is_three_files_that_register_generate_and_pass(tmp_path) -> None:
    import json

    files, yaml_block = _worked_example()
    assert sorted(files) == ["hpoflow/algorithms/hill_climb.py", "hpoflow/algorithms/hill_climb_config.py",
                             "tests/algorithms/test_hill_climb.py"]
    for k, (path, text) in enumerate(files.items(), 1):
        assert f"-- file {k} of 3:" in text.splitlines()[0]
        (tmp_path / path.rpartition("/")[2]).write_text(text)
    out = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path), str(tmp_path / "test_hill_climb.py")],
                         cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["yaml"] == yaml_block, "the README's YAML block is not what --write-conf generates"
    assert result["passed"] == ["test_hill_climb_gets_close_to_the_minimum",
                                "test_a_step_larger_than_the_cube_is_refused_in_one_line"]
    assert result["row"] == ["| algo | `hill_climb` | hill climbing: a Gaussian step from the best point seen | "
                             "`step=0.1` |"]


def test_a_plug_in_task_may_keep_a_config_field_named_model():
    """The surrogate declarations (model_class, model_provides) take no name a config field would: a task whose
    config has a ``model`` field (as the sklearn tasks' does) still registers with that default."""
    from dataclasses import dataclass

    from hpoflow.core.component import task

    @dataclass(frozen=True)
    class Cfg:
        name: str = "t"
        model: str = "rf"

    assert task("t", lambda **kw: None, Cfg, model="mlp").make_config().model == "mlp"
