"""The built-in components, registered by import path so that nothing heavy is imported at start-up."""
from __future__ import annotations

from collections.abc import Callable

from hpoflow.algorithms.bbo_config import BBOConfig
from hpoflow.algorithms.bilevel_config import MYHPOConfig, SHOConfig
from hpoflow.algorithms.ce_gp_ucb_config import (
    EpsGreedyConfig,
    EXP3SConfig,
    SoftmaxConfig,
    TVUCBConfig,
    UCB1Config,
)
from hpoflow.algorithms.configs import GPEIConfig, GPUCBConfig, GridConfig, RandomConfig
from hpoflow.algorithms.go_ucb_config import GOUCBConfig
from hpoflow.algorithms.peers.configs import BoTorchConfig, NevergradConfig, OptunaConfig, OptunaRandomConfig
from hpoflow.algorithms.turbo_config import TuRBOConfig
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.parametric_config import ParametricConfig
from hpoflow.surrogates.temporal_config import TemporalGPConfig
from hpoflow.tasks.bilevel_config import BilevelConfig
from hpoflow.tasks.configs import BBOBConfig, ClassifierConfig, SklearnConfig, SyntheticConfig
from hpoflow.tasks.time_varying_config import OnlineDigitsConfig, TVBanditConfig, TVSyntheticConfig
from hpoflow.tasks.training_config import TrainingConfig


