"""Run an ``experiment=`` sweep on a many-core machine as parallel shards, one SQLite store each, then merge them.

    python scripts/shard_study.py --experiment bbob_small --jobs 16 --work /tmp/shard [--deadline-s 450] [-- overrides]

Why a script and not ``hydra/launcher=joblib``: SQLite takes one writer at a time and Hydra composes every job of
a sweep in the driver before the first starts (~3 CPU minutes for bbob_small's 936 jobs), so on 16 cores one sweep
into one SQLite file spends its time waiting. Here each *block* (one value of every swept key but ``algo``: one
task, instance and seed; all algorithms in turn, as the experiment orders them) is its own
``python -m hpoflow -m experiment=...`` process writing its own store ``<work>/<experiment>/blocks/<i>.db``;
``--jobs`` of them run at once, the costliest first (``--cost-key``: a swept key whose larger values cost more,
e.g. ``task.dim``). A block whose process exits 0 gets a ``.done`` file: re-running the same command resumes,
skipping done blocks. ``--deadline-s`` stops starting blocks after that many seconds and stops (SIGTERM: its runs
end KILLED) any still running then, so that the merge and the copy-out fit a lease.

The merge copies every table row keyed by ``run_uuid`` (runs, params, tags, metrics, latest_metrics, inputs) of
the done blocks into ``<work>/<experiment>/mlflow.db`` (a copy of the first done block), mapping experiment ids by
name. Artifacts need no copy: every block's store sits in the same folder, so their ``mlartifacts/`` is one.
Then ``python -m hpoflow.report experiment=<experiment> tracking.uri=sqlite:///<work>/<experiment>/mlflow.db``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

NOT_BLOCK_KEYS = ("algo",)
SKIP_TABLES = {"alembic_version", "experiments", "experiment_tags", "workspaces"}


def sweep_params(experiment: str) -> dict[str, list[str]]:
    """The experiment file's ``hydra.sweeper.params`` as {key: [values]} in file order (values as override text)."""
    from omegaconf import OmegaConf

    from hpoflow.config.schema import CONF_DIR

    path = Path(CONF_DIR) / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        allowed = sorted(p.stem for p in (Path(CONF_DIR) / "experiment").glob("*.yaml"))
        sys.exit(f"shard_study: --experiment '{experiment}' is not one of {allowed}")
    params = OmegaConf.load(path).hydra.sweeper.params
    return {str(k): [v.strip() for v in str(val).split(",")] for k, val in params.items()}


def apply_overrides(params: dict[str, list[str]], overrides: list[str],
                    others: set[str] = frozenset()) -> tuple[dict[str, list[str]], list[str]]:  # type: ignore[assignment]
    """Overrides of swept keys (``task.dim=2,5``) replace the experiment's values; the rest go to every block,
    except keys that only ``others`` (the other experiments of the invocation) sweep."""
    rest = []
    for o in overrides:
        key, _, value = o.partition("=")
        if key in others and key not in params:
            continue
        if key in params:
            params[key] = [v.strip() for v in value.split(",")]
        if key not in params or key in NOT_BLOCK_KEYS:
            rest.append(o)
    return params, rest


def plan_blocks(params: dict[str, list[str]], cost_key: str | None) -> list[dict[str, str]]:
    """One dict of block-key overrides per block, the costliest first when ``cost_key`` is numeric."""
    keys = [k for k in params if k not in NOT_BLOCK_KEYS]
    blocks = [dict(zip(keys, values, strict=True)) for values in itertools.product(*(params[k] for k in keys))]
    if cost_key:
        blocks.sort(key=lambda b: -float(b.get(cost_key, 0)))
    return blocks


def block_command(experiment: str, block: dict[str, str], store: Path, sweep_dir: Path,
                  extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "hpoflow", "-m", f"experiment={experiment}",
            *(f"{k}={v}" for k, v in block.items()), *extra,
            f"tracking.uri=sqlite:///{store}", f"hydra.sweep.dir={sweep_dir}"]


def run_blocks(queue: list[tuple[str, tuple[int, list[str]]]], work: Path, jobs: int,
               deadline: float) -> dict[str, int]:
    """Run ``queue`` ((experiment, (block index, argv))), ``jobs`` at a time, until done or ``deadline``
    (time.monotonic); a block that exits 0 gets ``<work>/<experiment>/blocks/<i>.done``."""
    queue = list(queue)
    template = work / "empty.db"  # one migrated empty store, copied per block: MLflow's migrations cost ~2 CPU s
    if not template.exists():
        from hpoflow.store.backend import make_client

        make_client(f"sqlite:///{template}").search_experiments()
    running: dict[Path, tuple[subprocess.Popen[bytes], Any]] = {}
    counts = {"done": 0, "failed": 0, "stopped": 0}
    while queue or running:
        while queue and len(running) < jobs and time.monotonic() < deadline:
            experiment, (i, argv) = queue.pop(0)
            stem = work / experiment / "blocks" / f"{i:04d}"
            if not stem.with_suffix(".db").exists():
                copy_store(template, stem.with_suffix(".db"))
            log = open(stem.with_suffix(".log"), "wb")  # noqa: SIM115 - closed when the block ends
            running[stem] = (subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT), log)
        if time.monotonic() >= deadline:
            queue.clear()
            for proc, _ in running.values():
                proc.send_signal(signal.SIGTERM)
            for proc, log in running.values():
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
                counts["stopped"] += 1
            running.clear()
            break
        for stem in [s for s, (proc, _) in running.items() if proc.poll() is not None]:
            proc, log = running.pop(stem)
            log.close()
            if proc.returncode == 0:
                stem.with_suffix(".done").touch()
                counts["done"] += 1
            else:
                counts["failed"] += 1
                print(f"shard_study: block {stem} exited {proc.returncode} (log {stem}.log)", file=sys.stderr)
        time.sleep(0.2)
    return counts


def copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite store, its write-ahead log included (a plain file copy would miss it)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()


def merge_stores(stores: list[Path], target: Path) -> int:
    """Merge the run-keyed rows of ``stores`` into ``target`` (a copy of the first); return the number of runs."""
    if not stores:
        return 0
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    copy_store(stores[0], target)
    dst = sqlite3.connect(target)
    names = {n: i for i, n in dst.execute("SELECT experiment_id, name FROM experiments")}
    for store in stores[1:]:
        dst.execute("ATTACH DATABASE ? AS b", (str(store),))
        for (_eid, name, loc, stage, created, updated, *_ws) in dst.execute("SELECT * FROM b.experiments").fetchall():
            if name not in names:
                cur = dst.execute("INSERT INTO experiments (name, artifact_location, lifecycle_stage, creation_time, "
                                  "last_update_time) VALUES (?, ?, ?, ?, ?)", (name, loc, stage, created, updated))
                names[name] = cur.lastrowid
        id_map = {eid: names[name] for eid, name in dst.execute("SELECT experiment_id, name FROM b.experiments")}
        tables = [t for (t,) in dst.execute("SELECT name FROM b.sqlite_master WHERE type='table'")
                  if t not in SKIP_TABLES]
        for table in tables:
            cols = [r[1] for r in dst.execute(f"PRAGMA b.table_info('{table}')")]
            if "run_uuid" not in cols:
                if dst.execute(f"SELECT count(*) FROM b.'{table}'").fetchone()[0]:
                    print(f"shard_study: table {table} of {store.name} has rows not keyed by run; left out",
                          file=sys.stderr)
                continue
            col_list = ", ".join(cols)
            if table == "runs":
                case = " ".join(f"WHEN {old} THEN {new}" for old, new in id_map.items())
                select = col_list.replace("experiment_id", f"CASE experiment_id {case} END")
            else:
                select = col_list
            dst.execute(f"INSERT OR IGNORE INTO main.'{table}' ({col_list}) SELECT {select} FROM b.'{table}'")
        dst.commit()
        dst.execute("DETACH DATABASE b")
    n = dst.execute("SELECT count(*) FROM runs").fetchone()[0]
    dst.close()
    return int(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--experiment", required=True, help="one or more, comma-separated: their blocks share the jobs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--work", type=Path, required=True, help="folder of the block stores, logs and merged stores")
    ap.add_argument("--deadline-s", type=float, default=float("inf"))
    ap.add_argument("--cost-key", default=None, help="a swept key whose larger values cost more (run first)")
    ap.add_argument("--merge-only", action="store_true")
    ap.add_argument("overrides", nargs="*", help="after --: overrides for every block (swept keys: new values)")
    args = ap.parse_args(argv)
    start = time.monotonic()
    plans: dict[str, list[tuple[int, list[str]]]] = {}
    sizes: dict[str, int] = {}
    declared = {e: sweep_params(e) for e in args.experiment.split(",")}
    swept = {k for params in declared.values() for k in params}
    for experiment, declared_params in declared.items():
        params, extra = apply_overrides(declared_params, list(args.overrides), swept)
        blocks = plan_blocks(params, args.cost_key)
        root = (args.work / experiment).resolve()
        (root / "blocks").mkdir(parents=True, exist_ok=True)
        (root / "plan.txt").write_text("".join(f"{i:04d} {b}\n" for i, b in enumerate(blocks)))
        plans[experiment] = [(i, block_command(experiment, b, root / "blocks" / f"{i:04d}.db",
                                               root / "hydra" / f"{i:04d}", extra))
                             for i, b in enumerate(blocks) if not (root / "blocks" / f"{i:04d}.done").exists()]
        sizes[experiment] = len(blocks)
        print(f"shard_study: {experiment}: {len(blocks)} blocks, {len(blocks) - len(plans[experiment])} done "
              f"before, {len(plans[experiment])} to run", flush=True)
    # round-robin over the experiments' own (costliest-first) orders: every study advances, big blocks start early
    queue = [item for group in itertools.zip_longest(*([(e, j) for j in jobs] for e, jobs in plans.items()))
             for item in group if item is not None]
    if queue and not args.merge_only:
        counts = run_blocks(queue, args.work.resolve(), args.jobs, start + args.deadline_s)
        print(f"shard_study: {counts} in {time.monotonic() - start:.0f} s, {args.jobs} at a time", flush=True)
    complete = True
    for experiment, size in sizes.items():
        root = (args.work / experiment).resolve()
        done = sorted(root / "blocks" / p.name.replace(".done", ".db") for p in (root / "blocks").glob("*.done"))
        n = merge_stores(done, root / "mlflow.db")
        print(f"shard_study: {experiment}: merged {len(done)} of {size} blocks, {n} runs, into {root / 'mlflow.db'}")
        complete &= len(done) == size
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
