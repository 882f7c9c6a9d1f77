"""Arithmetic the YAML configs may need: ``${hpoflow.times:20,${task.dim}}`` is 20 x the task's dimension.

COCO-style budgets are stated per dimension (``20 x d`` evaluations); OmegaConf has no arithmetic of its own, and
``oc.eval``-style resolvers would run arbitrary code from a config, so this one multiplies integers and nothing else.
"""
from __future__ import annotations

from typing import Any

from hpoflow.core.budget import ROUNDS_UNDER_COST

TIMES = "hpoflow.times"


def times(*factors: object) -> int:
    """The product of integer factors (``"20"`` and ``20`` alike).

    Raises:
        ValueError: a factor that is not an integer (one line, naming it).
    """
    out = 1
    for f in factors:
        if isinstance(f, bool) or not str(f).strip().lstrip("-").isdigit():
            raise ValueError(f"${{{TIMES}:...}} multiplies integers; got {f!r}")
        out *= int(str(f).strip())
    return out


def run_label(algo: Any, task: Any, resume: Any = None) -> str:
    """``<algo>-<task>`` in a run folder's name (``${hpoflow.run_label:...}``); a resume's folder is named after the
    resumed run's choices (its checkpoint's), not the command's defaults."""
    import json
    from pathlib import Path

    if resume not in (None, ""):
        path = Path(str(resume)).expanduser()
        try:
            config = json.loads((path / "checkpoint.json" if path.is_dir() else path).read_text())["meta"]["config"]
            return f"{config['algo']['name']}-{config['task']['name']}"
        except (OSError, ValueError, KeyError, TypeError):  # a run id, an unreadable file: refused later, in one line
            return "resume"
    return f"{algo}-{task}"


ROUNDS = 30  # budget.rounds' default
# ROUNDS_UNDER_COST (hpoflow.core.budget): no round limit; a run given budget.cost ends before a job that does not fit


def default_rounds(cost: Any = None) -> int:
    """``budget.rounds``' default (``${hpoflow.rounds:${budget.cost}}``): 30, or no practical limit when a cost
    budget is set (a multi-fidelity run counts fidelity units, not evaluations)."""
    return ROUNDS if cost in (None, "", "None", "null") else ROUNDS_UNDER_COST


def lc_suite(*families: object) -> str:
    """The learning-curve suite's shipped tasks as one sweep value (``${hpoflow.lc_suite:}``: all of them,
    ``${hpoflow.lc_suite:gb,mlp}``: those of the named model families), e.g. for a study's
    ``task.benchmark``: the study grows with the suite, whatever has been recorded.

    Raises:
        ValueError: a family the suite does not have, or none of the named families recorded yet.
    """
    from hpoflow.tasks.suite import suite_tasks

    tasks = suite_tasks()
    known = sorted({t.rsplit("-", 1)[1] for t in tasks})
    wanted = [str(f).strip() for f in families if str(f).strip()]
    bad = [f for f in wanted if f not in known]
    if bad:
        raise ValueError(f"${{hpoflow.lc_suite:...}}: family {bad[0]!r} is not recorded; allowed: {', '.join(known)}")
    chosen = [t for t in tasks if not wanted or t.rsplit("-", 1)[1] in wanted]
    return ",".join(chosen)


def register() -> None:
    """Register ``${hpoflow.times:a,b,...}``, ``${hpoflow.rounds:cost}``, ``${hpoflow.run_label:algo,task,resume}``
    and ``${hpoflow.lc_suite:families}`` with OmegaConf."""
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver("hpoflow.lc_suite", lc_suite, replace=True)

    OmegaConf.register_new_resolver(TIMES, times, replace=True)
    OmegaConf.register_new_resolver("hpoflow.rounds", default_rounds, replace=True)
    OmegaConf.register_new_resolver("hpoflow.run_label", run_label, replace=True)
