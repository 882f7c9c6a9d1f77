"""Asynchronous parallel evaluation: up to ``budget.workers`` trials of one run at once.

A new trial is asked as soon as one ends (no batch barrier), with the trials still running passed to the
algorithm as pending points (:meth:`hpoflow.loop.Loop.ask`); while every worker is busy, the next trial is
already asked (its decision overlaps the evaluations, so a worker that ends starts it at once). Every tell
goes through the loop as in a sequential run, so records, tracking, checkpoints and resume are the same; a round
is a *completed* trial (completion order), and each round also logs its ``trial`` number (ask order)
and the trials still ``pending``.

Workers are threads (objectives that release the GIL: PyTorch, NumPy, subprocesses, sleeps, remote calls) or
processes (``executor="process"``: pure-Python objectives; the task must pickle, so ``fn`` must be a module-level
function, and a script needs ``if __name__ == "__main__":``) or Ray tasks (``executor="ray"``,
:mod:`hpoflow.runner.ray_pool`). The standard library's executors do the pooling.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Any

from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.runner.loop import Loop, RunResult, evaluate
from hpoflow.tasks.base import Task

_TASK: Task | None = None  # a process worker's copy of the task, sent once (not with every trial)


def _set_task(task: Task, parent: int | None = None) -> None:
    """A process worker's initializer: keep the task, and exit when ``parent`` (the run's process) is gone."""
    global _TASK
    _TASK = task
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="hpoflow-parent-watch").start()


def _exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """End this worker once its parent has died (a kill -9 of the run leaves no orphans training on, holding its
    pipes). Written by hand because ``concurrent.futures`` only notices a dead worker, never a dead parent; a
    polling thread, not Linux's ``prctl(PR_SET_PDEATHSIG)``, so it works on every platform."""
    while os.getppid() == parent:
        time.sleep(every_s)
    os._exit(1)


def _evaluate_here(config: dict[str, Any], round: int, observe: bool, fidelity: float | None = None,
                   config_id: int | None = None) -> Evaluation | Failure:
    assert _TASK is not None
    return evaluate(_TASK, config, round, observe, fidelity, config_id)


def make_executor(kind: str, workers: int, task: Task) -> Executor:
    """A pool of ``workers`` threads or (spawned) processes that evaluate ``task``."""
    if kind == "process":
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_set_task,
                                   initargs=(task, os.getpid()))
    if kind == "thread":
        return ThreadPoolExecutor(workers, thread_name_prefix="hpoflow-worker")
    if kind == "ray":
        from hpoflow.runner.ray_pool import RayExecutor

        return RayExecutor(task, workers)
    raise ValueError(f"executor={kind!r} is unknown; allowed: thread, process, ray")


def outcome(future: Future[Evaluation | Failure]) -> Evaluation | Failure:
    """The evaluation's outcome; a trial lost by the executor (its worker process died, a Ray task crashed or was
    cancelled) is a Failure, so the run records it as a failed round instead of ending without it. Objective
    errors never get here: :func:`evaluate` turns them into Failures inside the worker."""
    try:
        return future.result()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Failure(f"evaluation lost: {type(exc).__name__}: {first}")


def drive_parallel(loop: Loop, workers: int, executor: str = "thread") -> RunResult:
    """Run ``loop`` on its own task with up to ``workers`` trials at once, then finish it.

    On a failure under ``on_error=fail``, Ctrl-C or a lost store, the run ends FAILED/KILLED as a sequential one
    does (every completed round logged and checkpointed); trials still running are cancelled or left to end
    unrecorded; the checkpoint saves them, and a resume evaluates them again first (:meth:`Loop.resume_pending`).

    Raises:
        ObjectiveError: an evaluation failed and ``on_error`` is ``fail``.
    """
    pool: Executor | None = None
    running: dict[Future[Evaluation | Failure], Suggestion] = {}
    ahead: Suggestion | None = None  # the next trial, proposed while every worker was busy
    s: Suggestion | None
    try:
        with loop.guard():  # a pool that cannot start (Ray refusing the connection) ends the run FAILED too
            pool = make_executor(executor, workers, loop.task)
            loop.resume_pending()  # those running when the resumed checkpoint was saved become pending again
            resumed = loop.pending  # pending before any ask here: evaluated first
            while True:
                while len(running) < workers and (resumed or ahead is not None or loop.can_ask):
                    if resumed:
                        s = resumed.pop(0)
                    else:
                        s, ahead = (ahead, None) if ahead is not None else (loop.ask_fitting(), None)
                    if s is None:
                        break  # did not fit the cost budget: the running trials end the run
                    t = loop.trial_number(s)
                    if executor == "process":
                        future = pool.submit(_evaluate_here, s.config, t, s.observe, s.fidelity, s.config_id)
                    else:
                        future = pool.submit(evaluate, loop.task, s.config, t, s.observe, s.fidelity, s.config_id)
                    running[future] = s
                if not running:
                    break
                if ahead is None and not resumed and loop.can_ask and not any(f.done() for f in running):
                    ahead = loop.ask_fitting()  # decide while the evaluations run: a worker that ends starts it at once
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: loop.trial_number(running[f])):
                    loop.tell(running.pop(future), outcome(future))
    finally:
        if pool is not None:
            pool.shutdown(wait=not running, cancel_futures=True)
    return loop.finish()
