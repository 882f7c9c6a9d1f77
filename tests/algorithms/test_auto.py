"""algo=auto: the rule's branches on small spaces, delegation (same trajectory as its pick), resume, tags, the CLI."""
from __future__ import annotations

from functools import partial

import pytest
import torch

from hpoflow.algorithms.auto import Auto, declared_noise
from hpoflow.algorithms.auto_config import AutoConfig
from hpoflow.algorithms.auto_rule import Choice, SpaceProfile, decide, profile
from hpoflow.algorithms.base import Algorithm, BuildContext
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.algorithms.turbo import TuRBO
from hpoflow.core.checkpoint import Checkpointer, load
from hpoflow.core.hardware import seed_everything
from hpoflow.core.space import Bool, Categorical, Float, Int, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.runner.restore import _overrides
from hpoflow.surrogates.configs import GPConfig
from tests.test_checkpoint import Noisy, _trajectory


def _ctx(task, rounds: int, seed: int = 3) -> BuildContext:
    from hpoflow.surrogates.gp import build

    surrogate = partial(build, GPConfig(max_iter=30), dtype=torch.float64, device=torch.device("cpu"))
    return BuildContext(task=task, rounds=rounds, seed=seed, surrogate=surrogate)


# -- the space profile and the choice's record ----------------------------------------------------------------

def test_profile_counts_parameters_by_type():
    space = SearchSpace.of(Float("a", 0, 1), Float("b", 1e-3, 1, log=True), Int("n", 1, 5),
                           Categorical("c", ("x", "y")), Bool("flag"))
    p = profile(space)
    assert (p.floats, p.integers, p.categoricals, p.dim) == (2, 1, 2, 5)
    assert p.discrete_share == pytest.approx(0.6) and p.finite_size is None
    assert profile(SearchSpace.of(Int("n", 1, 5), Bool("f"))).finite_size == 10


def test_choice_tags_and_summary_name_the_pick_its_settings_and_the_reason():
    c = Choice("gp_ei", "because", {"discrete": "snap"})
    assert c.tags() == {"auto.choice": "gp_ei", "auto.settings": "discrete=snap", "auto.reason": "because"}
    assert c.summary() == "auto picked algo=gp_ei algo.discrete=snap: because"
    assert Choice("turbo", "r").tags()["auto.settings"] == ""


def test_noise_setting_is_checked_and_read_from_the_task():
    with pytest.raises(ValueError, match=r"algo.noise='loud' is unknown; allowed: auto, noisy, noiseless"):
        AutoConfig(noise="loud")

    class T:
        noise_std = 0.5

    assert declared_noise(AutoConfig(), T()) and not declared_noise(AutoConfig(), object())
    assert not declared_noise(AutoConfig(noise="noiseless"), T())
    assert declared_noise(AutoConfig(noise="noisy"), object())


# -- delegation ---------------------------------------------------------------------------------------------

def _choice_for(task, rounds: int) -> Choice:
    return decide(profile(task.space), rounds, declared_noise(AutoConfig(), task), finite=task.candidates is not None)


def test_auto_runs_exactly_the_algorithm_it_picked():
    """Same seed, same budget: auto's trajectory is its pick's, built directly (delegation adds nothing)."""
    rounds = 6
    seed_everything(3)
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, rounds))
    via_auto = run(task, auto, None, Budget(rounds))
    seed_everything(3)
    task = Noisy()
    from hpoflow.algorithms.auto import build_choice

    direct = run(task, build_choice(_choice_for(task, rounds), _ctx(task, rounds)), None, Budget(rounds))
    assert _trajectory(via_auto.records) == _trajectory(direct.records)
    assert type(auto.delegate).__name__ == {"gp_ei": "GPEI", "turbo": "TuRBO", "random": "RandomSearch"}[
        auto.choice.algo]
    assert auto.run_tags() == auto.choice.tags()


def test_interrupted_then_resumed_auto_run_equals_uninterrupted(tmp_path):
    rounds = 9

    def make(task):
        return Auto(AutoConfig(), _ctx(task, rounds))

    seed_everything(3)
    reference = run(Noisy(), make(Noisy()), None, Budget(rounds))
    seed_everything(3)
    task = Noisy(interrupt_at=6)
    with pytest.raises(KeyboardInterrupt):
        run(task, make(task), None, Budget(rounds), checkpoint=Checkpointer(tmp_path / "ck.json"))
    state = load(tmp_path / "ck.json")
    assert state.round == 5
    assert state.algorithm is None  # gp_ei/turbo/random keep no state: resume replays through auto's ask/tell
    seed_everything(3)
    task = Noisy()
    resumed = run(task, make(task), None, Budget(rounds), resume=state, checkpoint=Checkpointer(tmp_path / "ck.json"))
    assert _trajectory(resumed.records) == _trajectory(reference.records)
    assert resumed.summary == reference.summary


def test_a_delegate_with_a_state_is_saved_and_restored_through_auto():
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, 6))
    assert not _overrides(auto, "state_dict", Algorithm)  # its pick replays

    class Stateful(RandomSearch):
        def state_dict(self):
            return {"generator": self.generator.get_state()}

        def load_state_dict(self, state):
            self.generator.set_state(state["generator"])

    from hpoflow.algorithms.configs import RandomConfig

    auto.delegate = Stateful(RandomConfig(), _ctx(task, 6))
    assert _overrides(auto, "state_dict", Algorithm)
    state = auto.state_dict()
    first = auto.ask(1).config
    auto.load_state_dict(state)
    assert auto.ask(1).config == first
    with pytest.raises(ValueError, match="resume: the checkpoint's algo=auto ran turbo_x"):
        auto.load_state_dict({**state, "choice": "turbo_x"})


def test_pending_trials_go_to_the_pick():
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, 12))
    for t in range(1, 6):
        s = auto.ask(t)
        auto.tell(s, task.evaluate(s.config, round=t))
    first = auto.ask(6)
    second = auto.ask_pending(7, [first])
    assert first.config != second.config
    assert isinstance(auto.delegate, (GPEI, TuRBO, RandomSearch))


@pytest.mark.cli
def test_cli_auto_prints_and_tags_its_choice(run_cli, tmp_path):
    """One subprocess: the summary's auto lines and the MLflow run's auto.* tags."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    proc = run_cli("algo=auto", "task=branin", "budget.rounds=4", f"tracking.uri={uri}", "progress=false")
    lines = proc.stdout.splitlines()
    choice = next(line.split(": ", 1)[1] for line in lines if line.startswith("auto.choice: "))
    assert choice in ("gp_ei", "turbo", "random")
    assert any(line.startswith("auto.reason: ") and len(line) > 20 for line in lines)
    client = MlflowClient(tracking_uri=uri)
    (run_,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    tags = run_.data.tags
    assert tags["algo"] == "auto" and tags["auto.choice"] == choice and tags["auto.reason"]
    assert tags["auto.choice"] == decide(SpaceProfile(floats=2, integers=0, categoricals=0), 4).algo
