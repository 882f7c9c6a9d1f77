"""Pausable trials: ``minimize(train, ...)`` with ``def train(config, epochs, state=None)`` continues each trial
from the state it returned at its last level and is charged only the epochs it adds; a ``Study`` trial does the
same with ``trial.state`` and ``tell(trial, value, state=...)``."""
from __future__ import annotations

import threading

import pytest

import hpoflow
from hpoflow import Study

SPACE = {"lr": ("log", 1e-3, 1.0), "x0": ("float", -2.0, 2.0)}


class Model:
    """A tiny deterministic SGD on the quadratic (w - 0.5)^2, one step per epoch."""

    def __init__(self, config):
        self.w, self.epochs = config["x0"], 0

    def train_to(self, config, epochs):
        for _ in range(self.epochs, int(epochs)):
            self.w -= config["lr"] * 2 * (self.w - 0.5)
            self.epochs += 1

    def loss(self):
        return (self.w - 0.5) ** 2


class Counted:
    """The objectives, counting every epoch they train."""

    def __init__(self):
        self.trained, self.lock = 0, threading.Lock()

    def _train(self, config, epochs, model):
        before = model.epochs
        model.train_to(config, epochs)
        with self.lock:
            self.trained += model.epochs - before
        return model

    def pausable(self, config, epochs, state=None):
        model = self._train(config, epochs, state if state is not None else Model(config))
        return model.loss(), model

    def scratch(self, config, epochs):
        return self._train(config, epochs, Model(config)).loss()


@pytest.mark.parametrize("algo, settings", [("hyperband", {"rounds": 40}), ("freeze_thaw", {"rounds": 30})])
def test_a_pausable_objective_is_charged_the_epochs_it_trains_and_finds_what_retraining_finds(algo, settings):
    keep, again = Counted(), Counted()
    a = hpoflow.minimize(keep.pausable, SPACE, algo=algo, fidelity=("epochs", 1, 27), seed=0, **settings)
    b = hpoflow.minimize(again.scratch, SPACE, algo=algo, fidelity=("epochs", 1, 27), seed=0, **settings)
    assert a.summary["query_cost"] == keep.trained  # no epoch trained twice, every one charged once
    assert b.summary["query_cost"] == again.trained
    assert [(r.config, r.fidelity, r.value) for r in a.records] == [(r.config, r.fidelity, r.value) for r in b.records]
    assert a.best_value == b.best_value and a.best_config == b.best_config
    if algo == "hyperband":  # one bracket of 27 epochs: 27 x 1, 9 x 3, 3 x 9, 1 x 27
        assert (keep.trained, again.trained) == (81, 108)
    else:
        assert keep.trained < again.trained
    print(algo, "charged", a.summary["query_cost"], "trained", keep.trained, "| from scratch", again.trained)


class Stop(KeyboardInterrupt):
    pass


def stopping(counted, after, model=Model):
    """``counted.pausable`` that stops the run (Ctrl-C) at its call ``after + 1``, before training."""
    calls = []

    def train(config, epochs, state=None):
        calls.append(epochs)
        if len(calls) == after + 1:
            raise Stop("stopped mid-way")
        m = counted._train(config, epochs, state if state is not None else model(config))
        return m.loss(), m
    return train


def test_a_pausable_objective_continues_its_trials_after_a_resume(tmp_path):
    path, counted, whole = tmp_path / "run.ckpt", Counted(), Counted()
    args = dict(algo="hyperband", fidelity=("epochs", 1, 27), seed=0, rounds=40, checkpoint=path, name="train")
    with pytest.raises(Stop):  # killed after the rung of 3 epochs (36 rounds)
        hpoflow.minimize(stopping(counted, 36), SPACE, **args)
    assert counted.trained == 27 + 9 * 2 and list((tmp_path / "run.trial_states").glob("*.pkl"))
    resumed = hpoflow.minimize(counted.pausable, SPACE, **args)  # called again: continues the saved states
    full = hpoflow.minimize(whole.pausable, SPACE, algo="hyperband", fidelity=("epochs", 1, 27), seed=0, rounds=40)
    assert counted.trained == whole.trained == 81 == resumed.summary["query_cost"] == full.summary["query_cost"]
    assert [(r.config, r.value) for r in resumed.records] == [(r.config, r.value) for r in full.records]


