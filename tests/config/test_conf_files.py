"""conf/algo|surrogate|task|hardware|tracking are generated from the config dataclasses (hpoflow.config.conf_files)."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from dataclasses import dataclass, field

import pytest
from omegaconf import OmegaConf

from hpoflow.config import conf_files, registry
from hpoflow.config.schema import CONF_DIR
from tests.conftest import REPO, cli_env

FIX = "run: python -m hpoflow.cli.docs --write-conf"


def test_every_generated_option_file_is_current_and_none_is_stale() -> None:
    generated = conf_files.generated()
    assert len(generated) == len(registry.builtin_entries()) + 5 >= 55  # + hardware (3) and tracking (2)
    outdated = [name for name, text in generated.items()
                if not (CONF_DIR / name).is_file() or (CONF_DIR / name).read_text() != text]
    assert not outdated, f"{FIX} (out of date: {', '.join(outdated)})"
    assert not conf_files.stale(CONF_DIR), f"no built-in generates these: delete them ({conf_files.stale(CONF_DIR)})"


@pytest.mark.parametrize("option", conf_files.options(), ids=lambda o: o.path)
def test_a_generated_file_reads_back_as_its_schema_with_every_setting_at_the_options_default(option) -> None:
    from hpoflow.config.schema import schema_options

    text = conf_files.option_yaml(option)
    assert text.startswith("# ") and len(text.splitlines()[0]) > 10, "first line: a one-line comment of what it is"
    data = OmegaConf.to_container(OmegaConf.create(text))
    defaults = data.pop("defaults")
    assert data == dataclasses.asdict(schema_options()[option.group][option.name])
    assert defaults[0] == f"/schema/{option.group}/{option.name}@_here_" and defaults[-1] == "_self_"
    if option.surrogate:
        assert defaults[1] == {"override /surrogate@_global_.surrogate": option.surrogate}
    assert len(defaults) == 2 + bool(option.surrogate)


@dataclass(frozen=True)
class _Inner:
    depth: int = 2  # how deep


@dataclass(frozen=True)
class _Base:
    name: str = "base"  # the base's name
    # a leading block is rationale,
    # not a setting's comment
    rate: float = 1e-6
    mode: str = "off"  # a word YAML would read as false
    inner: _Inner = field(
        default_factory=_Inner)  # nested settings


@dataclass(frozen=True)
class _Child(_Base):
    name: str = "child"
    rate: float = 0.5  # the child's own comment wins
    items: tuple[int, ...] = (1, 2)


def test_comments_come_from_the_fields_own_line_and_the_most_derived_class_that_has_one() -> None:
    assert conf_files.field_comments(_Base) == {"name": "the base's name", "mode": "a word YAML would read as false",
                                                "inner": "nested settings"}
    assert conf_files.field_comments(_Child) == {"name": "the base's name", "rate": "the child's own comment wins",
                                                 "mode": "a word YAML would read as false",
                                                 "inner": "nested settings"}


def test_values_are_written_so_that_hydra_reads_back_the_same_value() -> None:
    assert [conf_files.yaml_value(v) for v in ("off", 1e-6, None, True, (1, 2), "1e-3", 3)] == \
           ["'off'", "1.0e-06", "null", "true", "[1, 2]", "'1e-3'", "3"]
    text = "\n".join(conf_files._setting_lines(_Child(), 0))
    assert OmegaConf.to_container(OmegaConf.create(text)) == {"name": "child", "rate": 0.5, "mode": "off",
                                                              "inner": {"depth": 2}, "items": [1, 2]}
    assert re.search(r"^inner: +# nested settings\n  depth: 2 +# how deep$", text, re.M)
    assert {line.index("#") for line in text.splitlines() if "#" in line} == {conf_files.COMMENT_COLUMN}


@pytest.mark.cli
def test_write_conf_writes_every_file_into_an_empty_folder(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "hpoflow.cli.docs", "--write-conf", str(tmp_path)], cwd=REPO,
                         env=cli_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    n = len(conf_files.generated())
    assert out.stdout.startswith(f"{n} of {n} files updated in {tmp_path}")
    for name, text in conf_files.generated().items():
        assert (tmp_path / name).read_text() == text == (CONF_DIR / name).read_text()
    (tmp_path / "algo" / "gone.yaml").write_text("# a renamed option\n")
    again = subprocess.run([sys.executable, "-m", "hpoflow.cli.docs", "--write-conf", str(tmp_path)], cwd=REPO,
                           env=cli_env(), capture_output=True, text=True, timeout=120)
    assert again.stdout.startswith(f"0 of {n} files updated") and "algo/gone.yaml: no built-in generates it" in \
        again.stdout
