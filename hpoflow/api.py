"""The public library API: tune a Python function (``minimize``, ``maximize``), build any registered
algorithm by name (``make_algorithm``), run a whole config as the CLI would (``run_config``).

Every entry point composes the CLI's own config (``conf/``: the same defaults, the same one-line errors),
then goes through the same build step, loop, tracking and checkpoints as ``python -m hpoflow``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpoflow.algorithms.base import Algorithm
from hpoflow.config.compose import library_settings
from hpoflow.config.library import check_arguments
from hpoflow.config.settings import ConfigError, Settings, validate
from hpoflow.core.checkpoint import LoopState
from hpoflow.core.objectives import Objectives, best_of_front, pareto_front
from hpoflow.core.records import Direction, Record, RegretBook, RunStatus, at_full_fidelity
from hpoflow.core.space import SearchSpace, describe_space, parse_space
from hpoflow.tasks.base import Task
from hpoflow.tasks.function import FunctionTask, Objective


@dataclass(frozen=True)
class Result:
    """A finished (or resumed-and-finished) run.

    Attributes:
        best_config: the best observed configuration (None if nothing was observed); with constraints or several
            objectives, the best *feasible* one in the first objective (None if none was feasible). With a
            fidelity only evaluations at its maximum (the full fidelity) count: None until the first one.
        best_value: its value, in the objective's own sign (a ``"max"`` objective is not negated).
        records: one ``Record`` per round (config, value, cost, failure).
        metrics: the metrics logged per round (value, best_value, regret, query_cost, wall_time, ...).
        summary: best value/config, cumulative and simple regret (if an optimum is known), cost, failures; and
            what the algorithm chose when it was built, as its run's tags say (``algo="auto"``: ``auto.choice``,
            ``auto.settings``, ``auto.reason``).
        status: how the run ended (FINISHED).
        run_id: the MLflow run, when tracked; ``uri``: its store.
        pareto: with several objectives, the feasible non-dominated evaluations ``[{"config": ..., "values":
            ...}]`` (raw values, in evaluation order; full-fidelity ones only); None for a single-objective run.
    """

    best_config: dict[str, Any] | None
    best_value: float | None
    records: list[Record] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    status: RunStatus = RunStatus.FINISHED
    run_id: str | None = None
    uri: str | None = None
    pareto: list[dict[str, Any]] | None = None


def result_of(summary: dict[str, Any], records: list[Record], metrics: list[dict[str, float]], status: RunStatus,
              run_id: str | None, uri: str | None, objectives: Objectives | None = None) -> Result:
    top = summary.get("incumbent_fidelity")  # the front, like the incumbent, holds full-fidelity evaluations only
    pareto = None if objectives is None else pareto_front(
        objectives, ((r.config, r.values) for r in records if r.queried and not r.failed and at_full_fidelity(r, top)))
    best_config, best_value = summary.get("best_config"), summary.get("best_value")
    if objectives is not None and pareto is not None:  # the book's best is in minimisation form and ignores constraints
        best_config, best_value = best_of_front(objectives, pareto)
    return Result(best_config, best_value, records, metrics, summary, status, run_id, uri, pareto)


def minimize(fn: Objective, space: SearchSpace | dict[str, Any], algo: str = "auto", rounds: int | None = None,
             seed: int = 0, tracking: str | dict[str, Any] | bool | None = None, *, workers: int = 1,
             executor: str = "thread", surrogate: str | dict[str, Any] | None = None,
             checkpoint: str | Path | None = None, name: str | None = None, optimum: float | None = None,
             on_error: str = "fail", hardware: str = "auto", progress: bool = False, fidelity: Any = None,
             cost: float | None = None, objectives: dict[str, str] | None = None,
             constraints: dict[str, Any] | None = None, reference: Any = None, **settings: Any) -> Result:
    """Minimise ``fn(config) -> float | Evaluation`` over ``space`` with a registered algorithm.

    Args:
        fn: the objective; ``config`` is a dict ``{parameter: value}``. Return a float, or an
            ``Evaluation`` (noise-free value, cost, metrics). An exception or a NaN is a
            failed evaluation (``on_error``: ``fail`` ends the run, ``skip`` records it and goes on).
        space: a ``SearchSpace`` or a dict spec, e.g. ``{"x": ("float", -1.0, 1.0), "lr": ("log", 1e-5,
            1e-1), "layers": ("int", 1, 4), "act": ["relu", "tanh"]}`` (see ``hpoflow.core.space.parse_space``).
        algo: a registered algorithm (``python -m hpoflow --help`` lists them), at its ``conf/algo`` defaults;
            ``auto`` (the default) picks one by the space and the budget, and ``Result.summary["auto.choice"]``
            (with ``auto.settings`` and ``auto.reason``) says which and why.
        rounds: the evaluation budget (default 30; with ``cost``, no limit but the cost).
        fidelity: ``(name, min, max)`` (or a ``Fidelity``): ``fn`` takes the level as
            the keyword ``name`` (``def train(config, epochs): ...``) and a multi-fidelity algorithm (``hyperband``,
            ``asha``, ``sha``, ``mf_gp``; ``auto`` with ``cost``) chooses it; a float result costs the level.
            A pausable ``fn`` also names ``state`` (``def train(config, epochs, state=None)``): it gets what it
            returned for that trial at its last, lower level (None for a new one), returns ``(value, state)``
            and a float value costs only the levels it added (the states are kept bounded, and pickled beside
            ``checkpoint`` when there is one; see ``hpoflow.tasks.function.FunctionTask``).
        cost: the budget in cost units (fidelity units with ``fidelity``): a job starts only if its cost fits in
            what remains (trials still running counted), so the run ends at or below it;
            ``Result.summary["cost_note"]`` says what was spent and why it ended (see ``hpoflow.core.budget``).
        objectives: several objectives, ``{"f1": "min", "f2": "max"}``: ``fn`` returns a dict with (at least) these
            values; the first one, in minimisation form (negated for ``max``), is what single-objective methods
            minimise; ``Result.pareto`` lists the feasible non-dominated points. A name ``fn`` does not return is
            one error at the first evaluation.
        constraints: ``{"mem_mb": ("<=", 512)}`` (op ``<=``, ``>=``, ``<``, ``>``) on values ``fn`` returns: a
            point that breaks one is infeasible (logged ``feasible`` = 0) and never on the front.
        reference: the hypervolume reference point, one number per objective in its own units (a list in spec order
            or a dict); with it, each round logs ``hypervolume`` of the feasible front. Without it, none is logged.
        seed: seeds the algorithm and Python's, NumPy's and torch's global RNGs (as a CLI run does).
        tracking: None or False (the default: nothing logged), True (the CLI's store, ``outputs/mlflow.db``), an
            MLflow store URI (``"sqlite:///runs.db"``; artifacts go beside the database), or tracking settings
            (``{"uri": ..., "experiment": ..., "run_name": ...}``); the run is recorded as a CLI run is.
        workers: trials evaluated at once (asynchronous: a new one starts as soon as one ends); the algorithm
            must support pending trials (GP-based ones, ``turbo``, ``random``, ``grid``, Optuna's samplers).
        executor: ``thread`` (objectives that release the GIL: PyTorch, NumPy, subprocesses, I/O) or
            ``process`` (``fn`` must be a module-level function; a script needs ``if __name__ == "__main__":``), or
            ``ray`` (Ray tasks on the cluster at ``RAY_ADDRESS``, else on a Ray started on 127.0.0.1; a trial whose
            worker dies is retried, then recorded as failed; needs ``pip install 'hpoflow[cluster]'``).
        surrogate: a surrogate name or ``{"name": ..., <setting>: ...}``; default: the algorithm's.
        checkpoint: a file for the loop state after every round; calling again with the same arguments resumes
            from it (a finished run is returned as it is).
        name: the task's name (tags, default experiment); default: ``fn.__name__``.
        optimum: the known optimal value, for regret metrics.
        progress: a progress bar on a terminal.
        **settings: the algorithm's settings (``beta=3.0``, ``optimizer={"raw_samples": 64}``).

    Returns:
        The ``Result`` (``best_config``, ``best_value``, records, ``run_id`` when tracked).

    Raises:
        ConfigError: a bad algorithm name, setting or value (the CLI's one-line message), a bad store URI.
        SpaceError: a bad space spec.
        ObjectiveError: ``fn`` failed under ``on_error="fail"`` (a tracked run is FAILED, every round logged).
    """
    return _optimize(fn, space, Direction.MINIMIZE, algo, rounds, seed, tracking, surrogate, checkpoint, name,
                     optimum, on_error, hardware, progress, settings, workers, executor, fidelity, cost,
                     (objectives, constraints, reference))


def maximize(fn: Objective, space: SearchSpace | dict[str, Any], algo: str = "auto", rounds: int | None = None,
             seed: int = 0, tracking: str | dict[str, Any] | bool | None = None, *, workers: int = 1,
             executor: str = "thread", surrogate: str | dict[str, Any] | None = None,
             checkpoint: str | Path | None = None, name: str | None = None, optimum: float | None = None,
             on_error: str = "fail", hardware: str = "auto", progress: bool = False, fidelity: Any = None,
             cost: float | None = None, objectives: dict[str, str] | None = None,
             constraints: dict[str, Any] | None = None, reference: Any = None, **settings: Any) -> Result:
    """Maximise ``fn(config)``; otherwise exactly ``minimize`` (``best_value`` is the largest value seen)."""
    return _optimize(fn, space, Direction.MAXIMIZE, algo, rounds, seed, tracking, surrogate, checkpoint, name,
                     optimum, on_error, hardware, progress, settings, workers, executor, fidelity, cost,
                     (objectives, constraints, reference))


def budget_rounds(rounds: int | None, cost: float | None) -> int:
    """``rounds``, or the CLI's default for it (``hpoflow.config.resolvers.default_rounds``: 30 evaluations, or
    no practical limit when a ``cost`` budget is given)."""
    from hpoflow.config.resolvers import default_rounds

    return default_rounds(cost) if rounds is None else rounds


def function_task(fn: Objective | None, space: SearchSpace | dict[str, Any], direction: Direction,
                  name: str | None, optimum: float | None, fidelity: Any,
                  objectives: tuple[Any, Any, Any] = (None, None, None)) -> FunctionTask:
    """The caller's function (or a Study's caller) as a task; a bad fidelity or objectives spec, or an objective
    without its keyword, is one ConfigError. ``objectives``: ``(objectives, constraints, reference)``."""
    from hpoflow.core.fidelity import parse_fidelity
    from hpoflow.core.objectives import parse_objectives

    try:
        spec = parse_objectives(*objectives)
        if spec is not None and direction is Direction.MAXIMIZE:
            raise ValueError("objectives= go with minimize(): each objective's direction is in the spec")
        return FunctionTask(parse_space(space), fn, direction, name, optimum, parse_fidelity(fidelity), spec)
    except (TypeError, ValueError) as exc:
        if type(exc).__name__ == "SpaceError":
            raise
        raise ConfigError(str(exc)) from None


def _optimize(fn: Objective, space: SearchSpace | dict[str, Any], direction: Direction, algo: str,
              rounds: int | None, seed: int, tracking: Any, surrogate: Any, checkpoint: str | Path | None,
              name: str | None, optimum: float | None, on_error: str, hardware: str, progress: bool,
              settings: dict[str, Any], workers: int = 1, executor: str = "thread", fidelity: Any = None,
              cost: float | None = None, objectives: tuple[Any, Any, Any] = (None, None, None)) -> Result:
    from hpoflow.runner.build import execute

    if not callable(fn):
        raise ConfigError(f"fn={fn!r} must be callable as fn(config) -> float")
    check_arguments(name=name, progress=progress)
    task = function_task(fn, space, direction, name, optimum, fidelity, objectives)
    s = library_settings(algo, task.description(), seed=seed, rounds=budget_rounds(rounds, cost), tracking=tracking,
                         surrogate=surrogate, hardware=hardware, on_error=on_error, algo_settings=settings,
                         workers=workers, executor=executor, cost=cost)
    run, finished = open_library_run(s, task, checkpoint)
    if finished is not None:
        return finished
    out = execute(run, progress)
    from hpoflow.runner.build import algorithm_tags

    summary = {**out.summary, **algorithm_tags(run.loop.algorithm)}  # algo=auto: what it picked, also untracked
    return result_of(summary, out.records, out.metrics, out.status, run.run_id, run.uri, task.objectives)


def open_library_run(s: Settings, task: Task, checkpoint: str | Path | None) -> tuple[Any, Result | None]:
    """The build step for a library run, continuing ``checkpoint`` when it exists.

    Returns ``(OpenRun, None)``, or ``(None, Result)`` when the checkpoint's run already finished.

    Raises:
        ConfigError: the checkpoint was written for other settings (the first differing key is named), or
            its MLflow run is gone, FINISHED or written by a live process.
    """
    from hpoflow.runner.build import open_run

    path = None if checkpoint is None else str(Path(checkpoint).expanduser().resolve())
    state = _load_matching(path, s) if path is not None and Path(path).exists() else None
    if state is not None and state.meta.get("status") == "FINISHED":
        book = RegretBook(task.direction, task.regret_reference)
        for key, value in state.book.items():
            setattr(book, key, value)
        return None, result_of(
            book.summary(),
            state.records,
            state.metrics,
            RunStatus.FINISHED,
            state.meta.get("run_id"),
            s.tracking.uri if s.tracking.enabled else None,
            task.objectives,
        )
    return open_run(s, task=task, checkpoint_path=path, resume=state), None


def _load_matching(path: str, s: Settings) -> LoopState:
    from hpoflow.core.checkpoint import CheckpointError, load
    from hpoflow.store.backend import default_uri
    from hpoflow.store.params import redact_tree
    from hpoflow.store.resume_guard import verify_store

    try:
        state = load(path)
    except CheckpointError as exc:
        raise ConfigError(str(exc)) from None
    recorded, now = dict(state.meta.get("config") or {}), redact_tree(s.raw)
    for config in (recorded, now):  # the store may move (tracking.uri), the run stays the same
        config["tracking"] = {k: v for k, v in (config.get("tracking") or {}).items() if k != "uri"}
        budget = config.get("budget") or {}  # before budget.workers existed: one worker
        config["budget"] = {k: v for k, v in budget.items() if k != "executor" and (k, v) != ("workers", 1)}
    for config in (recorded, now):  # spaces recorded before the dict form ("log" lists) compare by meaning
        task = config.get("task")
        if isinstance(task, dict) and isinstance(task.get("space"), dict):
            config["task"] = {**task, "space": _space_form(task["space"])}
    key = first_difference(recorded, now)
    if key is not None:
        raise ConfigError(f"checkpoint={path!r} was written by a run with other settings ({key}); give the same "
                          "settings to resume it, or another checkpoint file to start a new run")
    if s.tracking.enabled and state.meta.get("status") != "FINISHED":
        try:
            verify_store(state, str(s.tracking.uri or default_uri()), s.checkpoint_every)
        except CheckpointError as exc:
            raise ConfigError(f"checkpoint={path!r}: {exc}") from None
    return state


def _space_form(spec: dict[str, Any]) -> Any:
    from hpoflow.core.space import SPEC_KINDS, SpaceError, describe_space

    old = {k: tuple(v) if isinstance(v, list) and v and v[0] in SPEC_KINDS and len(v) == 3 else v
           for k, v in spec.items()}
    try:
        return describe_space(parse_space(old))
    except SpaceError:
        return spec


def first_difference(a: Any, b: Any, prefix: str = "") -> str | None:
    """The first dotted key where two configs differ, as ``key: old -> new``; None if they are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = first_difference(a.get(key), b.get(key), f"{prefix}{key}.")
            if found is not None:
                return found
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := first_difference(x, y, f"{prefix}{i}."))), None)
    return None if a == b else f"{prefix.rstrip('.')}: {a!r} -> {b!r}"


