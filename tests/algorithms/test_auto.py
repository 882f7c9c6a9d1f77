"""algo=auto: the rule's branches on small spaces, delegation (same trajectory as its pick), resume, tags, the CLI."""
from __future__ import annotations

from functools import partial

import pytest
import torch

from hpoflow.algorithms.auto import Auto, build_choice
from hpoflow.algorithms.auto_config import AutoConfig
from hpoflow.algorithms.auto_rule import (
    LOCAL_MAX_ROUNDS_PER_DIM,
    MAX_ENUMERATED,
    SNAP_SHARE,
    TURBO_MIN_ROUNDS,
    Choice,
    SpaceProfile,
    decide,
    profile,
)
from hpoflow.algorithms.base import Algorithm, BuildContext, PendingNotSupported
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.algorithms.turbo import TuRBO
from hpoflow.core.checkpoint import Checkpointer, load
from hpoflow.core.hardware import seed_everything
from hpoflow.core.space import Bool, Categorical, Float, Int, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.runner.restore import _overrides
from hpoflow.surrogates.configs import GPConfig
from tests.core.test_checkpoint import Noisy, _trajectory


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


def _space(floats: int = 0, integers: int = 0, categoricals: int = 0, finite_size: int | None = None) -> SpaceProfile:
    return SpaceProfile(floats, integers, categoricals, finite_size)


def test_rule_finite_spaces_go_to_gp_ei_which_enumerates_them():
    assert decide(_space(categoricals=3, finite_size=27), 500).algo == "gp_ei"
    choice = decide(_space(integers=2, finite_size=100), 20)
    assert (choice.algo, choice.settings) == ("gp_ei", {}) and "100 configurations" in choice.reason
    assert decide(_space(floats=3), 100, finite=True).algo == "gp_ei"  # the task's own candidate set
    big = decide(_space(integers=3, finite_size=MAX_ENUMERATED + 1), 20)  # too many to enumerate: the share decides
    assert big.settings == {"discrete": "snap"}


def test_rule_mostly_discrete_spaces_snap_and_mixed_ones_relax():
    mostly = decide(_space(floats=2, integers=2, categoricals=1), 20)  # 3 of 5 discrete
    assert (mostly.algo, mostly.settings) == ("gp_ei", {"discrete": "snap"}) and "mostly" in mostly.reason
    assert 3 / 5 >= SNAP_SHARE > 1 / 3
    mixed = decide(_space(floats=4, integers=2), 20)  # 2 of 6 discrete (gb's Bayesmark space)
    assert (mixed.algo, mixed.settings) == ("gp_ei", {}) and "mixed" in mixed.reason
    assert decide(_space(floats=9, integers=1), 1000).algo == "gp_ei"  # a budget does not make a mixed space turbo's


def test_rule_continuous_spaces_go_to_cobyqa_at_small_budgets_per_dimension_and_to_turbo_beyond():
    enough = max(TURBO_MIN_ROUNDS, 40)
    for d in (2, 5, 10):
        choice = decide(_space(floats=d), enough)
        assert (choice.algo, choice.settings) == ("cobyqa", {}) and f"d={d}" in choice.reason
        at_most = decide(_space(floats=d), max(enough, LOCAL_MAX_ROUNDS_PER_DIM * d))
        beyond = decide(_space(floats=d), max(enough, LOCAL_MAX_ROUNDS_PER_DIM * d + 1))
        assert (at_most.algo, beyond.algo) == ("cobyqa", "turbo")
        assert f"> {LOCAL_MAX_ROUNDS_PER_DIM} x d" in beyond.reason
    if TURBO_MIN_ROUNDS > 1:
        short = decide(_space(floats=5), TURBO_MIN_ROUNDS - 1)
        assert short.algo == "gp_ei" and f"< {TURBO_MIN_ROUNDS}" in short.reason


def test_rule_reads_real_spaces():
    from hpoflow.tasks.sklearn_spaces import suite_space

    assert decide(profile(suite_space("knn")), 20).algo == "gp_ei"                  # 2 ints: 100 configurations
    assert decide(profile(suite_space("gb")), 20).settings == {}                     # 2 ints, 4 floats
    assert decide(profile(suite_space("rf", "go_ucb")), 20).settings == {"discrete": "snap"}  # all discrete, 2.6e5
    assert decide(profile(SearchSpace.of(*(Float(f"x{i}", -5, 5) for i in range(5)))), 40).algo == "cobyqa"
    assert decide(profile(SearchSpace.of(*(Float(f"x{i}", -5, 5) for i in range(5)))), 101).algo == "turbo"


