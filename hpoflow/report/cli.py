"""``python -m hpoflow.report``: select runs, print the tables, write report.html, report.md, summary.csv, figures.

Keys (``key=value``, as in the main CLI):
    experiment            a study (conf/experiment/<name>.yaml): its MLflow experiment, and its paper table first
    tracking.uri          store (default: the embedded ``outputs/mlflow.db``)
    tracking.experiment   experiment name(s), comma-separated (default: all)
    report.sweep_id       only runs of this sweep
    report.parent_run_id  only the children of this study parent run
    report.tags           exact tag values, e.g. ``report.tags={algo: gp_ei}`` or ``report.tags.task=branin``
    report.out            output folder (default: ``report/<selection>``: ``report/branin``, ``report/all``,
                          ``report/branin_algo-gp_ei``; a folder that already holds a report is said to be
                          replaced, in one line)
    report.include_failed count FAILED/KILLED runs as the worst value (default: true; false drops them)
    report.best_config    fetch each algorithm's best configuration from its run's artifacts (default: true)
    report.log_to_mlflow  auto (default): log the report as artifacts of the study's parent run when the
                          selection is that study's runs (no report.tags, no run outside it), and into a new
                          summary run when it mixes a study's runs with others (single runs, another study);
                          true: also without any study, into a new summary run; false: never
    report.x              auto (default): also compare methods against compute (anytime normalised regret over
                          the fraction of the cost budget, ranks, area, cost to a target, data profile over cost)
                          when runs logged a fidelity or set budget.cost; cost: always; round: never
    report.fractions      fractions of the budget for the table and ranks (default: 1/8,1/4,1/2,1)
    report.reference      the method whose median final value is the cost-to-target target (default: random)
    report.incumbent      full (default): only full-fidelity evaluations count towards a run's best so far; any:
                          every evaluation (at its true value where the task logs one)
    report.task_figures   auto (default): a figure per task for studies of up to 12 tasks; true: always; false: never
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loading and statistics import pandas and SciPy: a refused command never needs them
    from hpoflow.report.loading import StudyData

ALLOWED = {"experiment": set(), "tracking": {"uri", "experiment"},
           "report": {"out", "sweep_id", "parent_run_id", "tags", "include_failed", "best_config",
                      "log_to_mlflow", "x", "fractions", "reference", "incumbent", "task_figures"}}
LOG_CHOICES = ("auto", "true", "false")
REPORT_ARTIFACT_DIR = "report"   # folder of the parent run's artifacts that holds the report


def default_out(cfg: Any, tags: dict[str, str]) -> Path:
    """``report/<selection>``: the study or experiment names, the sweep, study parent and tags that select the runs
    (two different selections never share a folder)."""
    import re

    tracking, report = cfg.get("tracking") or {}, cfg.get("report") or {}
    parts = [str(cfg.get("experiment") or tracking.get("experiment") or "all")]
    parts += [f"{label}-{report.get(key)}" for key, label in (("sweep_id", "sweep"), ("parent_run_id", "parent"))
              if report.get(key)]
    parts += [f"{key}-{value}" for key, value in sorted(tags.items())]
    name = re.sub(r"[^A-Za-z0-9_.,-]+", "-", "_".join(parts)).strip("-.") or "all"
    return Path("report") / name[:120]


def _replacing(out: Path) -> str | None:
    """One line when ``out`` already holds a report (it is about to be replaced), else None."""
    import datetime

    earlier = out / "report.html"
    if not earlier.is_file():
        return None
    when = datetime.datetime.fromtimestamp(earlier.stat().st_mtime).strftime("%Y-%m-%d %H:%M:%S")
    return (f"Note: replacing the report in {out} (written {when}); give report.out=<folder> to keep both")


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
    from hpoflow.report.loading import REPORT_KIND_TAG
    from hpoflow.store.backend import artifact_location, get_or_create_experiment, make_client

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


def log_to_parent(uri: str, parent_run_id: str, files: list[Path]) -> None:
    """Log ``files`` into the ``report/`` artifact folder of the study's parent run (whatever its status)."""
    from hpoflow.store.backend import make_client

    client = make_client(uri)
    for path in files:
        client.log_artifact(parent_run_id, str(path), artifact_path=REPORT_ARTIFACT_DIR)


def _flag(value: Any, name: str, default: bool) -> bool:
    if value is None:
        return default
    text = str(value).lower()
    if text not in ("true", "false"):
        raise ValueError(f"report.{name}={value} is not allowed; use true or false")
    return text == "true"


def _quiet_solvers() -> None:
    """statsmodels' power solver warns when it leaves its bracket (a huge effect); the report then says 2 seeds
    suffice (``statistics.seeds_needed``), so the warning above the tables tells the reader nothing."""
    import warnings

    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    warnings.filterwarnings("ignore", category=ConvergenceWarning)


def _probe(uri: str) -> str | None:
    """One line if the store cannot be opened or reached (with the CLI's short HTTP retries), else None."""
    from hpoflow.config.validation import uri_scheme_problem
    from hpoflow.runner.build import first_line
    from hpoflow.store.backend import make_client, retry, sqlite_path
    from hpoflow.store.params import mask_secrets

    problem = uri_scheme_problem(uri)
    if problem:
        return mask_secrets(problem)
    if sqlite_path(uri) is not None:  # a file: loading reports a missing or empty one itself
        return None
    try:
        client = make_client(uri)
        retry(lambda: client.search_experiments(max_results=1))
    except Exception as exc:  # noqa: BLE001 - unreachable server, unreadable file: one line, exit 2
        return f"tracking.uri={mask_secrets(uri)!r}: cannot read the MLflow store ({first_line(exc)})"
    return None