def make_algorithm(name: str, space: SearchSpace | dict[str, Any] | Task, seed: int = 0, *, rounds: int = 30,
                   direction: str = "minimize", surrogate: str | dict[str, Any] | None = None,
                   hardware: str = "auto", **settings: Any) -> Algorithm:
    """Build the registered algorithm ``name`` (and its surrogate) for ``space``, as the CLI would.

    The algorithm works on ``[0, 1]^d`` and speaks ``ask(round) -> Suggestion`` (``.config``, ``.x`` of shape
    ``d``, ``.observe``) and ``tell(suggestion, Evaluation(value) | Failure(error))``; gradient methods
    (``my_hpo``, ``sho``) have ``step(round)`` instead and need their bilevel task, so they are built by
    the CLI or ``run_config``.

    Args:
        name: a registered algorithm, at its ``conf/algo/<name>.yaml`` defaults.
        space: a ``SearchSpace`` or a dict spec (see ``minimize``); or a ``Task``, whose space
            and direction are used (``direction`` is then ignored) and which the algorithm sees as its task.
        seed: seeds the algorithm and the global RNGs.
        rounds: the horizon the algorithm plans for (initial design size, UCB schedules).
        direction: ``minimize`` or ``maximize``.
        **settings: the algorithm's settings, validated as the CLI validates them.

    Raises:
        ConfigError: unknown algorithm, setting or value (the CLI's one-line message).
        SpaceError: a bad space spec.
    """
    from hpoflow.runner.build import build_components

    if isinstance(space, Task):  # the algorithm's context is the task itself (its space and direction)
        task: Task = space
    else:
        try:
            goal = Direction(direction)
        except ValueError:
            raise ConfigError(f"direction={direction!r} is unknown; allowed: minimize, maximize") from None
        task = FunctionTask(parse_space(space), None, goal)
    described = (task.description() if isinstance(task, FunctionTask)
                 else {"name": task.name, "direction": task.direction.value, "space": describe_space(task.space)})
    s = library_settings(name, described, seed=seed, rounds=rounds, surrogate=surrogate, hardware=hardware,
                         algo_settings=settings)
    return build_components(s, task)[1]