class Unpicklable(Model):
    def __reduce__(self):
        raise TypeError("cannot pickle a model holding a lock")


def test_a_state_pickle_cannot_write_is_retrained_in_full_after_a_resume(tmp_path):
    counted = Counted()

    def train(config, epochs, state=None):
        model = state if state is not None else Unpicklable(config)
        counted._train(config, epochs, model)
        return model.loss(), model

    args = dict(algo="hyperband", fidelity=("epochs", 1, 27), seed=0, rounds=40, checkpoint=tmp_path / "run.ckpt",
                name="train")
    with pytest.raises(Stop):  # killed after the first rung (27 rounds of 1 epoch)
        hpoflow.minimize(stopping(counted, 27, Unpicklable), SPACE, **args)
    assert counted.trained == 27
    resumed = hpoflow.minimize(train, SPACE, **args)
    # the rung of 3 epochs is retrained from scratch and charged in full; the later rungs continue (in memory)
    assert counted.trained == 27 + 9 * 3 + 3 * 6 + 18 == resumed.summary["query_cost"]


def test_a_function_without_state_is_charged_its_whole_level():
    again = Counted()
    r = hpoflow.minimize(again.scratch, SPACE, algo="hyperband", fidelity=("epochs", 1, 27), seed=0, rounds=40)
    assert r.summary["query_cost"] == again.trained == 108


def _study(counted, keep):
    with Study(SPACE, algo="hyperband", fidelity=("epochs", 1, 27), rounds=40, seed=0) as s:
        while not s.done:
            trial = s.ask()
            model = trial.state if keep and trial.state is not None else Model(trial.config)
            if keep and trial.state is not None:
                assert model.epochs == trial.start  # the level its configuration reached
            counted._train(trial.config, trial.fidelity, model)
            s.tell(trial, model.loss(), state=model if keep else None)
    return s.result()


def test_a_study_trial_continues_from_its_state_and_is_charged_the_steps_it_trains():
    keep, again = Counted(), Counted()
    a, b = _study(keep, True), _study(again, False)
    assert (a.summary["query_cost"], keep.trained) == (81, 81)
    assert (b.summary["query_cost"], again.trained) == (108, 108)
    assert [(r.config, r.fidelity, r.value) for r in a.records] == [(r.config, r.fidelity, r.value) for r in b.records]
    assert a.best_value == b.best_value


def test_a_study_stopped_mid_way_continues_its_trials_from_the_states_beside_its_checkpoint(tmp_path):
    counted, path = Counted(), tmp_path / "study.ckpt"

    def run(study, tells):
        for _ in range(tells):
            trial = study.ask()
            model = trial.state if trial.state is not None else Model(trial.config)
            counted._train(trial.config, trial.fidelity, model)
            study.tell(trial, model.loss(), state=model)

    args = dict(algo="hyperband", fidelity=("epochs", 1, 27), rounds=40, seed=0, checkpoint=path)
    first = Study(SPACE, **args)
    run(first, 36)  # the rungs of 1 and 3 epochs, then Ctrl-C
    first.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert counted.trained == 27 + 9 * 2
    with Study(SPACE, **args) as again:
        run(again, 4)
    assert counted.trained == 81 == again.result().summary["query_cost"]


def test_thread_workers_continue_trials_and_charge_the_epochs_trained():
    counted = Counted()
    r = hpoflow.minimize(counted.pausable, SPACE, algo="asha", fidelity=("epochs", 1, 27), seed=0, rounds=30,
                         workers=2)
    assert r.summary["query_cost"] == counted.trained
    assert any(rec.cost < rec.fidelity for rec in r.records)  # promotions continued
