"""The multi-fidelity peers (optuna_tpe_hyperband, smac_hyperband, dehb, raytune_asha, Syne Tune's synetune_asha,
synetune_bohb, synetune_ashabore, synetune_ashacqr): the levels a trial is
evaluated at, that a pruned or stopped trial stops, that the fidelity the task gets is the library's budget, the
reward direction the library sees, failures told as the library's failures, several pending trials, determinism,
and one CLI sweep into MLflow. Each case skips cleanly when its library is absent."""
from __future__ import annotations

import math
from typing import Any

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.core.records import Direction, Evaluation, OnError
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.base import Task
from hpoflow.tasks.multi_fidelity import make_branin_mf
from tests.conftest import mlflow_runs

SYNETUNE = ("synetune_asha", "synetune_bohb", "synetune_ashabore", "synetune_ashacqr")
MF_PEERS = ("optuna_tpe_hyperband", "smac_hyperband", "dehb", "raytune_asha", *SYNETUNE)
LEVELS = [1, 3, 9, 27]  # rung levels of (resource, 1, 27) with eta = 3


class Recorded(Task):
    """branin_mf (resource 1..27) that records every (config_id, level, config) it is evaluated at; ``sign = +1``
    maximises ``-branin`` (the same problem, the other direction); configurations with ``x0 > fail_above`` raise."""

    def __init__(self, sign: float = -1.0, fail_above: float = math.inf) -> None:
        self.inner = make_branin_mf(max_resource=27)
        self.name, self.space, self.fidelity = "recorded_mf", self.inner.space, self.inner.fidelity
        self.direction = Direction.MAXIMIZE if sign > 0 else Direction.MINIMIZE
        self.sign, self.fail_above = sign, fail_above
        self.optimum = -self.inner.optimum if sign > 0 else self.inner.optimum
        self.seen: list[tuple[int | None, float, dict[str, Any]]] = []

    def evaluate(self, config, *, round, observe=True):
        raise AssertionError("a multi-fidelity peer evaluates through evaluate_at")

    def evaluate_at(self, config, *, fidelity, config_id, round, observe=True):
        self.seen.append((config_id, fidelity, dict(config)))
        if config["x0"] > self.fail_above:
            raise RuntimeError("diverged")
        ev = self.inner.evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round, observe=observe)
        flip = 1.0 if self.sign < 0 else -1.0
        return Evaluation(flip * ev.value, flip * ev.true_value, ev.cost, fidelity=ev.fidelity,
                          curve=[[s, flip * v] for s, v in ev.curve])


def _build(name: str, task: Task, rounds: int, seed: int = 0, **settings):
    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip(f"{name} needs '{entry.missing()}'")
    return entry.load()(entry.make_config(**settings), BuildContext(task=task, rounds=rounds, seed=seed))


def _by_config(seen):
    """config id -> the levels it was evaluated at, in order, and its configurations."""
    out: dict[int, list[float]] = {}
    configs: dict[int, list[dict]] = {}
    for cid, level, config in seen:
        out.setdefault(cid, []).append(level)
        configs.setdefault(cid, []).append(config)
    return out, configs


@pytest.mark.parametrize("name", MF_PEERS)
def test_each_round_is_one_level_and_a_configuration_keeps_its_id_up_the_levels(name):
    task = Recorded()
    result = run(task, _build(name, task, rounds=60), budget=Budget(60))
    assert len(result.records) == 60 and all(r.fidelity in LEVELS for r in result.records)
    levels, configs = _by_config(task.seen)
    assert [r.config_id for r in result.records] == [cid for cid, _, _ in task.seen]
    for cid, seq in levels.items():
        assert seq == sorted(set(seq)), f"config {cid} went down or repeated a level: {seq}"
        assert all(c == configs[cid][0] for c in configs[cid])  # one id, one configuration
    assert any(len(seq) > 1 for seq in levels.values())  # something was promoted (continued)
    assert any(seq[-1] == 27 for seq in levels.values())  # and reached the full fidelity
    # the task continued promoted configurations: a round costs only the levels it added
    assert result.summary["query_cost"] == sum(max(seq) for seq in levels.values())


def test_optuna_trial_climbs_the_rung_levels_until_pruned_and_reports_each_as_its_step():
    task = Recorded()
    algo = _build("optuna_tpe_hyperband", task, rounds=80)
    run(task, algo, budget=Budget(80))
    pruner = algo.study.pruner
    assert (pruner._min_resource, pruner._max_resource, pruner._reduction_factor) == (1, 27, 3)
    levels, _ = _by_config(task.seen)
    from optuna.trial import TrialState

    for trial in algo.study.trials:
        seq = levels[trial.number]
        assert seq == LEVELS[:len(seq)]  # the rung levels from the lowest, in order
        assert sorted(trial.intermediate_values) == seq  # each level reported as its step
        if trial.state == TrialState.PRUNED:  # a pruned trial stops where it was pruned
            assert seq[-1] < 27 and trial.value == trial.intermediate_values[seq[-1]]
        elif trial.state == TrialState.COMPLETE:
            assert seq == LEVELS
        else:  # the one still running when the budget ended
            assert trial.state == TrialState.RUNNING and trial.number == algo.study.trials[-1].number
    assert any(t.state == TrialState.PRUNED for t in algo.study.trials)


