"""A study's store with some methods' runs replaced by newer runs of the same grid (an algorithm's new default).

    python scripts/swap_runs.py --base old.db --out new.db --drop gp_ei,auto \
        --add ablation.db:surrogate.output_transform=power:seed=0,1 --add auto_rerun.db

Copies ``--base`` (a SQLite MLflow store) to ``--out``, deletes the runs of the ``--drop`` algorithms (``algo.name``)
with every row that names them, then merges each ``--add`` store's runs into it (``PATH[:KEY=V1,V2...]...``: only
the runs whose parameter ``KEY`` is one of the values, every filter applying; runs of experiments of the same name
land in the same experiment, as :func:`scripts.shard_study.merge_stores` does). Then
``python -m hpoflow.report experiment=<name> tracking.uri=sqlite:///new.db`` reports the grid with the new runs.
Why: a full grid takes a borrowed 16-core machine; a default that changes one algorithm re-runs only its rows.
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's root
from scripts.shard_study import copy_store, merge_stores  # noqa: E402


def run_ids(db: sqlite3.Connection, filters: dict[str, set[str]]) -> set[str]:
    """The runs whose parameters match every filter (``KEY``: allowed values)."""
    ids = {r for (r,) in db.execute("SELECT run_uuid FROM runs")}
    for key, values in filters.items():
        ids &= {r for r, v in db.execute("SELECT run_uuid, value FROM params WHERE key = ?", (key,)) if v in values}
    return ids


def delete_runs(db: sqlite3.Connection, ids: set[str]) -> None:
    """Every row keyed by one of ``ids`` (in every table with a ``run_uuid`` column)."""
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if any(col[1] == "run_uuid" for col in db.execute(f"PRAGMA table_info('{t}')"))]
    for table in tables:
        db.executemany(f"DELETE FROM {table} WHERE run_uuid = ?", [(i,) for i in ids])  # noqa: S608 - our names
    db.commit()


def parse_add(spec: str) -> tuple[Path, dict[str, set[str]]]:
    path, *parts = spec.split(":")
    filters = {}
    for part in parts:
        key, sep, values = part.partition("=")
        if not sep:
            raise SystemExit(f"swap_runs: --add filter {part!r} is not KEY=V1,V2,...")
        filters[key] = set(values.split(","))
    return Path(path), filters


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--drop", default="", help="comma-separated algo.name values whose runs go")
    ap.add_argument("--add", action="append", default=[], help="PATH[:KEY=V1,V2...]...: runs to merge in")
    args = ap.parse_args(argv)
    for path in [args.base, *(parse_add(a)[0] for a in args.add)]:
        if not path.is_file():
            raise SystemExit(f"swap_runs: {path} is not a file")
    args.out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        base = Path(tmp) / "base.db"
        copy_store(args.base, base)
        db = sqlite3.connect(base)
        dropped = run_ids(db, {"algo.name": set(filter(None, args.drop.split(",")))}) if args.drop else set()
        delete_runs(db, dropped)
        db.close()
        parts.append(base)
        added = 0
        for i, spec in enumerate(args.add):
            path, filters = parse_add(spec)
            part = Path(tmp) / f"add{i}.db"
            copy_store(path, part)
            db = sqlite3.connect(part)
            keep = run_ids(db, filters)
            delete_runs(db, run_ids(db, {}) - keep)
            db.close()
            added += len(keep)
            parts.append(part)
        n = merge_stores(parts, args.out)
    print(f"swap_runs: {len(dropped)} runs dropped, {added} added: {n} runs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