def _refused_early(cfg: Any) -> str | None:
    """An unknown study, or an experiment a SQLite store does not hold: one line, before any heavy import."""
    from hpoflow.report.precheck import missing_experiment, study_experiment
    from hpoflow.store.backend import default_uri, sqlite_path

    if cfg.get("experiment"):
        try:
            study_experiment(str(cfg.experiment))
        except ValueError as exc:
            return str(exc)
    experiment = (cfg.get("tracking") or {}).get("experiment")  # a study's own: its paper table says what is missing
    uri = str((cfg.get("tracking") or {}).get("uri") or default_uri())
    db = sqlite_path(uri)
    if db is None or not experiment:
        return None
    return missing_experiment(db, uri, str(experiment))


def main(argv: list[str] | None = None) -> int:
    from omegaconf import OmegaConf

    from hpoflow.store.backend import default_uri
    from hpoflow.store.params import mask_secrets

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
    refused = _refused_early(cfg)
    if refused:
        print(f"Error: {refused}", file=sys.stderr)
        return 2
    from hpoflow.report.build import build
    from hpoflow.report.compute import parse_settings
    from hpoflow.report.loading import SelectionError, load_study
    from hpoflow.report.statistics import ReportError

    tracking, report = cfg.get("tracking") or {}, cfg.get("report") or {}
    log_mode = str(report.get("log_to_mlflow", "auto")).lower()
    try:
        if log_mode not in LOG_CHOICES:
            raise ValueError(f"report.log_to_mlflow={log_mode} is not allowed; use one of {', '.join(LOG_CHOICES)}")
        include_failed = _flag(report.get("include_failed"), "include_failed", True)
        best_configs = _flag(report.get("best_config"), "best_config", True)
        cost = parse_settings(report)
    except ValueError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    uri = str(tracking.get("uri") or default_uri())
    unreachable = _probe(uri)
    if unreachable:
        print(f"Error: {unreachable}", file=sys.stderr)
        return 2
    experiment, sweep_id = tracking.get("experiment"), report.get("sweep_id")
    parent = report.get("parent_run_id")
    tags = {str(k): str(v) for k, v in (report.get("tags") or {}).items()}
    out = Path(report.get("out") or default_out(cfg, tags))
    replacing = _replacing(out)
    if cfg.get("experiment"):  # a study: its paper table, then the statistics over its MLflow experiment
        from hpoflow.report.papers import paper_table, study_experiment

        try:
            experiment = study_experiment(str(cfg.experiment))
            table = paper_table(uri, str(cfg.experiment), out)
        except ValueError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 2
        if table is not None:
            print(table)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{cfg.experiment}.txt").write_text(table + "\n")
    _quiet_solvers()
    try:
        data = load_study(uri, experiment=experiment, sweep_id=sweep_id, parent_run_id=parent, tags=tags,
                          include_failed=include_failed)
        if replacing:
            print(replacing, file=sys.stderr)
        built = build(data, out, best_configs=best_configs, cost=cost)
    except (SelectionError, ReportError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    _print_built(built)
    try:
        _log(data, built, log_mode, experiment, sweep_id, tags)
    except Exception as exc:  # noqa: BLE001 - e.g. postgresql:// with server-proxied artifacts: the files stay here
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        print(f"Warning: the report was not logged to MLflow: the store {mask_secrets(data.uri)} cannot take "
              f"artifacts from here ({type(exc).__name__}: {first}); it is in {out}", file=sys.stderr)
    return 0


def _print_built(built: Any) -> None:
    """The report's warnings (stderr), its tables, its figures and the files it wrote (stdout)."""
    for warning in built.warnings:
        print(warning, file=sys.stderr)
    print(built.text)
    print("figures: " + ", ".join(str(p) for p in built.figures if p.suffix == ".png"))
    print(f"\nwrote {built.html}, {built.markdown} and {', '.join(str(p) for p in [built.csv, *built.extra])}")


def _log(data: StudyData, built: Any, mode: str, experiment: Any, sweep_id: Any, tags: dict[str, str]) -> None:
    files = [built.html, built.markdown, built.csv, *built.extra]
    parent = data.study_parent() if not tags else None  # a tag-filtered subset is not the study's report
    if parent is not None and (data.runs["parent_run_id"].fillna("").astype(str) != parent).any():
        parent = None  # runs beyond the study (single runs, another study): not the study's report either,
        if mode == "auto":  # so it goes into a new summary run and the study's own report stays as it was
            mode = "true"
    if mode == "false":
        return
    if parent:
        log_to_parent(data.uri, parent, files)
        print(f"logged {', '.join(p.name for p in files)} to the study's parent run {parent} "
              f"(artifacts/{REPORT_ARTIFACT_DIR}/)")
    elif mode == "true":
        names = [n.strip() for n in str(experiment).split(",")] if experiment else []
        target = names[0] if len(names) == 1 else "reports"
        extra = {k: v for k, v in (("sweep_id", sweep_id),) if v}
        run_id = log_summary_run(data.uri, target, files + built.figures,
                                 {**extra, **{f"report.{k}": v for k, v in tags.items()}})
        print(f"logged the report as run {run_id} in experiment '{target}' of {data.uri}")