def test_ray_asha_stops_a_trial_below_the_rungs_cutoff_and_continues_the_others():
    task = Recorded()
    algo = _build("raytune_asha", task, rounds=10)
    a, b = algo.ask(), algo.ask()
    c = algo.ask_pending(3, [a, b])  # three trials started before any result
    assert [s.fidelity for s in (a, b, c)] == [1, 1, 1] and len({a.config_id, b.config_id, c.config_id}) == 3
    algo.tell(a, Evaluation(10.0))  # minimised: the first result at a rung always continues
    algo.tell(b, Evaluation(5.0))   # better than a: continues
    algo.tell(c, Evaluation(20.0))  # worse than Ray's cutoff (the 1 - 1/3 percentile of -10, -5): stopped
    nxt = [algo.ask(), algo.ask(), algo.ask()]
    assert [(s.config_id, s.fidelity) for s in nxt] == [(a.config_id, 3), (b.config_id, 3), (c.config_id + 1, 1)]
    assert set(algo.scheduler._trial_info) == {f"{a.config_id:05d}", f"{b.config_id:05d}", f"{c.config_id + 1:05d}"}


@pytest.mark.parametrize("name", ["smac_hyperband", "dehb"])
def test_the_fidelity_the_task_gets_is_the_librarys_budget(name):
    task = Recorded()
    algo = _build(name, task, rounds=40)
    budgets = []
    for round in range(1, 41):
        s = algo.ask(round)
        job = algo.running[id(s)]
        budget = job.budget if name == "smac_hyperband" else job["fidelity"]
        library_id = (algo.smac.runhistory.get_config_id(job.config) if name == "smac_hyperband"
                      else job["config_id"])
        assert s.fidelity == round_level(budget) and s.config_id == library_id
        budgets.append(budget)
        algo.tell(s, task.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=round))
    assert sorted({round_level(b) for b in budgets}) == LEVELS[:len(set(map(round_level, budgets)))]
    assert [f for _, f, _ in task.seen] == [round_level(b) for b in budgets]


def round_level(budget: float) -> int:
    """A library's float budget (``27 * 3^-k``) as the integer level the task gets."""
    assert abs(budget - round(budget)) < 1e-6, budget
    return int(round(budget))


@pytest.mark.parametrize("name", MF_PEERS)
def test_a_maximised_task_is_told_to_the_library_in_its_own_direction(name):
    task = Recorded(sign=1.0)  # maximise -branin: the library must see the same problem as for minimise branin
    algo = _build(name, task, rounds=30)
    result = run(task, algo, budget=Budget(30))
    values = sorted(r.value for r in result.records)
    if name == "optuna_tpe_hyperband":
        assert algo.study.direction.name == "MAXIMIZE"
        told = [v for t in algo.study.trials for v in t.intermediate_values.values()]
    elif name == "smac_hyperband":  # SMAC minimises cost = -value
        told = [-v.cost for v in algo.smac.runhistory.values()]
    elif name == "dehb":  # DEHB minimises fitness = -value
        told = [-h[2] for h in algo.dehb.history]
    elif name in SYNETUNE:  # Syne Tune's ASHA with do_minimize=False ranks -value (it minimises metric * -1)
        assert algo.scheduler.metric_multiplier == -1
        told = [-m["value"] for _, rung in algo.scheduler.brackets[0].rungs for m in rung.values()]
        assert told and set(told) <= set(values)
        return
    else:  # Ray's ASHA with mode=max ranks +value
        assert algo.scheduler._metric_op == 1.0
        told = [v for _, rung in algo.scheduler._brackets[0]._rungs for v in rung.values()]
        assert set(told) <= set(values)
        return
    assert sorted(told) == pytest.approx(values)


@pytest.mark.parametrize("name", MF_PEERS)
def test_failures_are_told_as_the_librarys_failures_and_the_run_goes_on(name):
    # a third of branin's x0 range fails (two thirds for ASHACQR: on seed 0 its five random draws and its quantile
    # model's proposals all fall below x0 = 5 within 30 rounds)
    task = Recorded(fail_above=0.0 if name == "synetune_ashacqr" else 5.0)
    algo = _build(name, task, rounds=30)
    result = run(task, algo, budget=Budget(30), on_error=OnError.SKIP)
    failed = [r for r in result.records if r.failed]
    assert failed and len(result.records) == 30
    if name == "optuna_tpe_hyperband":
        from optuna.trial import TrialState

        assert sum(t.state == TrialState.FAIL for t in algo.study.trials) == len(failed)
    elif name == "smac_hyperband":
        from smac.runhistory.enumerations import StatusType

        assert sum(v.status == StatusType.CRASHED for v in algo.smac.runhistory.values()) == len(failed)
    elif name == "dehb":
        assert sum(h[2] == math.inf for h in algo.dehb.history) == len(failed)
    # a trial-based library never continues a failed trial
    failed_ids = {r.config_id for r in failed}
    if name in ("optuna_tpe_hyperband", "raytune_asha", *SYNETUNE):
        assert all(r.config_id not in failed_ids or r.failed for r in result.records)


