"""The API reference renders docstrings with mkdocstrings (Google style, Markdown): a Sphinx role such as
``:class:`~x.Y``` would show as raw text there. Every object the reference names, and its public members, is
checked."""
from __future__ import annotations

import importlib
import inspect
import re

from tests.conftest import REPO

ROLE = re.compile(r":(?:class|func|meth|attr|mod|exc|data|obj|py:\w+):`")


def _rendered() -> dict[str, object]:
    """``{dotted name: object}`` for each ``::: name`` of the API page, with the public members mkdocstrings shows."""
    out: dict[str, object] = {}
    for name in re.findall(r"^::: ([\w.]+)", (REPO / "docs" / "reference" / "api.md").read_text(), re.M):
        module, _, attr = name.rpartition(".")
        try:
            obj = importlib.import_module(name)
        except ImportError:
            obj = getattr(importlib.import_module(module), attr)
        out[name] = obj
        if inspect.isclass(obj) or inspect.ismodule(obj):
            for member, value in vars(obj).items():
                if not member.startswith("_") and (not inspect.ismodule(obj)
                                                   or getattr(value, "__module__", None) == obj.__name__):
                    out[f"{name}.{member}"] = value
    return out


def raw_roles(objects: dict[str, object]) -> list[str]:
    found = []
    for name, obj in objects.items():
        doc = obj.__doc__ if isinstance(obj, (type, property)) or callable(obj) or inspect.ismodule(obj) else None
        if isinstance(doc, str) and ROLE.search(doc):
            found.append(f"{name}: {ROLE.search(doc).group(0)}")  # type: ignore[union-attr]
    return found


def test_the_check_finds_a_raw_role():
    def documented():
        """Returns a :class:`~hpoflow.core.records.Evaluation`."""

    assert raw_roles({"f": documented}) == ["f: :class:`"]
    assert raw_roles({"g": lambda: None}) == []


def test_no_docstring_the_api_reference_renders_has_a_raw_sphinx_role():
    assert raw_roles(_rendered()) == []
