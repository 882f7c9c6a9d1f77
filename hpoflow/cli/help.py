"""``python -m hpoflow --help`` without starting Hydra: groups and options come from the registry.

Hydra's own help composes every group option (deep copies of the whole config repository per group),
which costs seconds; this page needs only the registry's names, so it prints in a fraction of that.
Hydra's help is still there as ``--hydra-help``; the resolved config is ``--cfg job``.
"""
from __future__ import annotations

from hpoflow.config import registry

HEADER = """hpoflow: declarative hyperparameter-optimisation experiments (Hydra configs, MLflow tracking).

Usage:   python -m hpoflow [group=option ...] [key=value ...]
Sweeps:  python -m hpoflow -m algo=random,gp_ei task=branin seed=0,1,2
Studies: python -m hpoflow -m experiment=NAME    (re-run the same command: finished runs are skipped)
Config:  python -m hpoflow --cfg job [overrides]      (the resolved config; runs nothing)
Results: mlflow ui --backend-store-uri sqlite:///outputs/mlflow.db
Report:  python -m hpoflow.report experiment=NAME   (or tracking.experiment=NAME)
Values:  null = the documented automatic choice (algo.n_init=null), never = a schedule off (algo.reset_every=never)
"""


def help_text() -> str:
    lines = [HEADER, "== Configuration groups ==", "Compose your configuration from those groups (group=option)", ""]
    groups = {group: [e.name for e in registry.entries(kind)] for kind, group in registry.GROUP_OF_KIND.items()}
    groups["hardware"] = ["auto", "cpu", "cuda"]
    groups["tracking"] = ["mlflow", "off"]
    from hpoflow.config.schema import CONF_DIR

    groups["experiment"] = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))  # run with -m
    for group in sorted(groups):
        lines.append(f"{group}: {', '.join(groups[group])}")
    lines += ["", "== Options ==",
              ("seed=INT  budget.rounds=INT  budget.cost=FLOAT  on_error=fail|skip  tracking.uri=URI  "
               "tracking.experiment=NAME"),
              "Each group's settings: python -m hpoflow --cfg job <group>=<option>   (e.g. algo=gp_ucb)",
              "", "Descriptions:"]
    for kind, group in registry.GROUP_OF_KIND.items():
        for e in registry.entries(kind):
            tasks = f" [tasks: {', '.join(e.tasks)}]" if e.tasks else ""
            lines.append(f"  {group}={e.name:<18} {e.description}{tasks}")
    lines += ["", "Hydra's own help: --hydra-help"]
    return "\n".join(lines)