@pytest.mark.parametrize("name", MF_PEERS)
def test_several_pending_trials_are_distinct_and_told_in_any_order(name):
    task = Recorded()
    algo = _build(name, task, rounds=12)
    assert algo.pending_rule is not None
    pending = [algo.ask_pending(1, [])]
    for round in range(2, 5):
        pending.append(algo.ask_pending(round, pending))
    keys = {(s.config_id, s.fidelity) for s in pending}
    assert len(keys) == 4  # four different evaluations at once
    for round, s in reversed(list(enumerate(pending, 1))):
        algo.tell(s, task.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=round))
    s = algo.ask(5)  # and it goes on
    assert s.fidelity in LEVELS


@pytest.mark.parametrize("name", MF_PEERS)
def test_same_seed_same_trajectory_and_another_seed_another(name):
    def trajectory(seed: int):
        task = Recorded()
        run(task, _build(name, task, rounds=25, seed=seed), budget=Budget(25))
        return [(f, c) for _, f, c in task.seen]

    assert trajectory(3) == trajectory(3) and trajectory(3) != trajectory(4)


@pytest.mark.parametrize("name", MF_PEERS)
def test_a_task_without_a_fidelity_is_refused_in_one_line(name):
    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip(f"{name} needs '{entry.missing()}'")
    from hpoflow.tasks.synthetic import make_branin

    with pytest.raises(ValueError, match=rf"algo={name} needs a task with a fidelity .*task 'branin' declares none"):
        entry.load()(entry.make_config(), BuildContext(task=make_branin(), rounds=5))


def test_bad_settings_are_config_errors_naming_the_allowed():
    from hpoflow.config.settings import ConfigError, validate

    base = {"surrogate": {"name": "gp"}, "task": {"name": "branin_mf"}}
    with pytest.raises(ConfigError, match=r"algo.eta=1 must be an integer >= 2"):
        validate({**base, "algo": {"name": "smac_hyperband", "eta": 1}})
    from hpoflow.algorithms.peers.mf_config import DEHBConfig

    with pytest.raises(ValueError, match=r"algo.strategy='best3_bin' is unknown; allowed: rand1_bin"):
        DEHBConfig(strategy="best3_bin")  # validate() names the install first where dehb is absent


def test_dehb_absent_names_the_install_that_keeps_numpy():
    entry = registry.get("algorithm", "dehb")
    if not entry.missing():
        pytest.skip("dehb is installed")
    from hpoflow.core.component import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"^algo=dehb needs 'dehb', which is not installed; run: pip install "
                                                r"--no-deps dehb loguru$"):
        entry.require()


def test_every_mf_peer_runs_through_the_cli_into_mlflow(run_cli, store):
    names = [n for n in MF_PEERS if not registry.get("algorithm", n).missing()]
    if not names:
        pytest.skip("no multi-fidelity peer library is installed")
    # two rungs (1 and 3): every peer has evaluated at the full fidelity within 12 rounds, so each run has an
    # incumbent and a simple regret (both count full-fidelity evaluations only)
    run_cli("-m", f"algo={','.join(names)}", "task=branin_mf", "task.max_resource=3", "budget.rounds=12",
            f"tracking.uri={store}")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store)
    runs = mlflow_runs(store, "branin_mf")
    assert sorted(r.data.tags["algo"] for r in runs) == sorted(names)
    for r in runs:
        assert r.info.status == "FINISHED" and math.isfinite(r.data.metrics["simple_regret"])
        history = {k: {m.step: m.value for m in client.get_metric_history(r.info.run_id, k)}
                   for k in ("value", "fidelity")}
        full = [v for step, v in history["value"].items() if history["fidelity"].get(step) == 3]
        assert full and r.data.metrics["best_value"] == min(full)  # the best full-fidelity value, not any level's
        assert r.data.metrics["fidelity"] in (1, 3) and "config_id" in r.data.metrics


@pytest.mark.parametrize("name", MF_PEERS)
def test_interrupted_then_resumed_run_equals_uninterrupted(tmp_path, name):
    """Resume replays the history into a fresh adapter (asks again, tells the recorded outcomes): the same
    configurations at the same levels, under the same ids, whatever the library."""
    from hpoflow.core.checkpoint import Checkpointer, load

    class Interrupted(Recorded):
        def evaluate_at(self, config, *, fidelity, config_id, round, observe=True):
            if round == 14:
                raise KeyboardInterrupt
            return super().evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round, observe=observe)

    def trajectory(result):
        return [(r.round, r.config, r.fidelity, r.config_id, r.value) for r in result.records]

    task = Recorded()
    reference = run(task, _build(name, task, rounds=20, seed=2), None, Budget(20))
    task = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        run(task, _build(name, task, rounds=20, seed=2), None, Budget(20),
            checkpoint=Checkpointer(tmp_path / "ck.json"))
    task = Recorded()
    resumed = run(task, _build(name, task, rounds=20, seed=2), None, Budget(20), resume=load(tmp_path / "ck.json"))
    assert trajectory(resumed) == trajectory(reference)