# -- delegation ---------------------------------------------------------------------------------------------

def _choice_for(task, rounds: int) -> Choice:
    return decide(profile(task.space), rounds, finite=task.candidates is not None)


def test_auto_runs_exactly_the_algorithm_it_picked():
    """Same seed, same budget: auto's trajectory is its pick's, built directly (delegation adds nothing)."""
    rounds = 6
    seed_everything(3)
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, rounds))
    via_auto = run(task, auto, None, Budget(rounds))
    seed_everything(3)
    task = Noisy()
    direct = run(task, build_choice(_choice_for(task, rounds), _ctx(task, rounds)), None, Budget(rounds))
    assert _trajectory(via_auto.records) == _trajectory(direct.records)
    assert type(auto.delegate).__name__ == {"gp_ei": "GPEI", "turbo": "TuRBO", "random": "RandomSearch",
                                            "cobyqa": "LocalDFO"}[auto.choice.algo]
    assert auto.run_tags() == {**auto.choice.tags(), **auto.delegate.run_tags()}
    assert auto.run_tags().get("surrogate.output_transform") == ("power" if auto.choice.algo == "gp_ei" else None)


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


def test_with_several_workers_the_continuous_small_budget_pick_is_turbo_which_takes_pending_trials():
    assert decide(_space(floats=5), 40, workers=4).algo == "turbo"
    assert "budget.workers=4" in decide(_space(floats=5), 40, workers=4).reason
    assert decide(_space(floats=5), 40, workers=1).algo == "cobyqa"
    assert decide(_space(floats=5), 10, workers=4).algo == "gp_ei"  # the other branches already have a pending rule
    task = Noisy()
    ctx = _ctx(task, 40)
    ctx.workers = 4
    auto = Auto(AutoConfig(), ctx)
    first = auto.ask(1)
    second = auto.ask_pending(2, [first])
    assert isinstance(auto.delegate, TuRBO) and first.config != second.config


def test_pending_trials_are_refused_in_one_line_naming_auto_when_its_pick_has_no_rule():
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, 40))
    assert auto.choice.algo == "cobyqa"
    first = auto.ask(1)
    with pytest.raises(PendingNotSupported, match="algo=auto picked cobyqa .* use workers=1"):
        auto.ask_pending(2, [first])


@pytest.mark.parametrize("rounds", [6, 40, 41])
def test_auto_builds_each_of_its_picks(rounds):
    """The three branches a 2-d continuous task can take (gp_ei, cobyqa, turbo) build and run a few rounds."""
    task = Noisy()
    auto = Auto(AutoConfig(), _ctx(task, rounds))
    assert auto.choice == _choice_for(task, rounds)
    result = run(task, auto, None, Budget(4))
    assert len(result.records) == 4


