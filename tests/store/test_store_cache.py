"""What a process remembers about its stores (issue 27: a warm worker runs many jobs): each experiment id is
looked up once per store, a store replaced in place is a new store, the git commit is asked once per folder,
and a FINISHED run skips the lease release while FAILED and KILLED runs still release it."""
from __future__ import annotations

import os
import subprocess

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.runner import build
from hpoflow.runner.loop import Budget, ObjectiveError, run
from hpoflow.store import backend
from hpoflow.store import lease as L
from hpoflow.store.mlflow_tracker import MlflowTracker
from tests.runner.test_loop import Flaky, _algo


@pytest.fixture
def lookups(monkeypatch):
    """Count MlflowClient.get_experiment_by_name calls (per store URI), from a forgotten cache."""
    backend.forget_stores()
    calls: list[str] = []
    original = MlflowClient.get_experiment_by_name

    def counted(self, name):
        calls.append(str(self.tracking_uri))
        return original(self, name)

    monkeypatch.setattr(MlflowClient, "get_experiment_by_name", counted)
    yield calls
    backend.forget_stores()


def _finished_run(uri: str, experiment: str = "exp") -> MlflowTracker:
    task = Flaky()
    tracker = MlflowTracker(uri, experiment, "r")
    tracker.start({"task": {"name": "flaky"}}, {"algo": "random"})
    run(task, _algo(task), tracker, Budget(3))
    return tracker


def test_an_experiment_is_looked_up_once_per_store_and_again_in_another_store(tmp_path, lookups):
    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    first, second = _finished_run(a), _finished_run(a)
    assert first.experiment_id == second.experiment_id
    assert lookups == [a]  # the first run created it: later runs of this process know its id
    _finished_run(b)
    assert lookups == [a, b]  # another tracking.uri: looked up there
    assert len(MlflowClient(a).search_runs([first.experiment_id])) == 2


def test_a_store_replaced_at_the_same_path_is_a_new_store(tmp_path):
    db = tmp_path / "m.db"
    uri = f"sqlite:///{db}"
    db.write_bytes(b"")
    first = backend.store_identity(uri)
    db.unlink()
    db.write_bytes(b"")  # its inode is held open: the new file cannot get the same number
    assert backend.store_identity(uri) != first and backend.store_identity(uri) == backend.store_identity(uri)
    assert backend.store_identity("http://127.0.0.1:5000") == ("http://127.0.0.1:5000", 0, 0)


def test_a_deleted_experiment_is_still_refused(tmp_path, lookups):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    tracker = _finished_run(uri, "gone")
    MlflowClient(uri).delete_experiment(tracker.experiment_id)
    backend.forget_stores()  # a new process
    with pytest.raises(Exception, match="tracking.experiment='gone' was deleted"):
        _finished_run(uri, "gone")


def test_finished_runs_keep_their_lease_tags_failed_and_killed_ones_release_them(store, monkeypatch):
    deletes: list[str] = []
    original = MlflowClient.delete_tag
    monkeypatch.setattr(MlflowClient, "delete_tag", lambda self, run_id, key: (deletes.append(key),
                                                                                original(self, run_id, key))[1])
    done = _finished_run(store)
    client = MlflowClient(store)
    assert client.get_run(done.run_id).info.status == "FINISHED" and deletes == []  # never re-opened: no release
    with pytest.raises(L.RunFinished):
        L.acquire(client, done.run_id)
    for kind, task in (("FAILED", Flaky(raise_on={2})), ("KILLED", Flaky(interrupt_on={2}))):
        tracker = MlflowTracker(store, "exp", kind)
        tracker.start({"task": {"name": "flaky"}}, {"algo": "random"})
        with pytest.raises((ObjectiveError, KeyboardInterrupt)):
            from hpoflow.core.records import OnError

            run(task, _algo(task), tracker, Budget(5), on_error=OnError.FAIL)
        assert client.get_run(tracker.run_id).info.status == kind
        assert L.read_lease(client, tracker.run_id) is None  # released: a resume may take it over at once
        assert L.acquire(client, tracker.run_id).epoch == 2  # and the fencing epoch goes on


def test_the_git_commit_is_asked_once_per_folder(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(build, "_COMMITS", {})
    monkeypatch.setattr(build.subprocess, "run", lambda *a, **k: (calls.append(os.getcwd()),
                                                                   subprocess.CompletedProcess(a, 0, "abc\n", ""))[1])
    assert build._git_commit() == build._git_commit() == "abc" and len(calls) == 1
    monkeypatch.chdir(tmp_path)
    assert build._git_commit() == "abc" and calls == [calls[0], str(tmp_path)]


def test_bulk_reads_get_a_patient_timeout_unless_the_user_chose_one(monkeypatch):
    key = "MLFLOW_HTTP_REQUEST_TIMEOUT"
    monkeypatch.setenv(key, backend.HTTP_DEFAULTS[key])  # hpoflow's default (a dead server fails fast)
    with backend.patient_http():
        assert os.environ[key] == backend.BULK_READ_TIMEOUT_S
    assert os.environ[key] == backend.HTTP_DEFAULTS[key]
    monkeypatch.setenv(key, "42")  # the user's own value wins
    with backend.patient_http():
        assert os.environ[key] == "42"
    monkeypatch.delenv(key)
    with backend.patient_http():
        assert os.environ[key] == backend.BULK_READ_TIMEOUT_S
    assert key not in os.environ
