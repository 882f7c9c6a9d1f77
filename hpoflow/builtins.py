"""The built-in components, registered by import path so that nothing heavy is imported at start-up."""
from __future__ import annotations

from hpoflow.algorithms.configs import GPBOConfig, GridConfig, RandomConfig
from hpoflow.registry import register
from hpoflow.surrogates.configs import GPConfig
from hpoflow.tasks.configs import ClassifierConfig, SyntheticConfig

A, T, S = "algorithm", "task", "surrogate"

# algorithms
register(A, "random", "hpoflow.algorithms.random_search:RandomSearch", RandomConfig, "uniform random search")
register(A, "grid", "hpoflow.algorithms.random_search:GridSearch", GridConfig, "grid search (seeded order)")
register(A, "gp_ucb", "hpoflow.algorithms.gp_bo:GPUCB", GPBOConfig, "GP-UCB (constant or Srinivas beta)")
register(A, "gp_ei", "hpoflow.algorithms.gp_bo:GPEI", GPBOConfig, "GP-EI (log-EI, best-observed incumbent)")
register(A, "gp_pi", "hpoflow.algorithms.gp_bo:GPPI", GPBOConfig, "GP-PI (probability of improvement)")

# surrogates
register(S, "gp", "hpoflow.surrogates.gp:build", GPConfig, "exact GP (gpytorch), ARD Matérn/RBF")

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
             f"tune a classifier (task.model=rf|mlp|gb) on sklearn's {_name} by 5-fold CV accuracy")

# GO-UCB (papers 003/004), its parametric surrogate, and the TuRBO baseline
from hpoflow.algorithms.go_ucb_config import GOUCBConfig  # noqa: E402
from hpoflow.surrogates.parametric_config import ParametricConfig  # noqa: E402

register(A, "go_ucb", "hpoflow.algorithms.go_ucb:GOUCB", GOUCBConfig,
         "GO-UCB: neural-network surrogate, ball (ICML) or bonus (arXiv) optimism",
         smoke=("task=branin", "algo.ascent_steps=5", "algo.raw_samples=64"))
register(S, "nn", "hpoflow.surrogates.parametric:build", ParametricConfig,
         "two-layer network f_w(x) with a linearised (Laplace) variance")
from hpoflow.algorithms.turbo_config import TuRBOConfig  # noqa: E402

register(A, "turbo", "hpoflow.algorithms.turbo:TuRBO", TuRBOConfig,
         "TuRBO-1: trust-region BO with Thompson sampling on the exact GP",
         smoke=("task=branin", "budget.rounds=8"))
