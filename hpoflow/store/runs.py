"""``python -m hpoflow.store.runs stale``: find RUNNING runs whose writer is gone, and optionally mark them FAILED.

A run whose process was SIGKILLed, lost its machine or was preempted stays RUNNING in MLflow for ever.
Every hpoflow writer holds a lease with a heartbeat (``hpoflow.store.lease``); a RUNNING run whose lease
is dead (heartbeat older than the grace period, or its pid gone on this host) is *stale*, like a trial
that Optuna's ``fail_stale_trials`` fails. RUNNING runs without an hpoflow lease (another tool, an older
hpoflow) are counted but never touched.

``writers`` lists the RUNNING runs whose writer is alive, with its host and pid (``--pids``: the pids only, e.g. to
stop one job of a cluster study by hand; ``--wait-s=S``: wait up to S seconds for at least one, and give up
sooner when the process ``--while-pid=PID`` names (the sweep) has ended; finding none then is an error).

Usage::

    python -m hpoflow.store.runs stale [tracking.uri=URI] [tracking.experiment=NAME] [--grace-s=S] [--mark-failed]
    python -m hpoflow.store.runs writers [tracking.uri=URI] [tracking.experiment=NAME] [--pids] [--wait-s=S]
                                         [--while-pid=PID]

Exit status: 0 (also when stale runs are found), 1 ``writers --wait-s`` found no writer in time (or the process
of ``--while-pid`` ended first), 2 bad arguments or unreachable store.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from hpoflow.store.lease import Lease, grace_for

STALE_ERROR = "stale: its writer is gone ({lease}); marked FAILED by python -m hpoflow.store.runs stale --mark-failed"


@dataclass(frozen=True)
class StaleRun:
    run_id: str
    experiment: str
    name: str
    lease: Lease


def find_stale(client: Any, experiments: list[str] | None = None, grace_s: float | None = None,
               now: float | None = None) -> tuple[list[StaleRun], int]:
    """RUNNING runs with a dead lease, and the number of RUNNING runs without an hpoflow lease."""
    from mlflow.entities import ViewType

    from hpoflow.store.backend import retry

    exps = retry(lambda: client.search_experiments(view_type=ViewType.ACTIVE_ONLY, max_results=10_000))
    names = {e.experiment_id: e.name for e in exps if experiments is None or e.name in experiments}
    stale: list[StaleRun] = []
    unleased = 0
    if not names:
        return stale, unleased
    token = None
    while True:
        page = retry(partial(client.search_runs, list(names), "attributes.status = 'RUNNING'", max_results=1000,
                             page_token=token))
        for run in page:
            lease = Lease.from_tags(run.data.tags)
            if lease is None:
                unleased += 1
            elif not lease.alive(now=now, grace_s=grace_s):
                stale.append(StaleRun(run.info.run_id, names[run.info.experiment_id], run.info.run_name or "", lease))
        token = page.token
        if not token:
            return stale, unleased


def find_writers(client: Any, experiments: list[str] | None = None) -> list[tuple[str, str, Lease]]:
    """``(run id, experiment/name, lease)`` of the RUNNING runs whose writer's lease is alive."""
    from mlflow.entities import ViewType

    from hpoflow.store.backend import retry

    exps = retry(lambda: client.search_experiments(view_type=ViewType.ACTIVE_ONLY, max_results=10_000))
    names = {e.experiment_id: e.name for e in exps if experiments is None or e.name in experiments}
    if not names:
        return []
    runs = retry(lambda: client.search_runs(list(names), "attributes.status = 'RUNNING'", max_results=10_000))
    out = []
    for run in runs:
        lease = Lease.from_tags(run.data.tags)
        if lease is not None and lease.alive():
            out.append((run.info.run_id, f"{names[run.info.experiment_id]}/{run.info.run_name or ''}", lease))
    return out


def mark_failed(client: Any, run: StaleRun, now: float | None = None) -> None:
    """Set the run FAILED with the reason in its ``error`` tag (MLflow's status, as a crash would leave it)."""
    from hpoflow.store.backend import retry

    retry(lambda: client.set_tag(run.run_id, "error", STALE_ERROR.format(lease=run.lease.describe(now))))
    retry(lambda: client.set_terminated(run.run_id, status="FAILED"))


