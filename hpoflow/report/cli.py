"""``python -m hpoflow.report``: select runs, print the tables, write Markdown, CSV and figures.

Keys (``key=value``, as in the main CLI):
    experiment            a study (conf/experiment/<name>.yaml): its MLflow experiment, and its paper table first
    tracking.uri          store (default: the embedded ``outputs/mlflow.db``)
    tracking.experiment   experiment name(s), comma-separated (default: all)
    report.sweep_id       only runs of this sweep
    report.tags           exact tag values, e.g. ``report.tags={algo: gp_ei}`` or ``report.tags.task=branin``
    report.out            output folder (default: ``report``): report.md, summary.csv, figures (PNG, SVG)
    report.include_failed also aggregate FAILED/KILLED runs (default: false)
    report.best_config    fetch each algorithm's best configuration from its run's artifacts (default: true)
    report.log_to_mlflow  log the outputs as artifacts of a summary run (default: false)
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hpoflow.report.aggregate import summarise
from hpoflow.report.figures import plot_task
from hpoflow.report.loading import REPORT_KIND_TAG, best_config, load_curves
from hpoflow.report.tables import caption, format_best_configs, format_table, markdown_report, write_csv

ALLOWED = {"experiment": set(), "tracking": {"uri", "experiment"},
           "report": {"out", "sweep_id", "tags", "include_failed", "best_config", "log_to_mlflow"}}


def _check_keys(cfg: Any) -> str | None:
    for group, values in cfg.items():
        allowed = ALLOWED.get(str(group))
        if str(group) == "experiment" and isinstance(values, str):
            continue
        if allowed is None or not hasattr(values, "keys"):
            return f"'{group}' is not a report setting"
        unknown = sorted(set(map(str, values.keys())) - allowed)
        if unknown:
            return f"{group}.{unknown[0]} is not a report setting"
    return None


def _allowed_text() -> str:
    return ", ".join(["experiment"] + [f"{g}.{k}" for g, keys in ALLOWED.items() for k in sorted(keys)])


def log_summary_run(uri: str, experiment: str, files: list[Path], tags: dict[str, str]) -> str:
    """Create a FINISHED run tagged ``hpoflow.kind=report`` holding ``files`` as artifacts; return its id."""
    from hpoflow.tracking.store import artifact_location, get_or_create_experiment, make_client

    client = make_client(uri)
    exp_id = get_or_create_experiment(client, experiment, artifact_location(uri))
    run = client.create_run(exp_id, tags={REPORT_KIND_TAG: "report", **tags}, run_name="report")
    try:
        for path in files:
            client.log_artifact(run.info.run_id, str(path))
    except BaseException:
        client.set_terminated(run.info.run_id, status="FAILED")
        raise
    client.set_terminated(run.info.run_id, status="FINISHED")
    return run.info.run_id


def main(argv: list[str] | None = None) -> int:
    from omegaconf import OmegaConf

    from hpoflow.tracking.store import default_uri

    args = argv if argv is not None else sys.argv[1:]
    bad = [a for a in args if "=" not in a]
    if bad:
        print(f"Error: argument '{bad[0]}' is not a key=value override; allowed keys: {_allowed_text()}",
              file=sys.stderr)
        return 2
    cfg = OmegaConf.from_dotlist(args)
    problem = _check_keys(cfg)
    if problem:
        print(f"Error: {problem}; allowed keys: {_allowed_text()}", file=sys.stderr)
        return 2
    tracking, report = cfg.get("tracking") or {}, cfg.get("report") or {}
    uri = tracking.get("uri") or default_uri()
    experiment, sweep_id = tracking.get("experiment"), report.get("sweep_id")
    if cfg.get("experiment"):  # a study: its paper table, then the statistics over its MLflow experiment
        from hpoflow.report.papers import paper_table, study_experiment

        try:
            experiment = study_experiment(str(cfg.experiment))
            table = paper_table(uri, str(cfg.experiment))
        except ValueError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 2
        if table is not None:
            print(table)
            Path(report.get("out") or "report").mkdir(parents=True, exist_ok=True)
            (Path(report.get("out") or "report") / f"{cfg.experiment}.txt").write_text(table + "\n")
    tags = {str(k): str(v) for k, v in (report.get("tags") or {}).items()}
    curves = load_curves(uri, experiment, sweep_id, bool(report.get("include_failed", False)), tags)
    selection = f"store {uri}; experiment {experiment or 'all'}; sweep {sweep_id or 'any'}; tags {tags or 'any'}"
    if not curves:
        print(f"Error: no finished runs match ({selection})", file=sys.stderr)
        return 1
    out = Path(report.get("out") or "report")
    summaries = summarise(curves)
    figures: dict[tuple[str, ...], list[Path]] = {}
    for task_key, rows in summaries.items():
        if report.get("best_config", True):
            for s in rows:
                s.best_config = best_config(uri, s.best_run)
        task = " ".join(task_key)
        figures[task_key] = plot_task(task, rows, out)
        print(f"\n### {task}\n\n{format_table(rows)}\n\n{caption(rows)}\n\n{format_best_configs(rows)}\n")
        print("figures: " + ", ".join(str(p) for p in figures[task_key]))
    md = out / "report.md"
    md.write_text(markdown_report(summaries, figures, selection))
    csv_path = write_csv(summaries, out / "summary.csv")
    print(f"\nwrote {md} and {csv_path}")
    if report.get("log_to_mlflow", False):
        names = [n.strip() for n in str(experiment).split(",")] if experiment else []
        target = names[0] if len(names) == 1 else "reports"
        extra = {k: v for k, v in (("sweep_id", sweep_id),) if v}
        files = [md, csv_path] + [p for ps in figures.values() for p in ps]
        run_id = log_summary_run(uri, target, files, {**extra, **{f"report.{k}": v for k, v in tags.items()}})
        print(f"logged the report as run {run_id} in experiment '{target}' of {uri}")
    return 0
