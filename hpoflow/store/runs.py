"""``python -m hpoflow.store.runs stale``: find RUNNING runs whose writer is gone, and optionally mark them FAILED.

A run whose process was SIGKILLed, lost its machine or was preempted stays RUNNING in MLflow for ever.
Every hpoflow writer holds a lease with a heartbeat (``hpoflow.store.lease``); a RUNNING run whose lease
is dead (heartbeat older than the grace period, or its pid gone on this host) is *stale*, like a trial
that Optuna's ``fail_stale_trials`` fails. RUNNING runs without an hpoflow lease (another tool, an older
hpoflow) are counted but never touched.

Usage::

    python -m hpoflow.store.runs stale [tracking.uri=URI] [tracking.experiment=NAME] [--grace-s=S] [--mark-failed]

Exit status: 0 (also when stale runs are found), 2 bad arguments or unreachable store.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
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
    stale, unleased = [], 0
    if not names:
        return stale, unleased
    token = None
    while True:
        page = retry(lambda token=token: client.search_runs(list(names), "attributes.status = 'RUNNING'",
                                                            max_results=1000, page_token=token))
        for run in page:
            lease = Lease.from_tags(run.data.tags)
            if lease is None:
                unleased += 1
            elif not lease.alive(now=now, grace_s=grace_s):
                stale.append(StaleRun(run.info.run_id, names[run.info.experiment_id], run.info.run_name or "", lease))
        token = page.token
        if not token:
            return stale, unleased


def mark_failed(client: Any, run: StaleRun, now: float | None = None) -> None:
    """Set the run FAILED with the reason in its ``error`` tag (MLflow's status, as a crash would leave it)."""
    from hpoflow.store.backend import retry

    retry(lambda: client.set_tag(run.run_id, "error", STALE_ERROR.format(lease=run.lease.describe(now))))
    retry(lambda: client.set_terminated(run.run_id, status="FAILED"))


def _parse(argv: list[str]) -> tuple[argparse.Namespace, dict[str, str]]:
    parser = argparse.ArgumentParser(prog="python -m hpoflow.store.runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["stale"])
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
    experiments = keys["tracking.experiment"].split(",") if keys.get("tracking.experiment") else None
    now = time.time()
    try:
        client = make_client(uri)
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


if __name__ == "__main__":
    sys.exit(main())
