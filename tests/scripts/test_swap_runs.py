"""scripts/swap_runs.py: one method's runs of a store replaced by filtered runs of another store."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from scripts.swap_runs import main


def _store(path: Path, rows: list[dict[str, str]]) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    exp = client.create_experiment("study")
    for params in rows:
        run = client.create_run(exp).info.run_id
        for key, value in params.items():
            client.log_param(run, key, value)
        client.log_metric(run, "simple_regret", 1.0, step=1)
        client.set_terminated(run)


def _algos(path: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(path)
    return sorted(db.execute(
        "SELECT p.value, coalesce((SELECT q.value FROM params q WHERE q.run_uuid = p.run_uuid AND q.key = 'arm'), '-') "
        "FROM params p WHERE p.key = 'algo.name'").fetchall())


def test_dropped_runs_leave_every_table_and_filtered_runs_come_in(tmp_path, capsys):
    old, new, out = tmp_path / "old.db", tmp_path / "new.db", tmp_path / "out.db"
    _store(old, [{"algo.name": "gp_ei", "seed": "0"}, {"algo.name": "random", "seed": "0"}])
    _store(new, [{"algo.name": "gp_ei", "seed": s, "arm": arm} for s in ("0", "1") for arm in ("none", "power")])
    assert main(["--base", str(old), "--out", str(out), "--drop", "gp_ei", "--add", f"{new}:arm=power:seed=0"]) == 0
    assert "1 runs dropped, 1 added: 2 runs" in capsys.readouterr().out
    assert _algos(out) == [("gp_ei", "power"), ("random", "-")]
    db = sqlite3.connect(out)
    assert db.execute("SELECT count(*) FROM metrics").fetchone() == (2,)  # the dropped run's steps went with it
    assert db.execute("SELECT count(*) FROM experiments WHERE name = 'study'").fetchone() == (1,)
