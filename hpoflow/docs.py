"""Generate the README's table of config groups from the registry, so the docs cannot drift.

``python -m hpoflow.docs`` prints the table; ``python -m hpoflow.docs --write README.md`` rewrites the block
between the ``<!-- groups:start -->`` and ``<!-- groups:end -->`` markers.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from hpoflow import registry

START, END = "<!-- groups:start -->", "<!-- groups:end -->"


def groups_markdown() -> str:
    lines = ["| group | option | what it is | settings (defaults) |", "|---|---|---|---|"]
    for kind, group in registry.GROUP_OF_KIND.items():
        for e in registry.entries(kind):
            cfg = e.make_config()
            settings = ", ".join(f"`{f.name}={getattr(cfg, f.name)}`" for f in dataclasses.fields(cfg)
                                 if f.name != "name" and not dataclasses.is_dataclass(getattr(cfg, f.name)))
            lines.append(f"| {group} | `{e.name}` | {e.description} | {settings} |")
    lines.append("| hardware | `cpu`, `cuda`, `auto` | device, dtype (float64 on CPU), threads | "
                 "`device`, `dtype=auto`, `threads=0` |")
    lines.append("| tracking | `mlflow`, `off` | MLflow run per (algo, task, seed) | `uri`, `experiment`, `run_name`, "
                 "`flush_every=25`, `artifacts=True`, `enabled` |")
    return "\n".join(lines)


def rewrite(readme: Path) -> bool:
    """Replace the generated block; return True if the file changed."""
    text = readme.read_text()
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = f"{head}{START}\n{groups_markdown()}\n{END}{tail}"
    if new != text:
        readme.write_text(new)
    return new != text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, help="README to update in place")
    args = parser.parse_args()
    if args.write:
        print("updated" if rewrite(args.write) else "up to date")
    else:
        print(groups_markdown())


if __name__ == "__main__":
    main()
