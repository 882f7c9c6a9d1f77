"""Parallel evaluations inside one run (issue 29): pending trials in a Study, ``workers=k`` in minimize and the CLI,
the pending-point contract over the registry, and a crash with trials pending, then resume (exactly-once steps)."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import signal
import subprocess
import sys
import threading
import time
from functools import partial

import pytest
import torch

import hpoflow
from hpoflow import Study
from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext, PendingNotSupported
from hpoflow.config import registry
from hpoflow.config.settings import ConfigError, build_algorithm, build_task
from hpoflow.core.records import RunStatus
from tests.conftest import cli_env

SPACE = {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}


def _value(config):
    return (config["x"] - 0.3) ** 2 + (config["y"] + 0.2) ** 2


@pytest.mark.parametrize("algo", ["gp_ei", "gp_ucb", "turbo", "random", "grid"])
def test_pending_trials_are_distinct_in_the_design_and_after_it(algo):
    study = Study(SPACE, algo=algo, rounds=16, seed=1)
    first = [study.ask() for _ in range(5)]  # more pending than design points (gp_ei: 3)
    for trial in first:
        study.tell(trial, _value(trial.config))
    pending = [study.ask() for _ in range(4)]  # past the design: the model's suggestions, 4 at once
    configs = [tuple(t.config.values()) for t in first + pending]
    assert len(set(configs)) == len(configs)
    assert [t.number for t in pending] == [6, 7, 8, 9]


def test_tells_in_any_order_record_rounds_in_completion_order():
    study = Study(SPACE, algo="gp_ei", rounds=7, seed=0)
    trials = [study.ask() for _ in range(3)]
    for trial in (trials[2], trials[0], trials[1]):
        study.tell(trial, _value(trial.config))
    records = study.records
    assert [r.round for r in records] == [1, 2, 3]
    assert [r.config for r in records] == [trials[2].config, trials[0].config, trials[1].config]
    assert [r.metrics["trial"] for r in records] == [3.0, 1.0, 2.0]
    assert [r.metrics["pending"] for r in records] == [2.0, 1.0, 0.0]
    with pytest.raises(ValueError, match=r"takes a pending trial \(pending: none\)"):
        study.tell(trials[0], 1.0)  # told already
    while not study.done:
        a, b = study.ask(), study.ask()
        study.tell(b, _value(b.config))
        study.tell(a, _value(a.config))
    assert len(study.records) == 7 and study.result().status is RunStatus.FINISHED


def test_the_budget_counts_pending_trials_and_untold_ones_are_abandoned_at_finish(tmp_path):
    checkpoint = tmp_path / "study.json"
    study = Study(SPACE, algo="random", rounds=3, seed=0, checkpoint=checkpoint)
    trials = [study.ask() for _ in range(3)]
    with pytest.raises(RuntimeError, match=r"every round of the budget is asked: tell the pending trials \(1, 2, 3\)"):
        study.ask()
    study.tell(trials[1], 0.5)
    result = study.finish()
    assert result.status is RunStatus.FINISHED and [r.failed for r in result.records] == [False, True, True]
    assert result.records[1].error == "abandoned: never told before the study finished"
    assert result.summary["failed"] == 2
    again = Study(SPACE, algo="random", rounds=3, seed=0, checkpoint=checkpoint)  # consistent for resume
    assert again.done and [r.config for r in again.records] == [r.config for r in result.records]


def _contract_algorithm(name: str, rounds: int = 8):
    """The registered algorithm ``name`` on its smoke task (as tests/test_contract.py builds it)."""
    from tests.test_contract import CHEAP_DEFAULT, _settings

    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip(f"{name} needs {entry.missing()} (pip install 'hpoflow[{entry.extra}]')")
    s = _settings(entry.smoke or CHEAP_DEFAULT, name, rounds)
    task = build_task(s)
    surrogate = registry.get("surrogate", s.surrogate.name)
    factory = partial(surrogate.load(), s.surrogate, dtype=torch.float64, device=torch.device("cpu"))
    return task, build_algorithm(s, BuildContext(task=task, rounds=rounds, seed=s.seed, surrogate=factory))


@pytest.mark.parametrize("name", [e.name for e in registry.entries("algorithm")])
def test_every_algorithm_supports_pending_points_or_refuses_them_in_one_line(name):
    task, algo = _contract_algorithm(name)
    if not isinstance(algo, AskTellAlgorithm):  # gradient methods run their own steps: workers>1 is refused
        return
    for t in range(1, 5):  # past a small initial design
        s = algo.ask(t)
        algo.tell(s, task.evaluate(s.config, round=t, observe=s.observe))
    first = algo.ask(5)
    if algo.pending_rule is None:
        with pytest.raises(PendingNotSupported) as info:
            algo.ask_pending(6, [first])
        message = str(info.value)
        assert "\n" not in message and f"algo={algo.name} does not support pending trials" in message
        assert "workers=1" in message
        return
    second = algo.ask_pending(6, [first])
    third = algo.ask_pending(7, [first, second])
    configs = [json.dumps(s.config, sort_keys=True, default=str) for s in (first, second, third)]
    assert len(set(configs)) == 3, f"{name} ({algo.pending_rule}) repeated a pending configuration"
    for t, s in ((7, third), (5, first), (6, second)):  # told in any order
        algo.tell(s, task.evaluate(s.config, round=t, observe=s.observe))


_ACTIVE = {"now": 0, "max": 0}
_LOCK = threading.Lock()


def _slow(config):
    with _LOCK:
        _ACTIVE["now"] += 1
        _ACTIVE["max"] = max(_ACTIVE["max"], _ACTIVE["now"])
    time.sleep(0.15)
    with _LOCK:
        _ACTIVE["now"] -= 1
    return _value(config)


def test_workers_evaluate_that_many_trials_at_once_and_log_workers_and_pending(store):
    from mlflow import MlflowClient

    _ACTIVE.update(now=0, max=0)
    result = hpoflow.minimize(_slow, SPACE, algo="gp_ei", rounds=9, seed=0, workers=3,
                              tracking={"uri": store, "experiment": "parallel"})
    assert _ACTIVE["max"] == 3 and len(result.records) == 9 and result.status is RunStatus.FINISHED
    assert sorted(int(r.metrics["trial"]) for r in result.records) == list(range(1, 10))
    assert len({tuple(r.config.values()) for r in result.records}) == 9
    assert result.best_value == min(r.value for r in result.records)
    run = MlflowClient(store).get_run(result.run_id)
    assert run.info.status == "FINISHED" and run.data.params["budget.workers"] == "3"
    pending = MlflowClient(store).get_metric_history(result.run_id, "pending")
    # pending: the other running trials, plus the next one when it was asked ahead while all 3 were busy
    assert sorted(m.step for m in pending) == list(range(1, 10)) and max(m.value for m in pending) in (2, 3)


def test_workers_are_refused_in_one_line_by_an_algorithm_without_a_pending_rule():
    with pytest.raises(ConfigError, match=r"budget.workers=2: algo=ucb1 does not support pending trials") as info:
        hpoflow.minimize(_value, {"x": ("int", 0, 4), "y": ("int", 0, 3)}, algo="ucb1", rounds=4, workers=2)
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="budget.workers=0 must be a positive integer"):
        hpoflow.minimize(_value, SPACE, algo="random", rounds=4, workers=0)
    with pytest.raises(ConfigError, match="budget.executor='gpu' is unknown; allowed: thread, process, ray"):
        hpoflow.minimize(_value, SPACE, algo="random", rounds=4, workers=2, executor="gpu")
    if importlib.util.find_spec("ray") is None:  # the default install: executor=ray refused in one line
        with pytest.raises(ConfigError, match=r"budget.executor=ray needs Ray, which is not installed: pip install "
                                              r"'hpoflow\[cluster\]'") as info:
            hpoflow.minimize(_value, SPACE, algo="random", rounds=4, workers=2, executor="ray")
        assert "\n" not in str(info.value)


def test_a_failing_objective_with_workers_fails_the_run_with_every_completed_round_logged(store):
    from mlflow import MlflowClient

    from hpoflow.runner.loop import ObjectiveError

    def flaky(config):
        time.sleep(0.05)
        if config["x"] > 0.5:
            raise RuntimeError("diverged")
        return _value(config)

    with pytest.raises(ObjectiveError, match="diverged"):
        hpoflow.minimize(flaky, SPACE, algo="random", rounds=30, seed=0, workers=3, tracking=store)
    (run,) = MlflowClient(store).search_runs([MlflowClient(store).get_experiment_by_name("flaky")
                                                   .experiment_id])
    assert run.info.status == "FAILED"
    steps = sorted(m.step for m in MlflowClient(store).get_metric_history(run.info.run_id, "query_cost"))
    assert steps == list(range(1, len(steps) + 1)) and steps  # completed rounds, each once


def test_process_workers_run_a_module_level_objective(tmp_path):
    result = hpoflow.minimize(_value, SPACE, algo="random", rounds=4, seed=0, workers=2, executor="process")
    assert len(result.records) == 4 and all(math.isfinite(r.value) for r in result.records)
    assert sorted(int(r.metrics["trial"]) for r in result.records) == [1, 2, 3, 4]


CRASH = """
import json, os, signal, sys, threading, time
import hpoflow

