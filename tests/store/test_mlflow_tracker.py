"""The MLflow tracker against a real SQLite store: batching, statuses, artifacts, redaction."""
from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.records import OnError
from hpoflow.runner.loop import Budget, ObjectiveError, run
from hpoflow.store.mlflow_tracker import MlflowTracker
from hpoflow.store.params import REDACTED, to_mlflow_params
from tests.runner.test_loop import Flaky, _algo


def _tracker(uri, **kw):
    t = MlflowTracker(uri, "flaky", "r", **kw)
    t.start(
        {"task": {"name": "flaky"}, "budget": {"rounds": 10}, "tracking": {"password": "hunter2"}}, {"algo": "random"}
    )
    return t


def test_failed_run_is_marked_failed_with_every_earlier_step(store):
    task, tracker = Flaky(raise_on={6}), _tracker(store, flush_every=100)
    with pytest.raises(ObjectiveError):
        run(task, _algo(task), tracker, Budget(10), on_error=OnError.FAIL)
    client = MlflowClient(tracking_uri=store)
    run_ = client.get_run(tracker.run_id)
    assert run_.info.status == "FAILED" and "simulated crash" in run_.data.tags["error"]
    assert [m.step for m in client.get_metric_history(tracker.run_id, "query_cost")] == [1, 2, 3, 4, 5, 6]
    assert run_.data.params["tracking.password"] == REDACTED


def test_killed_run_status(store):
    task, tracker = Flaky(interrupt_on={2}), _tracker(store)
    with pytest.raises(KeyboardInterrupt):
        run(task, _algo(task), tracker, Budget(10))
    assert MlflowClient(tracking_uri=store).get_run(tracker.run_id).info.status == "KILLED"


def test_metrics_are_written_in_batches(store, monkeypatch):
    task, tracker = Flaky(), _tracker(store, flush_every=4, flush_seconds=1e9)
    calls = []
    original = tracker.client.log_batch
    monkeypatch.setattr(tracker.client, "log_batch", lambda *a, **k: (calls.append(k), original(*a, **k))[1])
    run(task, _algo(task), tracker, Budget(10))
    metric_calls = [c for c in calls if c.get("metrics")]
    assert len(metric_calls) == 3  # rounds 1-4, 5-8, and the rest at finish
    hist = MlflowClient(tracking_uri=store).get_metric_history(tracker.run_id, "value")
    assert [m.step for m in hist] == list(range(1, 11))


def test_finish_writes_last_metrics_and_final_tags_in_one_batch_and_artifacts_in_one_call(store, monkeypatch):
    task, tracker = Flaky(), _tracker(store, flush_every=100, flush_seconds=1e9)
    calls = []
    for owner, name in ((tracker.client, "log_batch"), (tracker.client, "set_tag"), (tracker.client, "get_run"),
                        (tracker.artifact_store, "log_artifact"), (tracker.artifact_store, "log_artifacts")):
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _n=name, _o=original, **k: (calls.append((_n, k)), _o(*a, **k))[1])
    run(task, _algo(task), tracker, Budget(10))
    # the artifacts go to the run's repository as create_run gave it (MlflowClient would read the run for it
    # first); the one get_run is the read-back after the status
    assert [name for name, _ in calls] == ["log_batch", "log_artifacts", "get_run"]
    assert {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(tracker.run_id)} >= {
        "config.yaml", "summary.json", "trajectory.csv"}
    (_, batch), _, _ = calls
    assert len(batch["metrics"]) > 10 and {t.key for t in batch["tags"]} >= {"final.best_value"}
    client = MlflowClient(tracking_uri=store)
    run_ = client.get_run(tracker.run_id)
    assert float(run_.data.tags["final.best_value"]) == run_.data.metrics["best_value"]
    assert {a.path for a in client.list_artifacts(tracker.run_id)} == {"config.yaml", "summary.json",
                                                                       "trajectory.csv"}


def test_plots_when_asked_for_include_the_regret_plot_and_the_writers_files(store):
    task, tracker = Flaky(), _tracker(store, plots=True)
    tracker.add_artifact_writer(lambda folder: [(folder / "extra.txt").write_text("x") and folder / "extra.txt"])
    run(task, _algo(task), tracker, Budget(4))
    names = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(tracker.run_id)}
    assert {"regret.png", "extra.txt", "trajectory.csv"} <= names


