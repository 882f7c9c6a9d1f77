"""The run lease against a real SQLite store: read, alive/dead, acquire, release, heartbeat, take-over."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from hpoflow.store import lease as L
from hpoflow.store.backend import make_client


@pytest.fixture
def client(store):
    return make_client(store)


def _run(client, lease: L.Lease | None = None) -> str:
    from hpoflow.store.backend import get_or_create_experiment

    exp = get_or_create_experiment(client, "lease", None)
    return client.create_run(exp, tags=lease.tags() if lease else {}).info.run_id


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_lease_round_trips_through_tags_and_ages(client):
    mine = L.Lease.mine(5.0)
    run_id = _run(client, mine)
    read = L.read_lease(client, run_id)
    assert read.owner == mine.owner and read.pid == mine.pid and read.interval_s == 5.0
    assert abs(read.heartbeat - mine.heartbeat) < 1e-2
    assert read.alive() and read.age(now=read.heartbeat + 7) == pytest.approx(7)
    assert not read.alive(now=read.heartbeat + L.grace_for(5.0) + 1)  # heartbeat too old
    assert L.grace_for(5.0) == L.MIN_GRACE_S and L.grace_for(20.0) == 60.0
    assert L.read_lease(client, _run(client)) is None


def test_a_writer_on_this_host_whose_pid_is_gone_is_dead_at_once():
    lease = L.Lease.mine()
    gone = L.Lease(lease.owner, lease.host, _dead_pid(), time.time(), 10.0)
    assert lease.alive() and not gone.alive()
    elsewhere = L.Lease(lease.owner, "another-host", gone.pid, time.time(), 10.0)
    assert elsewhere.alive()  # a pid on another machine says nothing: only the heartbeat counts there


def test_acquire_refuses_a_live_lease_naming_its_owner_and_takes_over_a_dead_one(client):
    live = L.Lease.mine()
    run_id = _run(client, L.Lease(uuid := "a" * 32, live.host, live.pid, time.time(), 10.0))
    with pytest.raises(L.LeaseHeld, match=f"owner {uuid[:8]} \\(pid {live.pid}"):
        L.acquire(client, run_id)
    L._write(client, run_id, L.Lease(uuid, live.host, _dead_pid(), time.time(), 10.0))  # the writer died
    taken = L.acquire(client, run_id, interval_s=3.0)
    assert L.read_lease(client, run_id).owner == taken.owner != uuid
    assert L.acquire(client, run_id, owner=taken.owner).owner == taken.owner  # re-acquiring one's own lease


def test_acquire_never_reopens_a_finished_run(client):
    run_id = _run(client)
    client.set_terminated(run_id, "FINISHED")
    with pytest.raises(L.RunFinished, match="FINISHED"):
        L.acquire(client, run_id)


def test_release_drops_only_ones_own_lease(client):
    mine = L.Lease.mine()
    run_id = _run(client, mine)
    L.release(client, run_id, L.Lease.mine())  # not ours: kept
    assert L.read_lease(client, run_id).owner == mine.owner
    L.release(client, run_id, mine)
    assert L.read_lease(client, run_id) is None and not any(k.startswith(L.PREFIX) and k != L.EPOCH for k in
                                                           client.get_run(run_id).data.tags)


def test_heartbeat_refreshes_and_detects_a_take_over(client):
    mine = L.Lease.mine(0.05)
    run_id = _run(client, L.Lease(mine.owner, mine.host, mine.pid, 0.0, 0.05))  # an ancient heartbeat
    beat = L.Heartbeat(client, run_id, mine).start()
    deadline = time.time() + 60
    while L.read_lease(client, run_id).heartbeat == 0.0 and time.time() < deadline:
        time.sleep(0.05)
    assert L.read_lease(client, run_id).heartbeat > 0.0 and beat.error is None
    L._write(client, run_id, L.Lease.mine())  # someone else took the run over
    while beat.error is None and time.time() < deadline:
        time.sleep(0.05)
    beat.stop()
    with pytest.raises(L.LeaseLost, match="taken over"):
        beat.raise_if_failed()


def test_a_failing_check_stops_the_heartbeat_with_its_error(client):
    from hpoflow.store.health import StoreLost

    mine = L.Lease.mine(0.05)
    run_id = _run(client, mine)

    def check() -> None:
        raise StoreLost("the MLflow store x vanished during the run")

    beat = L.Heartbeat(client, run_id, mine, check=check).start()
    deadline = time.time() + 60
    while beat.error is None and time.time() < deadline:
        time.sleep(0.05)
    beat.stop()
    assert isinstance(beat.error, StoreLost)
