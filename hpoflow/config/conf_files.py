"""The option files of ``conf/algo|surrogate|task|hardware|tracking``, generated from the config dataclasses.

A default and its one-line comment are written once, in the config dataclass: the comment is the trailing ``#``
comment on the field's line (a leading comment block is not copied: long rationale belongs in the docstring).
Each file is the option's description (a built-in's registry entry; :data:`~hpoflow.config.schema.DESCRIPTIONS`
for hardware and tracking), the defaults list (the dataclass schema, the surrogate an algorithm selects,
``_self_``) and every setting at the option's defaults with its field's comment, so a user can read and copy it.
``python -m hpoflow.cli.docs --write-conf`` writes them; a test checks that they are current.
``conf/config.yaml``, ``conf/experiment`` and ``conf/hydra`` stay hand-written.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import io
import textwrap
import tokenize
from pathlib import Path
from typing import Any

from hpoflow.config import registry
from hpoflow.config.schema import DESCRIPTIONS, fixed_options

GENERATED_GROUPS = ("algo", "surrogate", "task", "hardware", "tracking")
COMMENT_COLUMN = 41  # where a setting's comment starts (the hand-written files' layout)
SURROGATE_COMMENT = "the surrogate this algorithm needs; surrogate=... still wins"


@functools.cache
def _own_comments(cls: type) -> dict[str, str]:
    """``{field: comment}`` for the fields ``cls`` itself declares that carry a trailing comment."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # defined in a REPL or built dynamically: no comments to copy
        return {}
    trailing: dict[int, str] = {}
    code_on_line: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            if tok.start[0] in code_on_line:
                trailing.setdefault(tok.start[0], tok.string.lstrip("#").strip())
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_on_line.update(range(tok.start[0], tok.end[0] + 1))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    out = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            lines = range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
            comment = next((trailing[n] for n in lines if n in trailing), None)
            if comment:
                out[stmt.target.id] = comment
    return out


def field_comments(cls: type) -> dict[str, str]:
    """Each field's one-line comment: the trailing comment where the most derived class that has one declares it."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            out.update(_own_comments(klass))
    return out


def yaml_value(value: Any) -> str:
    """``value`` as YAML that Hydra reads back as the same value (``'off'`` quoted, ``1.0e-06``, ``null``)."""
    import yaml

    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, tuple):
        value = list(value)
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000).strip()
    text = text.removesuffix("...").strip()
    if isinstance(value, str) and _read_back(text) != value:  # OmegaConf reads '1e-3' as a float, PyYAML not
        text = "'" + value.replace("'", "''") + "'"
    return text


def _read_back(text: str) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(f"v: {text}")["v"]


def _setting_lines(cfg: Any, indent: int) -> list[str]:
    comments = field_comments(type(cfg))
    out = []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        nested = dataclasses.is_dataclass(value)
        line = " " * indent + f"{f.name}:" + ("" if nested else f" {yaml_value(value)}")
        if f.name in comments:
            line = f"{line.ljust(COMMENT_COLUMN - 1)} # {comments[f.name]}"
        out.append(line)
        if nested:
            out += _setting_lines(value, indent + 2)
    return out


@dataclasses.dataclass(frozen=True)
class Option:
    """One generated file: ``conf/<group>/<name>.yaml``."""

    group: str
    name: str
    description: str
    config: Any                  # the dataclass instance at the option's defaults
    surrogate: str = ""          # algorithms: the surrogate option the file selects

    @property
    def path(self) -> str:
        return f"{self.group}/{self.name}.yaml"


def options() -> list[Option]:
    """Every built-in's option (plugins keep their own files, or none), then hardware and tracking."""
    out = [Option(registry.GROUP_OF_KIND[e.kind], e.name, e.description, e.make_config(), e.surrogate)
           for e in registry.builtin_entries()]
    for group, configs in fixed_options().items():
        out += [Option(group, name, DESCRIPTIONS[group][name], config) for name, config in configs.items()]
    return out


def option_yaml(option: Option) -> str:
    """The text of ``conf/<group>/<name>.yaml``."""
    lines = [f"# {option.description or option.group + '=' + option.name}",
             "# generated from its config dataclass by: python -m hpoflow.cli.docs --write-conf",
             "defaults:", f"  - /schema/{option.group}/{option.name}@_here_"]
    if option.surrogate:
        lines.append(f"  - override /surrogate@_global_.surrogate: {option.surrogate}  # {SURROGATE_COMMENT}")
    lines += ["  - _self_", ""]
    return "\n".join([*lines, *_setting_lines(option.config, 0)]) + "\n"


def generated() -> dict[str, str]:
    """``{"algo/gp_ei.yaml": text}`` for every option of :func:`options`."""
    return {option.path: option_yaml(option) for option in options()}


def stale(conf_dir: Path) -> list[str]:
    """Files in the generated groups of ``conf_dir`` that no built-in generates (a removed or renamed one)."""
    names = generated()
    return sorted(f"{group}/{p.name}" for group in GENERATED_GROUPS for p in (conf_dir / group).glob("*.yaml")
                  if f"{group}/{p.name}" not in names)


def write(conf_dir: Path) -> list[str]:
    """Write every generated file under ``conf_dir``; return the ones whose text changed."""
    changed = []
    for relative, text in generated().items():
        path = conf_dir / relative
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed.append(relative)
    return changed
