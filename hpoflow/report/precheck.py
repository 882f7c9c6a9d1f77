"""What the report command can refuse before it imports pandas, SciPy or MLflow: an unknown study, and (for a
SQLite store) an experiment the store does not hold, read with the standard library's ``sqlite3``."""
from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def study_experiment(name: str) -> str:
    """The MLflow experiment a study writes to (its file's ``tracking.experiment``, else its name).

    Raises:
        ValueError: no ``conf/experiment/<name>.yaml``; the message lists the studies there are.
    """
    import yaml

    from hpoflow.config.schema import CONF_DIR
    from hpoflow.core.suggest import did_you_mean

    path = CONF_DIR / "experiment" / f"{name}.yaml"
    if not path.is_file():
        allowed = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
        raise ValueError(f"experiment={name} is unknown{did_you_mean(name, allowed)}; allowed: {', '.join(allowed)}")
    declared = yaml.safe_load(path.read_text()) or {}
    return str((declared.get("tracking") or {}).get("experiment") or name)


def missing_experiment(db: Path, uri: str, experiments: str) -> str | None:
    """One line when an experiment of ``experiments`` (comma-separated names) is not among the active ones of the
    SQLite store ``db``; None when all are there or the file cannot be read this way (loading then says why).

    The line is the one loading gives (``tracking.experiment='x' not found in <uri>; available: ...``).
    """
    from hpoflow.core.suggest import did_you_mean
    from hpoflow.store.params import mask_secrets

    if not db.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as con:
            rows = con.execute("SELECT name FROM experiments WHERE lifecycle_stage = 'active' "
                               "ORDER BY creation_time DESC, experiment_id DESC").fetchall()
    except sqlite3.Error:  # not an MLflow store (yet), locked, corrupt: the full path reports it
        return None
    names = [str(r[0]) for r in rows]
    for name in (n.strip() for n in experiments.split(",")):
        if name and name not in names:
            return (f"tracking.experiment='{name}' not found in {mask_secrets(uri)}{did_you_mean(name, names)}; "
                    f"available: {', '.join(names) or 'none'}")
    return None
