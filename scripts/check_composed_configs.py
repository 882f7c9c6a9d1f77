"""Same composed configs before and after a change to the config files: every group option, alone and in pairs.

``python scripts/check_composed_configs.py --against <git rev>`` composes (``hpoflow.config.compose.compose``,
exactly what ``python -m hpoflow <overrides>`` resolves) every option of conf/algo, surrogate, task, hardware,
tracking and experiment on its own, every algorithm with every surrogate (``--all-pairs``: and with every
task, 4x the time) and a few preset overrides, in this tree and at ``rev`` (``git archive`` of its
``hpoflow/`` and ``conf/``, in a subprocess), and prints the compositions that differ and the count of identical
ones. A composition that fails is compared by its one-line error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: --against's revision comes first
from scripts.bench_common import add_against_arguments, answered_as_child, measure_with_against, pin_threads

pin_threads()
GROUPS = ("algo", "surrogate", "task", "hardware", "tracking", "experiment")
EXTRA = (("algo=gp_ucb", "algo.preset=skopt"), ("algo=gp_ei", "algo.preset=skopt"),
         ("algo=go_ucb", "algo.preset=paper"), ("algo=go_ucb_paper", "surrogate=gp"))


def cases(all_pairs: bool = False) -> list[tuple[str, ...]]:
    """Every composition this script compares, from the option files of the tree that runs it."""
    from hpoflow.config.schema import CONF_DIR

    options = {g: sorted(p.stem for p in (CONF_DIR / g).glob("*.yaml")) for g in GROUPS}
    out: list[tuple[str, ...]] = [(f"{g}={o}",) for g in GROUPS for o in options[g]]
    out += [(f"algo={a}", f"{g}={o}") for a in options["algo"] for g in ("surrogate", "task")[:1 + all_pairs]
            for o in options[g]]
    return out + list(EXTRA)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from hpoflow.config.compose import compose
    from hpoflow.config.settings import ConfigError

    out: dict[str, Any] = {}
    for overrides in cases(args.all_pairs):
        try:
            out[" ".join(overrides)] = compose(list(overrides))
        except ConfigError as exc:
            out[" ".join(overrides)] = f"ConfigError: {exc}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all-pairs", action="store_true", help="also every algorithm with every task")
    add_against_arguments(parser)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return
    print(f"# python scripts/check_composed_configs.py {' '.join(sys.argv[1:])}")
    results = measure_with_against(args, measure, __file__)
    now = results.pop("now")
    for label, other in results.items():
        for key in sorted(set(now) | set(other)):
            if key not in now or key not in other:
                print(f"{key}: only {'in this tree' if key in now else 'at ' + label}")
            elif now[key] != other[key]:
                print(f"{key}: differs")
        same = sum(key in other and now[key] == other[key] for key in now)
        verdict = "all identical" if same == len(now) == len(other) else f"{same} identical"
        print(f"# this tree vs {label}: {len(now)} compositions ({len(other)} there), {verdict}")
    if not results:
        print(f"# {len(now)} compositions, {sum(isinstance(v, str) for v in now.values())} refused")


if __name__ == "__main__":
    main()