def test_secret_like_keys_are_redacted():
    params = to_mlflow_params({"db": {"password": "x", "api_key": "y", "keys": 3}, "token": "z", "monkey": 1})
    assert params["db.password"] == params["db.api_key"] == params["token"] == REDACTED
    assert params["db.keys"] == "3" and params["monkey"] == "1"


def test_secrets_in_uris_and_key_variants_are_redacted():
    params = to_mlflow_params({"tracking": {"uri": "postgresql+psycopg2://mlflow:s3cret@127.0.0.1:5433/mlflow"},
                               "apikey": "a", "AWS_ACCESS_KEY": "b", "server": "http://127.0.0.1:5000",
                               "keyboard": "qwerty"})
    assert params["tracking.uri"] == "postgresql+psycopg2://mlflow:***@127.0.0.1:5433/mlflow"
    assert params["apikey"] == params["AWS_ACCESS_KEY"] == REDACTED
    assert params["server"] == "http://127.0.0.1:5000" and params["keyboard"] == "qwerty"


def test_config_artifact_is_redacted_too(store, tmp_path):
    from hpoflow.core.records import RunStatus

    tracker = _tracker(store)
    tracker.finish(RunStatus.FINISHED, {})
    client = MlflowClient(tracking_uri=store)
    text = open(client.download_artifacts(tracker.run_id, "config.yaml", str(tmp_path))).read()
    assert "password: '***'" in text and "hunter2" not in text


def test_uri_passwords_and_secret_assignments_are_masked_in_any_text():
    from hpoflow.store.params import mask_secrets

    text = ("API request to http://bob:hunter2@127.0.0.1:1/api failed; https://ghp_tok@github.com/x "
            "tracking.password=hunter2,seed=1 auth=abc author=me sqlite:////tmp/a@b.db")
    masked = mask_secrets(text)
    assert "hunter2" not in masked and "ghp_tok" not in masked and "abc" not in masked
    assert "http://bob:***@127.0.0.1:1/api" in masked and "https://***@github.com" in masked
    assert "author=me" in masked and "sqlite:////tmp/a@b.db" in masked


def test_widened_secret_keys():
    params = to_mlflow_params({"passphrase": "a", "auth": "b", "pwd": "c", "credentials": "d", "client_secret": "e",
                               "refresh_token": "f", "basic_auth": "g", "author": "h", "pwdx": "i"})
    assert all(params[k] == REDACTED for k in ("passphrase", "auth", "pwd", "credentials", "client_secret",
                                               "refresh_token", "basic_auth"))
    assert params["author"] == "h" and params["pwdx"] == "i"


def test_hydra_files_are_masked_in_place(tmp_path):
    from hpoflow.store.params import redact_text_file

    path = tmp_path / "config.yaml"
    path.write_text("tracking:\n  uri: http://bob:hunter2@h:1\n  password: hunter2\n  api_key: null\n"
                    "- tracking.token=abc\n")
    assert redact_text_file(path) and not redact_text_file(path)  # idempotent
    text = path.read_text()
    assert "hunter2" not in text and "abc" not in text and "api_key: null" in text


def test_store_health_notices_a_vanished_or_replaced_sqlite_file(tmp_path):
    from hpoflow.store.health import StoreHealth, StoreLost

    db = tmp_path / "m.db"
    db.write_text("")
    health = StoreHealth(f"sqlite:///{db}")
    health.check()
    db.unlink()
    with pytest.raises(StoreLost, match="vanished"):
        health.check()
    db.write_text("")  # a new file at the same path is another store
    with pytest.raises(StoreLost, match="replaced"):
        health.check()
    StoreHealth("http://127.0.0.1:5000").check()  # servers report their own errors


def test_a_lost_store_stops_the_loop_and_nothing_more_is_written(store, monkeypatch):
    from hpoflow.store.health import StoreLost

    task, tracker = Flaky(), _tracker(store, flush_every=1)
    calls = {"n": 0}

    def check():
        calls["n"] += 1
        if calls["n"] > 3:
            raise StoreLost("the MLflow store x vanished during the run")

    monkeypatch.setattr(tracker.health, "check", check)
    with pytest.raises(StoreLost):
        run(task, _algo(task), tracker, Budget(10))
    client = MlflowClient(tracking_uri=store)
    assert [m.step for m in client.get_metric_history(tracker.run_id, "query_cost")] == [1, 2, 3]
    assert client.get_run(tracker.run_id).info.status == "RUNNING"  # left for resume / `hpoflow.store.runs stale`
