"""Config dataclasses of the built-in tasks (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import task


@dataclass(frozen=True)
class SyntheticConfig:
    """Closed-form test functions; ``dim`` is used by the dimension-free ones."""

    name: str = "branin"
    dim: int = 20
    noise_std: float = 0.0
    low: float | None = None   # box [low, high]^dim for the dimension-free functions (default: paper's)
    high: float | None = None

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"task.low={self.low} must be < task.high={self.high}")
        if self.dim < 1:
            raise ValueError(f"task.dim={self.dim} must be >= 1")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")


def _check_resources(fidelity: bool, low: int, high: int) -> None:
    if not isinstance(fidelity, bool):
        raise ValueError(f"task.fidelity={fidelity!r} must be true or false")
    for key, value in (("min_resource", low), ("max_resource", high)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"task.{key}={value!r} must be a whole number >= 0 (0: the model's default)")
    if low and high and low > high:
        raise ValueError(f"task.min_resource={low} > task.max_resource={high}; allowed: min <= max")
    if (low or high) and not fidelity:
        raise ValueError(f"task.min_resource={low}, task.max_resource={high} are read with task.fidelity=true only")


@dataclass(frozen=True)
class ClassifierConfig:
    """Classifier tuning by k-fold CV accuracy on a dataset bundled with scikit-learn.

    ``fidelity=true``: boosting rounds (gb), trees (rf) or epochs (mlp) become the task's fidelity, from
    ``min_resource`` to ``max_resource`` (0: max 162 rounds/trees or 243 epochs, min = max / 81), for
    multi-fidelity methods (algo=hyperband|asha|mf_gp...); that hyperparameter leaves the search space.

    Every evaluation reports the named values ``accuracy``, ``fit_s`` (seconds fitting, summed over the folds) and
    ``size`` (tree leaves summed over the trees, or the MLP's weights). ``objectives=accuracy+fit_s`` or
    ``accuracy+size`` makes them two objectives (max accuracy, min the other; reference point: the majority-class
    accuracy and 10 s or the space's largest model). Fit time is wall-clock and noisy: the same configuration's
    ``fit_s`` varies from run to run and with the machine's load, so a front in fit_s does not reproduce exactly.
    """

    name: str = "breast_cancer"
    model: str = "rf"  # rf | mlp | gb
    folds: int = 5
    noise_std: float = 0.0
    fidelity: bool = False  # opt-in: without it the task and its results are exactly as before
    min_resource: int = 0
    max_resource: int = 0
    objectives: str = "accuracy"  # accuracy | accuracy+fit_s | accuracy+size (two objectives: max, min)

    def __post_init__(self) -> None:
        if self.model not in ("rf", "mlp", "gb"):
            raise ValueError(f"task.model='{self.model}' is unknown; allowed: rf, mlp, gb")
        if self.objectives not in ("accuracy", "accuracy+fit_s", "accuracy+size"):
            raise ValueError(f"task.objectives='{self.objectives}' is unknown; allowed: accuracy, accuracy+fit_s, "
                             "accuracy+size")
        if self.folds < 2:
            raise ValueError(f"task.folds={self.folds} must be >= 2")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")
        _check_resources(self.fidelity, self.min_resource, self.max_resource)


@dataclass(frozen=True)
class BBOBConfig:
    """One function of COCO's noiseless BBOB suite (function x instance x dimension) on [-5, 5]^dim."""

    name: str = "bbob"
    function: int = 1   # 1-24: f1 sphere ... f24 Lunacek bi-Rastrigin
    instance: int = 1   # COCO instance id (shifts/rotates the function, sets f*)
    dim: int = 5        # 2, 3, 5, 10, 20, 40 are COCO's; any dim >= 2 is defined
    noise_std: float = 0.0  # Gaussian observation noise; regret stays on the noise-free value

    def __post_init__(self) -> None:
        if not 1 <= self.function <= 24:
            raise ValueError(f"task.function={self.function} must be in 1..24 (BBOB's noiseless functions)")
        if self.instance < 1:
            raise ValueError(f"task.instance={self.instance} must be >= 1")
        if self.dim < 2:
            raise ValueError(f"task.dim={self.dim} must be >= 2 (BBOB is undefined for dim=1)")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")


SKLEARN_MODELS = ("rf", "mlp", "gb", "svm", "knn", "linear", "lasso", "dt", "ada")
SKLEARN_DATASETS = ("breast_cancer", "wine", "digits", "iris", "diabetes")
SKLEARN_FIDELITY = (("go_ucb", "gb"), ("go_ucb", "rf"), ("go_ucb", "mlp"), ("bayesmark", "gb"))  # sklearn_fidelity


@dataclass(frozen=True)
class SklearnConfig:
    """One (model, dataset) problem of the scikit-learn tuning suite, scored by k-fold CV."""

    name: str = "sklearn"
    model: str = "rf"               # rf | mlp | gb | svm | knn | linear | lasso | dt | ada
    dataset: str = "breast_cancer"  # breast_cancer | wine | digits | iris (accuracy) | diabetes (R²)
    space: str = "bayesmark"        # bayesmark (Bayesmark's ranges) | go_ucb (paper 004: rf, mlp, gb; classification)
    folds: int = 5
    noise_std: float = 0.0
    fidelity: bool = False          # rounds/trees/epochs as the fidelity: go_ucb rf|mlp|gb, bayesmark gb
    min_resource: int = 0           # 0: max / 81
    max_resource: int = 0           # 0: 162 (go_ucb rf, gb), 243 epochs (go_ucb mlp), 81 (bayesmark gb)

    def __post_init__(self) -> None:
        if self.model not in SKLEARN_MODELS:
            raise ValueError(f"task.model='{self.model}' is unknown; allowed: {', '.join(SKLEARN_MODELS)}")
        if self.dataset not in SKLEARN_DATASETS:
            raise ValueError(f"task.dataset='{self.dataset}' is unknown; allowed: {', '.join(SKLEARN_DATASETS)}")
        if self.space not in ("bayesmark", "go_ucb"):
            raise ValueError(f"task.space='{self.space}' is unknown; allowed: bayesmark, go_ucb")
        if self.space == "go_ucb" and (self.model not in ("rf", "mlp", "gb") or self.dataset == "diabetes"):
            raise ValueError(f"task.space=go_ucb covers task.model=rf|mlp|gb on classification datasets, got "
                             f"task.model='{self.model}' task.dataset='{self.dataset}'")
        if self.folds < 2:
            raise ValueError(f"task.folds={self.folds} must be >= 2")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")
        _check_resources(self.fidelity, self.min_resource, self.max_resource)
        if self.fidelity and (self.space, self.model) not in SKLEARN_FIDELITY:
            raise ValueError(f"task.fidelity=true: task.model={self.model} with task.space={self.space} has no "
                             "fidelity; allowed: task.space=go_ucb task.model=rf|mlp|gb, task.space=bayesmark "
                             "task.model=gb")


@dataclass(frozen=True)
class MultiFidelityFunctionConfig:
    """Augmented Branin / Hartmann-6 (hpoflow.tasks.multi_fidelity): fidelity = a resource in [1, max_resource]."""

    name: str = "branin_mf"
    max_resource: int = 81  # the full fidelity (s = r / max_resource); 81 = 3^4: five rungs at eta = 3
    noise_std: float = 0.0
    sleep_per_unit: float = 0.0  # seconds slept per fidelity unit trained (a training run's time, for k workers)

    def __post_init__(self) -> None:
        if isinstance(self.sleep_per_unit, bool) or not self.sleep_per_unit >= 0:
            raise ValueError(f"task.sleep_per_unit={self.sleep_per_unit!r} must be >= 0")
        if isinstance(self.max_resource, bool) or not isinstance(self.max_resource, int) or self.max_resource < 1:
            raise ValueError(f"task.max_resource={self.max_resource!r} must be a positive integer")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")


@dataclass(frozen=True)
class ReplayConfig:
    """Recorded learning curves replayed (hpoflow.tasks.replay): a finite configuration set of a real task."""

    name: str = "lc_replay"
    benchmark: str = "digits_mlp"  # digits_mlp | breast_cancer_mlp | digits_gb | breast_cancer_gb | digits_cnn, a
    # learning-curve suite task <dataset>-<mlp|linear|gb> (e.g. hmda-mlp; the list: docs/benchmarks.md), or a
    # .json.gz / .npz file that scripts/record_curves.py / scripts/record_suite.py wrote
    max_fidelity: int | None = None  # null: the recorded maximum; smaller: the curves cut there (a shorter training)


@dataclass(frozen=True)
class MultiObjectiveConfig:
    """Two-objective test problems on [0, 1]^dim (hpoflow.tasks.multi_objective): values f1, f2, both minimised."""

    name: str = "zdt1"
    dim: int = 30  # ZDT's standard 30; DTLZ2's default is 6

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 2:
            raise ValueError(f"task.dim={self.dim!r} must be an integer >= 2")


@dataclass(frozen=True)
class ConstrainedConfig:
    """Gramacy et al. (2016)'s constrained toy (hpoflow.tasks.constrained): minimise f = x1 + x2 s.t. c1 <= 0, c2 <= 0
    on [0, 1]^2; the constraints are declared by the task (values f, c1, c2)."""

    name: str = "gramacy"


_SYN = "hpoflow.tasks.synthetic"
_MO = "hpoflow.tasks.multi_objective:make_multi_objective"
_MF = "hpoflow.tasks.multi_fidelity"
BUILTINS = [
    task("lc_replay", "hpoflow.tasks.replay:make_lc_replay", ReplayConfig, "learning curves recorded on a real "
         "training task (task.benchmark), replayed in no time: a finite set with an epoch fidelity and recorded "
         "seconds (budget.executor=simulated)"),
    task("branin_mf", f"{_MF}:make_branin_mf", MultiFidelityFunctionConfig, "augmented Branin with a resource "
         "fidelity (1..max_resource, biased below full), minimise; f* = Branin's"),
    task("hartmann6_mf", f"{_MF}:make_hartmann6_mf", MultiFidelityFunctionConfig, "augmented Hartmann-6 with a "
         "resource fidelity (1..max_resource, biased below full), minimise; f* = Hartmann-6's"),
    task("zdt1", _MO, MultiObjectiveConfig, "ZDT1 on [0,1]^dim, two objectives (f1, f2) minimised; front f2 = 1 - "
         "sqrt(f1); hypervolume against (11, 11)"),
    task("zdt2", _MO, MultiObjectiveConfig, "ZDT2 on [0,1]^dim, two objectives minimised; front f2 = 1 - f1^2 "
         "(concave); hypervolume against (11, 11)"),
    task("zdt3", _MO, MultiObjectiveConfig, "ZDT3 on [0,1]^dim, two objectives minimised; a front in five pieces; "
         "hypervolume against (11, 11)"),
    task("dtlz2", _MO, MultiObjectiveConfig, "DTLZ2 with two objectives on [0,1]^dim, minimised; front on the unit "
         "circle; hypervolume against (1.1, 1.1)", dim=6),
    task("gramacy", "hpoflow.tasks.constrained:make_gramacy", ConstrainedConfig, "Gramacy et al. (2016)'s toy: "
         "minimise x1 + x2 on [0,1]^2 s.t. two nonlinear constraints c1, c2 <= 0 (the unconstrained optimum is "
         "infeasible); constrained f* = 0.59979"),
    task("branin", f"{_SYN}:make_branin", SyntheticConfig, "Branin, 2-d, minimise", dim=2),
    task("hartmann6", f"{_SYN}:make_hartmann6", SyntheticConfig, "Hartmann-6, minimise", dim=6),
    task("styblinski_tang", f"{_SYN}:make_styblinski_tang", SyntheticConfig, "Styblinski-Tang on [-5,5]^dim, minimise"),
    task("rastrigin", f"{_SYN}:make_rastrigin", SyntheticConfig, "Rastrigin on [-5,5]^dim, minimise"),
    task("go_ucb_f1", f"{_SYN}:make_go_ucb_f1", SyntheticConfig,
         "GO-UCB realizable network f1 on [-5,5]^dim, maximise"),
    *(task(name, "hpoflow.tasks.sklearn_hpo:make_classifier_task", ClassifierConfig,
           f"tune a classifier (task.model=rf|mlp|gb) on sklearn's {name} by 5-fold CV accuracy (paper 004's "
           f"spaces; alias of task=sklearn task.dataset={name} task.space=go_ucb); task.fidelity=true: boosting "
           "rounds / trees / epochs as a fidelity, continued per trial")
      for name in ("breast_cancer", "wine", "digits")),
    task("sklearn", "hpoflow.tasks.sklearn_hpo:make_sklearn_task", SklearnConfig,
         "Bayesmark-style suite: task.model (rf, mlp, gb, svm, knn, linear, lasso, dt, ada) x task.dataset "
         "(breast_cancer, wine, digits, iris; diabetes: R²) by k-fold CV, maximise; task.fidelity=true: a fidelity "
         "for go_ucb rf|mlp|gb and bayesmark gb"),
    task("bbob", "hpoflow.tasks.bbob:make_bbob", BBOBConfig,
         "COCO BBOB noiseless function task.function (1-24), task.instance, task.dim on [-5,5]^dim (cocoex), minimise"),
]
