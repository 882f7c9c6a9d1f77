"""Generate the config reference's table of config groups and the built-ins' YAML files from the registry, so neither
drifts.

``python -m hpoflow.cli.docs`` prints the table; ``python -m hpoflow.cli.docs --write`` rewrites the block between the
``<!-- groups:start -->`` and ``<!-- groups:end -->`` markers of the documentation site's config reference
(``docs/reference/config.md``; ``--write FILE`` any file with the markers; ``--write README.md``, whose table moved to
that page, updates the page beside it and says so); ``--write-conf`` rewrites
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
PAGE = Path("docs") / "reference" / "config.md"  # the site's config reference, relative to the repository
RESULTS_START, RESULTS_END = "<!-- results:start -->", "<!-- results:end -->"
RESULTS_PAGE = Path("docs") / "benchmarks.md"  # its index of results/*.txt, each with its # Regenerate: commands


def _cell(text: str) -> str:
    """A table cell's plain text: ``|`` escaped, so ``task.model=rf|mlp|gb`` stays one cell (GitHub and MkDocs)."""
    return text.replace("|", "\\|")


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
            lines.append(f"| {group} | `{e.name}` | {_cell(e.description)} | {settings} |")
    lines.append(f"| hardware | `cpu`, `cuda`, `auto` | device, dtype (float64 on CPU), torch threads | "
                 f"{_settings(HardwareConfig())} |")
    lines.append(f"| tracking | `mlflow`, `off` | MLflow run per (algo, task, seed); `off`: no tracking | "
                 f"{_settings(TrackingConfig())} |")
    root = RootConfig()
    lines.append(f"| (top level) | | seed, budgets, failure policy, progress bar | "
                 f"{_settings(root, skip=('algo', 'surrogate', 'task', 'hardware', 'tracking'))} |")
    return "\n".join(lines)


def results_markdown(folder: Path) -> str:
    """One section per ``results/*.txt`` file of a checkout: its ``# Regenerate:`` command lines, as the file
    states them (tests/test_results.py checks that each script, flag and experiment exists)."""
    out = []
    for path in sorted(folder.glob("*.txt")):
        commands = [line.removeprefix("# Regenerate:").strip() for line in path.read_text().splitlines()
                    if line.startswith("# Regenerate:")]
        out += [f"### {path.name}", "", "```bash", *commands, "```", ""]
    return "\n".join(out).rstrip()


def _replace(text: str, start: str, end: str, body: str) -> str:
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{body}\n{end}{tail}"


def target(path: Path) -> tuple[Path, str | None]:
    """The file whose block ``--write path`` rewrites, and a note when it is not ``path``: a README without the
    markers means the config reference beside it (the table's home since the README links to it)."""
    if START in path.read_text() or RESULTS_START in path.read_text():
        return path, None
    page = path.parent / PAGE
    if path.name == "README.md" and page.is_file() and START in page.read_text():
        return page, f"Note: {path} links to the config reference; the table is in {page}"
    raise SystemExit(f"Error: {path} has no {START} ... {END} block to rewrite; the table lives in {PAGE}")


def rewrite(readme: Path) -> bool:
    """Replace the generated blocks the file holds (the config table; the results index, read from the
    ``results/`` folder of the checkout the file is in); return True if the file changed."""
    text = readme.read_text()
    new = _replace(text, START, END, groups_markdown()) if START in text else text
    if RESULTS_START in new:
        root = next((p for p in readme.resolve().parents if (p / "results").is_dir()), Path.cwd())
        new = _replace(new, RESULTS_START, RESULTS_END, results_markdown(root / "results"))
    if new != text:
        readme.write_text(new)
    return new != text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, nargs="?", const=Path("."), metavar="FILE",
                        help=f"rewrite the generated blocks of FILE (default: {PAGE}, the config table, and "
                             f"{RESULTS_PAGE}, the index of results/)")
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
        for path, note in ([target(PAGE), target(RESULTS_PAGE)] if args.write == Path(".") else [target(args.write)]):
            if note:
                print(note)
            print(f"{path}: " + ("updated" if rewrite(path) else "up to date"))
    elif not args.write_conf:
        print(groups_markdown())


if __name__ == "__main__":
    main()