@pytest.mark.cli
def test_cli_auto_prints_and_tags_its_choice(run_cli, tmp_path, new_store):
    """One subprocess: the summary's auto lines and the MLflow run's auto.* tags."""
    from mlflow.tracking import MlflowClient

    uri = new_store("store.db")
    proc = run_cli("algo=auto", "task=branin", "budget.rounds=4", f"tracking.uri={uri}", "progress=false")
    lines = proc.stdout.splitlines()
    choice = next(line.split(": ", 1)[1] for line in lines if line.startswith("auto.choice: "))
    assert choice in ("gp_ei", "turbo", "cobyqa", "random")
    assert any(line.startswith("auto.reason: ") and len(line) > 20 for line in lines)
    client = MlflowClient(tracking_uri=uri)
    (run_,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    tags = run_.data.tags
    assert tags["algo"] == "auto" and tags["auto.choice"] == choice and tags["auto.reason"]
    assert tags["auto.choice"] == decide(SpaceProfile(floats=2, integers=0, categoricals=0), 4).algo
    assert tags["auto.reason"] == decide(SpaceProfile(floats=2, integers=0, categoricals=0), 4).reason


def test_the_auto_check_studies_compose_auto_and_every_algorithm_it_picks_from():
    """experiment=auto_check (cells), auto_check_bbob and auto_check_heldout (algo sweeps): every row composes and
    validates; the held-out functions are exactly those bbob_small leaves out."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.schema import CONF_DIR, register_configs
    from hpoflow.config.settings import validate

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        bbob = compose(config_name="config", overrides=["experiment=auto_check_bbob"], return_hydra_config=True)
        algos = str(bbob.hydra.sweeper.params.algo).split(",")
        assert set(algos) == {"random", "gp_ei", "turbo", "auto"} and bbob.budget.rounds == 40
        mixed = compose(config_name="config", overrides=["experiment=auto_check"], return_hydra_config=True)
        cells = OmegaConf.to_container(mixed.hydra.sweeper.cells)
        assert set(cells) == {"random", "gp_ei", "gp_ei_snap", "turbo", "auto"}
        heldout = compose(config_name="config", overrides=["experiment=auto_check_heldout"], return_hydra_config=True)
        held_algos = str(heldout.hydra.sweeper.params.algo).split(",")
        assert set(held_algos) == {"auto", "turbo", "gp_ei", "cobyqa", "nevergrad_ngopt"}
        held_functions = {int(f) for f in str(heldout.hydra.sweeper.params["task.function"]).split(",")}
        suite = compose(config_name="config", overrides=["experiment=bbob_small"], return_hydra_config=True)
        in_suite = {int(f) for f in str(suite.hydra.sweeper.params["task.function"]).split(",")}
        assert held_functions == set(range(1, 25)) - in_suite  # out of sample: the functions bbob_small leaves out
        rows = [["experiment=auto_check_bbob", "task=bbob", f"algo={a}"] for a in algos]
        rows += [["experiment=auto_check_heldout", "task=bbob", f"algo={a}"] for a in held_algos if "_" not in a]
        rows += [["experiment=auto_check", *(f"{k}={v}" for k, v in cell.items())] for cell in cells.values()]
        for overrides in rows:
            s = validate(OmegaConf.to_container(compose(config_name="config", overrides=overrides), resolve=True))
            assert s.algo_entry.name == overrides[-1 if overrides[1] == "task=bbob" else 1].split("=")[1]


def test_rule_a_task_with_a_fidelity_under_a_cost_budget_goes_to_freeze_thaw_with_one_worker():
    choice = decide(_space(floats=6), 10_000, fidelity=True, cost_budget=True)
    assert choice.algo == "freeze_thaw" and choice.settings == {} and "learning-curve suite" in choice.reason
    k = decide(_space(floats=6), 10_000, fidelity=True, cost_budget=True, workers=4)
    assert k.algo == "mf_gp" and k.settings == {"scheduler": "hyperband", "searcher": "gp"}
    assert decide(_space(floats=6), 30, fidelity=True).algo == "gp_ei"  # a fidelity, rounds as the budget
    assert decide(_space(floats=6), 30, cost_budget=True).algo == "gp_ei"  # a cost budget, no fidelity


def test_auto_builds_freeze_thaw_on_a_multi_fidelity_task_with_a_cost_budget():
    from hpoflow.algorithms.auto import Auto
    from hpoflow.algorithms.auto_config import AutoConfig
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.algorithms.freeze_thaw import FreezeThaw
    from hpoflow.surrogates.gp import ExactGP
    from hpoflow.tasks.multi_fidelity import make_branin_mf

    task = make_branin_mf()
    auto = Auto(AutoConfig(), BuildContext(task, rounds=1000, cost=500.0, surrogate=lambda d: ExactGP(d)))
    assert isinstance(auto.delegate, FreezeThaw) and auto.run_tags()["auto.choice"] == "freeze_thaw"
    s = auto.ask()
    assert s.fidelity == 1 and s.config_id == 1


def test_rule_several_objectives_go_to_parego_and_one_constrained_objective_to_gp_ei():
    space = _space(floats=6)
    mo = decide(space, 50, objectives=True)
    assert (mo.algo, mo.settings) == ("parego", {}) and "several objectives" in mo.reason
    assert "probability of feasibility" in decide(space, 50, objectives=True, constraints=True).reason
    assert decide(space, 50, objectives=True, workers=4).algo == "random"  # parego has no pending rule
    for rounds in (10, 50, 500):  # the budget branches (cobyqa, turbo) ignore constraints: gp_ei instead
        constrained = decide(space, rounds, constraints=True)
        assert constrained.algo == "gp_ei" and "probability of feasibility" in constrained.reason


def test_auto_builds_parego_and_constrained_gp_ei_from_the_tasks_spec():
    from hpoflow.algorithms.gp_bo import GPEI
    from hpoflow.algorithms.parego import ParEGO
    from hpoflow.tasks.constrained import make_gramacy
    from hpoflow.tasks.multi_objective import make_multi_objective

    zdt = make_multi_objective("zdt1", dim=3)
    assert isinstance(Auto(AutoConfig(), _ctx(zdt, 50)).delegate, ParEGO)
    gramacy = Auto(AutoConfig(), _ctx(make_gramacy(), 50))
    assert isinstance(gramacy.delegate, GPEI) and gramacy.delegate.constraints is not None
