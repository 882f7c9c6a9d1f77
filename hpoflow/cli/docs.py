"""Generate the README's table of config groups and the built-ins' YAML files from the registry, so neither drifts.

``python -m hpoflow.cli.docs`` prints the table; ``python -m hpoflow.cli.docs --write README.md`` rewrites the block
between the ``<!-- groups:start -->`` and ``<!-- groups:end -->`` markers; ``--write-conf`` rewrites
the option files of ``conf/algo|surrogate|task|hardware|tracking`` from the config dataclasses
(:mod:`hpoflow.config.conf_files`).
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from hpoflow.config import conf_files, registry
from hpoflow.config.schema import CONF_DIR

START, END = "<!-- groups:start -->", "<!-- groups:end -->"


def _shown(value: object) -> object:
    """A default as a user writes it on the command line (``null``: the component's automatic choice)."""
    return "null" if value is None else value


def _settings(cfg: object, skip: tuple[str, ...] = ("name",)) -> str:
    out = []
    for f in dataclasses.fields(cfg):  # type: ignore[arg-type]
        value = getattr(cfg, f.name)
        if f.name in skip:
            continue
        if dataclasses.is_dataclass(value):  # nested settings (budget.rounds, ...): one entry per leaf
            out += [f"`{f.name}.{g.name}={_shown(getattr(value, g.name))}`" for g in dataclasses.fields(value)]
        elif value is not None or f.name not in ("algo", "surrogate", "task", "hardware", "tracking"):
            out.append(f"`{f.name}={_shown(value)}`")
    return ", ".join(out)


def groups_markdown() -> str:
    """The table: every registered option of every group, then hardware, tracking and top-level keys."""
    from hpoflow.config.schema import RootConfig, TrackingConfig
    from hpoflow.core.hardware import HardwareConfig

    lines = ["| group | option | what it is | settings (defaults) |", "|---|---|---|---|"]
    for kind, group in registry.GROUP_OF_KIND.items():
        for e in registry.entries(kind):
            cfg = e.make_config()
            settings = ", ".join(f"`{f.name}={_shown(getattr(cfg, f.name))}`" for f in dataclasses.fields(cfg)
                                 if f.name != "name" and not dataclasses.is_dataclass(getattr(cfg, f.name)))
            lines.append(f"| {group} | `{e.name}` | {e.description} | {settings} |")
    lines.append(f"| hardware | `cpu`, `cuda`, `auto` | device, dtype (float64 on CPU), torch threads | "
                 f"{_settings(HardwareConfig())} |")
    lines.append(f"| tracking | `mlflow`, `off` | MLflow run per (algo, task, seed); `off`: no tracking | "
                 f"{_settings(TrackingConfig())} |")
    root = RootConfig()
    lines.append(f"| (top level) | | seed, budgets, failure policy, progress bar | "
                 f"{_settings(root, skip=('algo', 'surrogate', 'task', 'hardware', 'tracking'))} |")
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
    parser.add_argument("--write-conf", type=Path, nargs="?", const=CONF_DIR, metavar="CONF_DIR",
                        help=f"write the built-ins' option files of {', '.join(conf_files.GENERATED_GROUPS)} "
                             f"(default folder: {CONF_DIR})")
    args = parser.parse_args()
    if args.write_conf:
        changed = conf_files.write(args.write_conf)
        print(f"{len(changed)} of {len(conf_files.generated())} files updated in {args.write_conf}"
              + "".join(f"\n  {name}" for name in changed))
        for name in conf_files.stale(args.write_conf):
            print(f"  {name}: no built-in generates it (a removed or renamed option): delete it")
    if args.write:
        print("updated" if rewrite(args.write) else "up to date")
    elif not args.write_conf:
        print(groups_markdown())


if __name__ == "__main__":
    main()