def register_builtins(register: Callable[..., object]) -> None:
    """Register every built-in algorithm, surrogate and task with ``register``
    (:func:`hpoflow.config.registry.register`).

    A function, not import-time side effects, so that this module does not import the registry (which calls it).
    """
    A, T, S = "algorithm", "task", "surrogate"

    # algorithms
    register(A, "random", "hpoflow.algorithms.random_search:RandomSearch", RandomConfig, "uniform random search")
    register(A, "grid", "hpoflow.algorithms.random_search:GridSearch", GridConfig, "grid search (seeded order)")
    register(A, "gp_ucb", "hpoflow.algorithms.gp_bo:GPUCB", GPUCBConfig, "GP-UCB (constant or Srinivas beta)")
    register(A, "gp_ei", "hpoflow.algorithms.gp_bo:GPEI", GPEIConfig, "GP-EI (log-EI, best-observed incumbent)")
    register(A, "gp_pi", "hpoflow.algorithms.gp_bo:GPPI", GPEIConfig, "GP-PI (probability of improvement)")
    for _acq, _cls, _cfg in (("ucb", "GPUCB", GPUCBConfig), ("ei", "GPEI", GPEIConfig), ("pi", "GPPI", GPEIConfig)):
        register(
            A,
            f"skopt_gp_{_acq}",
            f"hpoflow.algorithms.gp_bo:{_cls}",
            _cfg,  # the GO-UCB paper's baselines
            f"GP-{_acq.upper()} at scikit-optimize's gp_minimize defaults "
            "(algo.preset=skopt; selects surrogate=skopt_gp)",
            preset="skopt",
        )
    _bbo_tasks = ("digits_mlp", "digits_cnn")
    register(A, "bbo_ei", "hpoflow.algorithms.bbo:BBOEI", BBOConfig,
             "Bayesian bilevel optimisation, EI with posterior-mean incumbent (paper 000, Alg. 1)", tasks=_bbo_tasks)
    register(
        A,
        "bbo_ucb",
        "hpoflow.algorithms.bbo:BBOUCB",
        BBOConfig,
        "Bayesian bilevel optimisation, LCB with the paper's adaptive beta_t (paper 000, Alg. 2)",
        tasks=_bbo_tasks,
    )

    # costly feedback, time-varying (paper 002): every selection rule takes every query rule (algo.query)
    _ce = "hpoflow.algorithms.ce_gp_ucb"
    _tv_smoke = ("surrogate=tv_gp", "task=tv_synthetic", "task.n_points=200")
    _tv_tasks = ("tv_synthetic", "online_digits")
    register(
        A,
        "tv_gp_ucb",
        f"{_ce}:TVGPUCB",
        TVUCBConfig,
        "TV-GP-UCB on the time-varying GP (selects surrogate=tv_gp); algo.query=always by default",
        smoke=_tv_smoke,
        tasks=_tv_tasks,
    )
    register(A, "r_gp_ucb", f"{_ce}:RGPUCB", TVUCBConfig,
             "R-GP-UCB: time-invariant GP-UCB reset every algo.reset_every rounds (selects surrogate=tv_gp)",
             smoke=_tv_smoke, tasks=_tv_tasks, reset_every=None)
    register(A, "ce_gp_ucb", f"{_ce}:TVGPUCB", TVUCBConfig,
             "CE-GP-UCB: TV-GP-UCB that observes only when P(y(x_t) > y(x)) < algo.kappa for some x",
             smoke=_tv_smoke, tasks=_tv_tasks, query="ce")
    _bandit_smoke = ("task=tv_bandit",)
    for _name, _cls, _cfg, _desc in (("exp3s", "EXP3S", EXP3SConfig, "EXP3.S (switching bandits)"),
                                     ("eps_greedy", "EpsGreedy", EpsGreedyConfig, "epsilon-greedy bandit"),
                                     ("softmax", "Softmax", SoftmaxConfig, "Boltzmann-exploration bandit"),
                                     ("ucb1", "UCB1", UCB1Config, "UCB1 bandit")):
        register(
            A,
            _name,
            f"hpoflow.algorithms.bandits:{_cls}",
            _cfg,
            f"{_desc} on finite arms, Bernoulli(algo.query_prob) queries",
            smoke=_bandit_smoke,
            tasks=("tv_bandit",),
        )
    _bl = "hpoflow.algorithms.bilevel"
    _small = ("task=ridge", "task.dataset=digits_regression", "task.inner_steps=5")
    register(
        A,
        "sho",
        f"{_bl}:SHO",
        SHOConfig,
        "local SHO hypernetwork HPO (paper 001, App. B); needs task=ridge|logreg",
        smoke=_small,
        tasks=("ridge", "logreg"),
    )
    register(A, "my_hpo", f"{_bl}:MYHPO", MYHPOConfig,
             "MY-HPO (paper 001; algo.variant=constant|backtracking|full); needs task=ridge|logreg", smoke=_small,
             tasks=("ridge", "logreg"))

    # surrogates
    register(S, "gp", "hpoflow.surrogates.gp:build", GPConfig, "exact GP (gpytorch), ARD Matérn/RBF")
    register(S, "skopt_gp", "hpoflow.surrogates.gp:build", GPConfig,
             "exact GP as scikit-optimize's: constant x Matérn-5/2 ARD + white noise (learned output scale)",
             learn_outputscale=True)
    register(S, "tv_gp", "hpoflow.surrogates.temporal:build", TemporalGPConfig,
             "time-varying GP: space kernel x (1-eps)^{|t-t'|/2}, incremental updates")

    # tasks
    _syn = "hpoflow.tasks.synthetic"
    register(T, "branin", f"{_syn}:make_branin", SyntheticConfig, "Branin, 2-d, minimise", dim=2)
    register(T, "hartmann6", f"{_syn}:make_hartmann6", SyntheticConfig, "Hartmann-6, minimise", dim=6)
    register(T, "styblinski_tang", f"{_syn}:make_styblinski_tang", SyntheticConfig,
             "Styblinski-Tang on [-5,5]^dim, minimise")
    register(T, "rastrigin", f"{_syn}:make_rastrigin", SyntheticConfig, "Rastrigin on [-5,5]^dim, minimise")
    register(T, "go_ucb_f1", f"{_syn}:make_go_ucb_f1", SyntheticConfig,
             "GO-UCB realizable network f1 on [-5,5]^dim, maximise")
    for _name in ("breast_cancer", "wine", "digits"):
        register(T, _name, "hpoflow.tasks.sklearn_hpo:make_classifier_task", ClassifierConfig,
                 f"tune a classifier (task.model=rf|mlp|gb) on sklearn's {_name} by 5-fold CV accuracy (paper 004's "
                 f"spaces; alias of task=sklearn task.dataset={_name} task.space=go_ucb)")
    register(T, "sklearn", "hpoflow.tasks.sklearn_hpo:make_sklearn_task", SklearnConfig,
             "Bayesmark-style suite: task.model (rf, mlp, gb, svm, knn, linear, lasso, dt, ada) x task.dataset "
             "(breast_cancer, wine, digits, iris; diabetes: R²) by k-fold CV, maximise")
    register(
        T,
        "bbob",
        "hpoflow.tasks.bbob:make_bbob",
        BBOBConfig,
        "COCO BBOB noiseless function task.function (1-24), task.instance, task.dim on [-5,5]^dim (cocoex), minimise",
    )
    _train = "hpoflow.tasks.training"
    register(T, "digits_cnn", f"{_train}:make_digits_task", TrainingConfig,
             "train a 2-conv + 1-FC net with task.inner_steps SGD steps on sklearn digits; minimise val loss",
             smoke=("task.inner_steps=20",))
    register(T, "digits_mlp", f"{_train}:make_digits_task", TrainingConfig,
             "train a one-hidden-layer MLP with task.inner_steps SGD steps on sklearn digits; minimise val loss",
             smoke=("task.inner_steps=20",))
    register(T, "mnist_cnn", f"{_train}:make_mnist_task", TrainingConfig,
             "the digits_cnn task on MNIST read from task.path (torchvision; never downloads)",
             smoke=("task.inner_steps=20", "task.path=data/mnist"))

    _tv = "hpoflow.tasks.time_varying"
    register(T, "tv_synthetic", f"{_tv}:make_tv_synthetic", TVSyntheticConfig,
             "drifting GP sample on 1000 points of [0,1] (paper 002 Table A2), maximise")
    register(T, "tv_bandit", f"{_tv}:make_tv_bandit", TVBanditConfig,
             "3-armed bandit with sine / gaussian / piecewise drift (paper 002 Table A1), maximise")
    register(T, "online_digits", "hpoflow.tasks.online_hpo:make_online_digits", OnlineDigitsConfig,
             "online HPO: learning-rate multiplier of each k SGD steps on digits; reward = val-accuracy gain")
    register(T, "ridge", "hpoflow.tasks.bilevel:make_bilevel", BilevelConfig,
             "bilevel ridge: least squares + e^(λ+offset)||w||² (task.dataset=nir|digits_regression), minimise L_V")
    register(
        T,
        "logreg",
        "hpoflow.tasks.bilevel:make_bilevel",
        BilevelConfig,
        "bilevel logistic + e^(λ+offset)||w||² (task.dataset=digits_01|digits_38), minimise L_V",
        dataset="digits_01",
    )

    # GO-UCB (papers 003/004), its parametric surrogate, and the TuRBO baseline

    register(
        A,
        "go_ucb",
        "hpoflow.algorithms.go_ucb:GOUCB",
        GOUCBConfig,
        "GO-UCB: neural-network surrogate (selects surrogate=nn), ball (ICML) or bonus (arXiv) optimism",
        smoke=("task=branin", "surrogate=nn", "algo.advanced.ascent_steps=5", "algo.advanced.raw_samples=64"),
        tasks=("breast_cancer", "go_ucb_f1"),
    )
    register(
        A,
        "go_ucb_paper",
        "hpoflow.algorithms.go_ucb:GOUCB",
        GOUCBConfig,
        "GO-UCB with paper 004's Appendix D.1 settings literally (algo.preset=paper; selects surrogate=nn)",
        smoke=("task=branin", "surrogate=nn", "algo.advanced.ascent_steps=5", "algo.advanced.raw_samples=64"),
        tasks=("go_ucb_f1",),
        preset="paper",
    )
    register(S, "nn", "hpoflow.surrogates.parametric:build", ParametricConfig,
             "two-layer network f_w(x) with a linearised (Laplace) variance")

    register(A, "turbo", "hpoflow.algorithms.turbo:TuRBO", TuRBOConfig,
             "TuRBO-1: trust-region BO with Thompson sampling on the exact GP",
             smoke=("task=branin", "budget.rounds=8"))

    # the field's standard optimizers (optional extra `peers`: listed without it, selecting one names the install)

    _peers = "hpoflow.algorithms.peers"
    _optuna = {"requires": ("optuna",), "extra": "peers"}
    register(A, "optuna_tpe", f"{_peers}.optuna_samplers:OptunaTPE", OptunaConfig,
             "Optuna TPESampler via Study.ask/tell (extra: peers)", **_optuna)
    register(A, "optuna_gp", f"{_peers}.optuna_samplers:OptunaGP", OptunaConfig,
             "Optuna GPSampler via Study.ask/tell (extra: peers)", **_optuna)
    register(A, "optuna_cmaes", f"{_peers}.optuna_samplers:OptunaCmaEs", OptunaConfig,
             "Optuna CmaEsSampler via Study.ask/tell (extra: peers)", requires=("optuna", "cmaes"), extra="peers",
             n_startup_trials=1)
    register(A, "optuna_random", f"{_peers}.optuna_samplers:OptunaRandom", OptunaRandomConfig,
             "Optuna RandomSampler via Study.ask/tell (extra: peers)", **_optuna)
    register(A, "botorch_logei", f"{_peers}.botorch_logei:BoTorchLogEI", BoTorchConfig,
             "BoTorch SingleTaskGP + LogExpectedImprovement + optimize_acqf (extra: peers)",
             requires=("botorch",), extra="peers")
    register(A, "nevergrad_ngopt", f"{_peers}.nevergrad_ngopt:NevergradOptimizer", NevergradConfig,
             "Nevergrad NGOpt (algo.optimizer: any Nevergrad optimizer) told budget.rounds (extra: peers)",
             requires=("nevergrad",), extra="peers")