def run_config(config: list[str] | dict[str, Any] | Settings, progress: bool = False) -> Result:
    """Run one job as ``python -m hpoflow`` would (compose -> validate -> build -> run; no run folder).

    ``config``: the command line's overrides (``["algo=gp_ei", "task=branin", "budget.rounds=10"]``, composed
    from ``conf/`` exactly as the CLI composes them); or a resolved config dict with every group
    (``{"algo": {"name": "gp_ei"}, "surrogate": {"name": "gp"}, "task": {"name": "branin"}, ...}``; settings left
    out take their dataclass defaults), or validated Settings. Tracking follows the config's ``tracking``.

    Raises:
        ConfigError: the first bad setting (one line). ObjectiveError: a failed evaluation under ``on_error=fail``.
    """
    from hpoflow.config.compose import compose
    from hpoflow.runner.build import execute, open_run

    if isinstance(config, list):
        config = compose(config)
    s = config if isinstance(config, Settings) else validate(config)
    run = open_run(s)
    out = execute(run, progress)
    return result_of(out.summary, out.records, out.metrics, out.status, run.run_id, run.uri, run.loop.task.objectives)


def make_components(config: list[str] | dict[str, Any] | Settings) -> tuple[Task, Algorithm]:
    """Build the task and the algorithm of one job as ``python -m hpoflow`` would, without running it.

    ``config`` as for ``run_config``. Hardware set-up and seeding happen as in a run. For a loop you drive
    yourself (``ask``/``tell``, timing a decision) or ``hpoflow.run`` with your own tracker and budget.

    Raises:
        ConfigError: the first bad setting (one line).
    """
    from hpoflow.config.compose import compose
    from hpoflow.runner.build import build_components

    if isinstance(config, list):
        config = compose(config)
    s = config if isinstance(config, Settings) else validate(config)
    task, algorithm, _ = build_components(s)
    return task, algorithm