def _parse(argv: list[str]) -> tuple[argparse.Namespace, dict[str, str]]:
    parser = argparse.ArgumentParser(prog="python -m hpoflow.store.runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["stale", "writers"])
    parser.add_argument("--pids", action="store_true", help="writers: print the writers' pids only")
    parser.add_argument("--wait-s", type=float, default=0.0, help="writers: wait up to S seconds for one")
    parser.add_argument("--while-pid", type=int, default=None,
                        help="writers: stop waiting as soon as this process (the sweep) has ended")
    parser.add_argument("--mark-failed", action="store_true", help="mark every stale run FAILED")
    parser.add_argument("--grace-s", type=float, default=None,
                        help="seconds without heartbeat after which a writer is dead (default: max(3 x its "
                             "heartbeat_s, 30))")
    args, rest = parser.parse_known_args(argv)
    keys = {}
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep or key not in ("tracking.uri", "tracking.experiment"):
            raise SystemExit(f"Error: '{item}' is not a setting; allowed: tracking.uri=URI, tracking.experiment=NAME, "
                             "--grace-s=S, --mark-failed")
        keys[key] = value
    if args.grace_s is not None and not args.grace_s > 0:
        raise SystemExit(f"Error: --grace-s={args.grace_s} must be > 0")
    if not args.wait_s >= 0:
        raise SystemExit(f"Error: --wait-s={args.wait_s} must be >= 0 (seconds)")
    if args.while_pid is not None and args.while_pid < 1:
        raise SystemExit(f"Error: --while-pid={args.while_pid} must be a process id (>= 1)")
    return args, keys


def main(argv: list[str] | None = None) -> int:
    try:
        args, keys = _parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 2
        raise
    from hpoflow.store.backend import default_uri, make_client
    from hpoflow.store.params import mask_secrets

    uri = keys.get("tracking.uri") or default_uri()
    from hpoflow.config.validation import uri_scheme_problem

    problem = uri_scheme_problem(uri)
    if problem:
        print(f"Error: {mask_secrets(problem)}", file=sys.stderr)
        return 2
    experiments = keys["tracking.experiment"].split(",") if keys.get("tracking.experiment") else None
    now = time.time()
    try:
        client = make_client(uri)
        if args.command == "writers":
            return _print_writers(client, experiments, args.pids, args.wait_s, args.while_pid)
        stale, unleased = find_stale(client, experiments, args.grace_s, now)
    except Exception as exc:  # noqa: BLE001 - unreachable or unreadable store: one line
        print(f"Error: tracking.uri={mask_secrets(uri)!r}: cannot read the store "
              f"({mask_secrets(str(exc)).splitlines()[0][:300] if str(exc) else type(exc).__name__})", file=sys.stderr)
        return 2
    for run in stale:
        print(f"{run.run_id}  {run.experiment}/{run.name}  RUNNING, writer gone: {run.lease.describe(now)}"
              + ("  -> FAILED" if args.mark_failed else ""))
        if args.mark_failed:
            mark_failed(client, run, now)
    grace = f"{args.grace_s:.0f} s" if args.grace_s else f"max(3 x heartbeat, {grace_for(0):.0f} s)"
    print(f"{len(stale)} stale run(s) in {mask_secrets(uri)} (grace {grace})"
          + (", marked FAILED" if args.mark_failed and stale else "")
          + (f"; {unleased} RUNNING run(s) without an hpoflow lease left alone" if unleased else ""))
    return 0


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): signal 0 tells whether it exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _print_writers(client: Any, experiments: list[str] | None, pids: bool, wait_s: float,
                   while_pid: int | None = None) -> int:
    start = time.monotonic()
    deadline = start + wait_s
    ended = False
    while True:
        try:
            writers = find_writers(client, experiments)
        except Exception:  # noqa: BLE001 - the experiment may not exist yet while waiting
            if time.monotonic() >= deadline:
                raise
            writers = []
        ended = while_pid is not None and not _alive(while_pid)
        if writers or ended or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    for run_id, name, lease in writers:
        print(lease.pid if pids else f"{lease.pid}  {lease.host}  {run_id}  {name}")
    if writers or wait_s == 0:
        return 0
    where = f"tracking.experiment={','.join(experiments)}" if experiments else "the store"
    why = (f"process {while_pid} (--while-pid) ended after {time.monotonic() - start:.0f} s" if ended
           else f"waited {wait_s:g} s (--wait-s)")
    print(f"Error: no RUNNING run with a live writer in {where}: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