uri, checkpoint, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
calls, lock = [0], threading.Lock()


def objective(config):
    with lock:
        calls[0] += 1
        n = calls[0]
    if n == kill_at:  # trials are pending (2 more running) when the process dies
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05 * (1 + (n * 7) % 3))  # uneven durations: trials end out of order
    return (config["x"] - 0.3) ** 2 + (config["y"] + 0.2) ** 2


result = hpoflow.minimize(objective, {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, algo="gp_ei",
                          rounds=10, seed=2, workers=3, tracking=uri, checkpoint=checkpoint)
print(json.dumps({"run_id": result.run_id, "n": len(result.records)}))
"""


@pytest.mark.cli
def test_a_crash_with_trials_pending_resumes_and_logs_every_step_exactly_once(tmp_path, store):
    from mlflow import MlflowClient

    script = tmp_path / "crash.py"
    script.write_text(CRASH)

    def run(kill_at: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), store, str(tmp_path / "ck.json"), str(kill_at)],
                              cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300, check=False)

    victim = run(7)  # call 7 starts once 4 trials are told; 2 others are still running
    assert victim.returncode == -signal.SIGKILL, victim.stderr[-3000:]
    resumed = run(0)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    out = json.loads(resumed.stdout.splitlines()[-1])
    client = MlflowClient(store)
    run_ = client.get_run(out["run_id"])  # the killed run itself was continued
    assert run_.info.status == "FINISHED" and int(run_.data.tags["resumed_at_round"]) >= 4 and out["n"] == 10
    for key in ("value", "query_cost", "trial"):
        steps = sorted(m.step for m in client.get_metric_history(out["run_id"], key))
        assert steps == list(range(1, 11)), key  # every step exactly once


@pytest.mark.cli
def test_the_cli_runs_budget_workers_and_refuses_it_in_one_line(run_cli, store):
    from mlflow import MlflowClient

    run_cli("algo=gp_ei", "task=branin", "budget.rounds=6", "budget.workers=3", f"tracking.uri={store}",
            "progress=false")
    client = MlflowClient(store)
    (run,) = client.search_runs([client.get_experiment_by_name("branin").experiment_id])
    assert run.info.status == "FINISHED" and run.data.params["budget.workers"] == "3"
    assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "pending")) == list(range(1, 7))
    bad = run_cli("algo=ucb1", "task=tv_bandit", "budget.workers=2", "tracking=off", check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    lines = [line for line in bad.stderr.splitlines() if "budget.workers=2" in line]
    assert len(lines) == 1 and "algo=ucb1 does not support pending trials" in lines[0]
    if importlib.util.find_spec("ray") is None:
        bad = run_cli("algo=random", "task=branin", "budget.workers=2", "budget.executor=ray", "tracking=off",
                      check=False)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr
        assert "budget.executor=ray needs Ray, which is not installed" in bad.stderr


def test_the_config_hash_keeps_one_worker_runs_and_separates_parallel_ones():
    from hpoflow.store import sweeps

    raw = {"algo": {"name": "gp_ei"}, "task": {"name": "branin"}, "seed": 0, "budget": {"rounds": 10, "cost": None}}
    before = sweeps.config_hash(raw)  # a run made before budget.workers existed
    assert sweeps.config_hash({**raw, "budget": {**raw["budget"], "workers": 1, "executor": "thread"}}) == before
    assert sweeps.config_hash({**raw, "budget": {**raw["budget"], "workers": 1, "executor": "process"}}) == before
    assert sweeps.config_hash({**raw, "budget": {**raw["budget"], "workers": 4, "executor": "thread"}}) != before


def test_a_second_pending_ask_is_refused_in_one_line_and_the_study_goes_on():
    study = Study({"n": ("int", 0, 4)}, algo="ucb1", rounds=3)
    first = study.ask()
    with pytest.raises(PendingNotSupported, match=r"^algo=ucb1 does not support pending trials \(a bandit") as info:
        study.ask()
    assert "\n" not in str(info.value)
    study.tell(first, 1.0)
    study.tell(study.ask(), 0.5)  # nothing was recorded for the refused ask
    assert [r.round for r in study.records] == [1, 2] and not study.done


def test_snapped_mixed_spaces_never_repeat_a_pending_configuration():
    space = {"a": ("int", 0, 300), "b": ("int", 0, 300)}  # 90,601 cells: searched and snapped, not enumerated
    study = Study(space, algo="gp_ei", rounds=12, seed=0, discrete="snap")
    for trial in [study.ask() for _ in range(4)]:
        study.tell(trial, abs(trial.config["a"] - 150) + abs(trial.config["b"] - 40))
    pending = [study.ask() for _ in range(5)]
    keys = [json.dumps(t.config, sort_keys=True) for t in pending]
    assert len(set(keys)) == 5


def test_the_refit_pacer_refits_once_per_generation_and_sooner_while_the_data_is_small():
    from hpoflow.algorithms.pending import RefitPacer

    pacer = RefitPacer()
    assert not pacer.deferring and not pacer.due()
    pacer.saw(3)  # 4 trials at once
    pacer.refitted(2)
    pacer.stale = 1
    assert pacer.deferring and pacer.due()  # grown by half of 2 points
    pacer.refitted(20)
    pacer.stale = 3
    assert not pacer.due()
    pacer.stale = 4
    assert pacer.due()  # one generation of 4 workers


def test_conditioning_without_a_refit_matches_the_gp_extended_with_its_hyperparameters_kept():
    from hpoflow.algorithms.pending import condition
    from hpoflow.surrogates.gp import ExactGP

    g = torch.Generator().manual_seed(0)
    X, y = torch.rand(8, 2, generator=g, dtype=torch.float64), torch.rand(8, generator=g, dtype=torch.float64)
    model = ExactGP(2)
    model.fit(X[:6], y[:6])
    lengthscale = model.lengthscale.clone()
    assert condition(model, X[6:], y[6:]) and model.n == 8
    assert torch.equal(model.lengthscale, lengthscale)  # no refit
    exact = ExactGP(2)
    exact.fit(X[:6], y[:6])
    exact.config = dataclasses.replace(exact.config, refit_every="never")
    exact.update(X[6:], y[6:])
    Xs = torch.rand(5, 2, generator=g, dtype=torch.float64)
    for a, b in zip(model.posterior(Xs), exact.posterior(Xs)):
        assert torch.allclose(a, b, atol=1e-10)
    assert not condition(ExactGP(2), X[:1], y[:1])  # an unfitted GP: the caller updates it as usual



def test_fantasies_are_the_gp_conditioned_on_each_joint_draw_of_the_pending_outcomes():
    import copy

    from hpoflow.algorithms.pending import Fantasies, believer
    from hpoflow.surrogates.gp import ExactGP

    g = torch.Generator().manual_seed(1)
    X, y = torch.rand(7, 2, generator=g, dtype=torch.float64), torch.rand(7, generator=g, dtype=torch.float64)
    model = ExactGP(2)
    model.fit(X, y)
    X_pending = torch.rand(3, 2, generator=g, dtype=torch.float64)
    fantasies = Fantasies(believer(model, X_pending), model.n, g, n_fantasies=4)
    Xs = torch.rand(5, 2, generator=g, dtype=torch.float64)
    means, var = fantasies.posterior(Xs)
    assert means.shape == (5, 4) and var.shape == (5,)
    assert fantasies.outcomes.std(0).min() > 0  # the draws differ
    for m in range(4):  # the GP extended with draw m's outcomes (given in y's units), hyperparameters kept
        exact = copy.copy(model)
        for x, z in zip(X_pending, fantasies.outcomes[m]):
            exact.extend(x, z * model.y_std + model.y_mean)
        mean_m, var_m = exact.posterior(Xs, standardized=True)
        assert torch.allclose(means[:, m], mean_m, atol=1e-8) and torch.allclose(var, var_m, atol=1e-10)
    assert model.n == 7  # the model itself is untouched


def test_fantasy_ei_at_a_pending_point_is_what_is_left_once_its_outcome_is_known():
    from hpoflow.acquisition.functions import log_expected_improvement
    from hpoflow.algorithms.pending import Fantasies, believer
    from hpoflow.surrogates.gp import ExactGP

    X = torch.tensor([[0.1], [0.3], [0.5], [0.7]], dtype=torch.float64)
    model = ExactGP(1)
    model.fit(X, X.squeeze(-1))  # rising reward: the believed mean past 0.7 is above the best seen
    pending = torch.tensor([[0.85]], dtype=torch.float64)
    kb = believer(model, pending)
    best = model.standardize(X.squeeze(-1)).max()
    kb_log_ei = log_expected_improvement(*kb.posterior(pending, standardized=True), best)
    fantasy_log_ei = Fantasies(kb, model.n, torch.Generator().manual_seed(0)).log_ei(best)(pending)
    # the believer keeps EI = mean - best > 0 at the pending point itself (its incumbent ignores it), so the next
    # point may land beside it; averaged over its drawn outcomes, each draw's incumbent includes it
    assert float(kb_log_ei) > math.log(0.05) and float(fantasy_log_ei) < float(kb_log_ei) - 2.0


def test_gp_ei_asks_with_pending_trials_by_fantasies_and_half_the_restarts(monkeypatch):
    from hpoflow.algorithms import gp_bo

    algo = hpoflow.make_algorithm("gp_ei", SPACE, seed=0, rounds=12)
    for t in range(1, 4):
        s = algo.ask(t)
        algo.tell(s, _value(s.config))
    seen, maximize = [], gp_bo.acq.maximize

    def spy(fn, dim, generator, config, *args, **kwargs):
        seen.append((config.num_restarts, algo.fantasies is not None))
        return maximize(fn, dim, generator, config, *args, **kwargs)

    monkeypatch.setattr(gp_bo.acq, "maximize", spy)
    first = algo.ask(4)
    second = algo.ask_pending(5, [first])
    assert seen == [(10, False), (5, True)] and algo.fantasies is None and algo.pending_rule == "fantasies"
    assert not torch.allclose(first.x, second.x, atol=1e-3)


def test_turbo_draws_from_the_region_once_two_design_points_are_observed_the_rest_pending():
    study = Study(SPACE, algo="turbo", rounds=16, seed=0)  # design: min(2 d, 16 // 4) = 4 points
    design = [study.ask() for _ in range(4)]
    for trial in design[:2]:
        study.tell(trial, _value(trial.config))
    trial = study.ask()  # the design all asked, two of it observed and two pending
    assert trial.suggestion.info["phase"] == 1.0 and "tr_length" in trial.suggestion.info


@pytest.mark.parametrize("paced", [False, True])
def test_gp_ei_refits_its_gp_with_trials_pending_as_it_would_without(monkeypatch, paced):
    """Pending asks leave the surrogate's own refit schedule alone (the refit pacer cost Branin's regret at 4
    workers: ``gp_bo.PACED_REFITS``); with the pacer on, the same tells give another GP."""
    from hpoflow.algorithms import gp_bo
    from hpoflow.core.records import Evaluation, Suggestion

    monkeypatch.setattr(gp_bo, "PACED_REFITS", paced)
    with_pending, alone = (hpoflow.make_algorithm("gp_ei", SPACE, seed=0, rounds=16) for _ in range(2))
    X = torch.rand(12, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    told = [Suggestion(with_pending.task.space.decode(x), x) for x in X]
    for i, s in enumerate(told):
        if i >= 4:  # three trials pending at each ask once the design is observed
            with_pending.ask_pending(i + 1, told[i + 1:i + 4])
        for algo in (with_pending, alone):
            algo.tell(s, Evaluation(_value(s.config)))
    Xs = torch.rand(6, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    same = all(torch.allclose(a, b, atol=1e-9) for a, b in zip(with_pending.model.posterior(Xs),
                                                               alone.model.posterior(Xs)))
    assert same != paced
