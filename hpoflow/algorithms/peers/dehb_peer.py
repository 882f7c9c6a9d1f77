"""DEHB (Awad et al., IJCAI 2021: differential evolution inside Hyperband's brackets) through the ``dehb`` package's
own ``DEHB.ask``/``DEHB.tell``.

``ask`` returns a job: a ConfigSpace configuration, its ``fidelity`` (DEHB's budgets ``max * eta^-k``, floats:
rounded for an integer fidelity, as the task's level) and DEHB's ``config_id``, which a promoted configuration
keeps: our ``config_id``, so the task continues it. DEHB minimises ``fitness``: a maximised value is told negated;
``cost`` is the evaluation's cost. A failure is told as the worst fitness (``inf``), which DEHB's selection and
promotion rank last (DEHB has no failed state of its own). DEHB's asynchronous brackets hand out further jobs while
earlier ones run (``n_workers`` > 1 in its own loop), so several may be pending.

Not in an extra: ``dehb`` 0.1.2 (its newest release) pins ``numpy<2``, which would downgrade the whole environment;
it runs on NumPy 2 installed with ``pip install --no-deps dehb loguru``. DEHB writes its log (loguru) to an output
folder: here a temporary one, removed with the optimizer; ``save_freq="end"`` keeps it from writing its history
after every improvement (``end`` is the end of its own ``run``, which ask/tell never calls).
"""
from __future__ import annotations

import contextlib
import math
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar

from dehb import DEHB

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.configspace import configuration_space, to_config
from hpoflow.algorithms.peers.mf_base import MultiFidelityPeer
from hpoflow.algorithms.peers.mf_config import DEHBConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """DEHB 0.1.2 calls ConfigSpace's deprecated getters at every step: not the user's to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"dehb\.")
        yield


class DEHBOptimizer(MultiFidelityPeer):
    """``algo=dehb``: one DEHB instance in this process (``n_workers=1``: no Dask cluster)."""

    name = "dehb"
    pending_rule: ClassVar[str | None] = "dehb_brackets"  # its async brackets give other jobs while some run

    def __init__(self, config: DEHBConfig, ctx: BuildContext) -> None:
        super().__init__(ctx, config.name, config.min_fidelity)
        if not self.min_level < self.fidelity.max:
            raise ValueError(f"algo=dehb needs a fidelity range: the lowest level {self.min_level} is the task's "
                             f"maximum {self.fidelity.max}")
        self._folder = tempfile.TemporaryDirectory(prefix="hpoflow-dehb-")
        with _quiet():
            self.dehb = DEHB(cs=configuration_space(ctx.task.space, ctx.seed), f=None,
                             min_fidelity=self.min_level, max_fidelity=self.fidelity.max, eta=config.eta,
                             mutation_factor=config.mutation_factor, crossover_prob=config.crossover_prob,
                             strategy=config.strategy, n_workers=1, seed=int(ctx.seed),
                             output_path=self._folder.name, save_freq="end", log_level="ERROR")
        self.running: dict[int, dict[str, Any]] = {}  # id(suggestion) -> DEHB's job, in ask order

    def ask(self, round: int) -> Suggestion:
        with _quiet():
            job = self.dehb.ask()
        s = self.mf_suggestion(to_config(self.space, job["config"]), float(job["fidelity"]), int(job["config_id"]),
                               {"bracket": float(job["bracket_id"])})
        self.running[id(s)] = job
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        # a replayed round (resume) may tell a rebuilt Suggestion: it completes the oldest running job
        job = self.running.pop(id(suggestion), None)
        if job is None:
            if not self.running:
                raise ValueError("tell() takes a suggestion this algorithm asked and was not told yet")
            job = self.running.pop(next(iter(self.running)))
        failed = isinstance(outcome, Failure) or not math.isfinite(outcome.value)
        fitness = math.inf if failed else self.loss(outcome)  # type: ignore[arg-type]
        with _quiet():
            self.dehb.tell(job, {"fitness": fitness, "cost": float(outcome.cost)})
