"""``algo=auto``: build the algorithm :func:`hpoflow.algorithms.auto_rule.decide` picks, and delegate to it.

Every call (ask, tell, pending asks, the resume state) goes to the chosen algorithm, so checkpoint/resume,
``budget.workers > 1`` and ``Study`` work as they do for that algorithm; the choice is a pure function of the
space and the budget, so a resumed run rebuilds the same one. What was picked and why are the
run's tags (:meth:`Auto.run_tags`: ``auto.choice``, ``auto.settings``, ``auto.reason``) and a line of the CLI's
end-of-run summary.
"""
from __future__ import annotations

from typing import Any, ClassVar

from hpoflow.algorithms.auto_config import AutoConfig
from hpoflow.algorithms.auto_rule import Choice, decide, profile, several_objectives
from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext, PendingNotSupported
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.surrogates.base import ConfiguredSurrogate, KernelSurrogate, LengthscaleSurrogate, StandardizedSurrogate


def build_choice(choice: Choice, ctx: BuildContext) -> AskTellAlgorithm:
    """The chosen algorithm, built with its own config (the choice's settings over that config's defaults)."""
    if choice.algo == "gp_ei":
        from hpoflow.algorithms.configs import GPEIConfig
        from hpoflow.algorithms.gp_bo import GPEI

        return GPEI(GPEIConfig(**choice.settings), ctx)
    if choice.algo == "turbo":
        from hpoflow.algorithms.turbo import TuRBO
        from hpoflow.algorithms.turbo_config import TuRBOConfig

        return TuRBO(TuRBOConfig(**choice.settings), ctx)
    if choice.algo == "cobyqa":
        from hpoflow.algorithms.local_dfo import LocalDFO
        from hpoflow.algorithms.local_dfo_config import LocalDFOConfig

        return LocalDFO(LocalDFOConfig(**choice.settings), ctx)
    if choice.algo == "random":
        from hpoflow.algorithms.configs import RandomConfig
        from hpoflow.algorithms.random_search import RandomSearch

        return RandomSearch(RandomConfig(**choice.settings), ctx)
    if choice.algo == "parego":
        from hpoflow.algorithms.parego import ParEGO
        from hpoflow.algorithms.parego_config import ParEGOConfig

        return ParEGO(ParEGOConfig(**choice.settings), ctx)
    if choice.algo == "mf_gp":
        from hpoflow.algorithms.multi_fidelity import MultiFidelityGP
        from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig

        return MultiFidelityGP(MultiFidelityConfig(**{"name": "mf_gp", **choice.settings}), ctx)
    if choice.algo == "freeze_thaw":
        from hpoflow.algorithms.freeze_thaw import FreezeThaw
        from hpoflow.algorithms.freeze_thaw_config import FreezeThawConfig

        return FreezeThaw(FreezeThawConfig(**choice.settings), ctx)
    raise ValueError(f"auto picked algo={choice.algo}, which it cannot build; allowed: gp_ei, turbo, cobyqa, random, "
                     "mf_gp, freeze_thaw, parego")


class Auto(AskTellAlgorithm):
    """Delegates every call to the algorithm the rule picked for this task and budget."""

    name = "auto"
    # the strictest protocol of the algorithms it may pick (turbo's; a surrogate with it serves gp_ei too)
    surrogate_protocol = KernelSurrogate
    surrogate_extras = (StandardizedSurrogate, LengthscaleSurrogate, ConfiguredSurrogate)  # gp_ei's, if it picks it
    pending_rule: ClassVar[str | None] = "delegated"  # its pick's rule (gp_ei, turbo, random); cobyqa refuses them

    def __init__(self, config: AutoConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.config = config
        self.choice = decide(profile(ctx.task.space), ctx.rounds, finite=ctx.task.candidates is not None,
                             workers=ctx.workers, fidelity=ctx.task.fidelity is not None,
                             cost_budget=ctx.cost is not None, objectives=several_objectives(ctx.task.objectives),
                             constraints=ctx.task.objectives is not None and bool(ctx.task.objectives.constraints))
        self.delegate = build_choice(self.choice, ctx)

    def run_tags(self) -> dict[str, str]:
        return {**self.choice.tags(), **self.delegate.run_tags()}  # and what its pick filled in (gp_ei's transform)

    def ask(self, round: int) -> Suggestion:
        return self.delegate.ask(round)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        self.delegate.tell(suggestion, outcome)

    def adopt(self, suggestion: Suggestion) -> Suggestion | None:
        return self.delegate.adopt(suggestion)

    def _ask_with_pending(self, round: int, pending: list[Suggestion]) -> Suggestion:
        try:
            return self.delegate.ask_pending(round, pending)
        except PendingNotSupported as exc:
            raise PendingNotSupported(f"algo=auto picked {self.choice.algo} for this task and budget, which does not "
                                      f"support pending trials ({self.delegate.pending_refusal}): use workers=1, or "
                                      "name an algorithm that does, e.g. algo=turbo") from exc

    # resume: hpoflow.runner.restore saves a state only where the delegate has one (else it replays through ask/tell)
    def state_dict(self) -> dict[str, Any]:
        return {"choice": self.choice.algo, "delegate": self.delegate.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("choice") != self.choice.algo:
            raise ValueError(f"resume: the checkpoint's algo=auto ran {state.get('choice')}, this build picks "
                             f"{self.choice.algo} (the task or budget.rounds changed)")
        self.delegate.load_state_dict(state["delegate"])

    def surrogate_snapshot(self) -> Any:
        """The delegate's model for the run's surrogate plot (d <= 2), as ``hpoflow.surrogates.plot`` reads it."""
        from hpoflow.surrogates.plot import snapshot_of

        return snapshot_of(self.delegate)
