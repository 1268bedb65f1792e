"""BEA orders (Spec B, section 3): the derived modified flows are first-order backward error
analysis, so the discrete iterates stay O(h) from the leading flow f_0 and O(h^2) from the
modified flow f_0 + h f_1.

Source: Spec B s. 3 ("verify numerically by order of accuracy on toy losses"); Hairer, Lubich,
Wanner, "Geometric Numerical Integration", ch. IX.

Cells (``order_cell``, ``numerics.optim.order_of_accuracy``): the update as written (exact
gradients, lambdified) iterated from its slow manifold over T = 0.5 at h = 0.025 ... 0.003125,
against DOP853 solutions (rtol = atol = 1e-12) of f_0 and f_0 + h f_1; fitted log-log slopes of
the global error.  Judged on GD, SGD with random reshuffling, heavy ball and Adam (the updates
with published flows) on every toy loss; Nesterov and Muon are shown.

The claim holds when every judged slope is within ``slope`` of 1 and 2; it is refuted when one is
not; errors below ``error_floor`` (the integrator's own accuracy) make slopes meaningless:
inconclusive.
"""

from __future__ import annotations

from dataclasses import dataclass

from implicitbias.claims import Claim, Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, typed
from implicitbias.figures import markdown_table
from implicitbias.numerics.optim.order_of_accuracy import LOSSES, OrderResult, order_of_accuracy

KIND = "bea_orders.order"


@dataclass(frozen=True)
class Config:
    judged: tuple[str, ...] = ("gd", "sgd_rr", "heavy_ball", "adam")
    shown: tuple[str, ...] = ("nesterov", "muon")
    losses: tuple[str, ...] = LOSSES


@dataclass(frozen=True)
class Measured:
    """The optimisers judged and every optimiser's order of accuracy on every loss (judged and shown)."""

    judged: tuple[str, ...]
    orders: tuple[OrderResult, ...]


def order_cell(config: dict) -> dict:
    """Cell {"optimizer", "loss"} -> errors and fitted slopes (``OrderResult.as_dict``)."""
    return order_of_accuracy(config["optimizer"], config["loss"]).as_dict()


class BEAOrders(Claim):
    id = "BEA orders"
    statement = "global error O(h) against f_0 and O(h^2) against the derived modified flow"
    source = "Spec B s. 3; Hairer, Lubich, Wanner, Geometric Numerical Integration, ch. IX"
    section = "flows"
    order = 50
    outcomes = ("agrees", "disagrees", "inconclusive")
    thresholds = {
        "slope": Threshold(0.2, "four steps over one octave each: the O(h) correction to the leading error term "
                                "moves a fitted slope by up to ~0.1 at h = 0.025"),
        "error_floor": Threshold(1e-10, "DOP853 at rtol = atol = 1e-12 over T = 0.5: below this the error is "
                                        "the integrator's, not the flow's"),
    }
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        cfgs = [{"optimizer": o, "loss": l} for o in config.judged + config.shown for l in config.losses]
        records = ctx.map(KIND, order_cell, cfgs, desc="orders of accuracy")
        return Evidence(f"{', '.join(config.judged)} on {len(config.losses)} toy losses (judged); "
                        f"{', '.join(config.shown)} shown",
                        Measured(config.judged, typed(OrderResult, records)))

    def judge(self, evidence: Evidence) -> Verdict:
        rows = [r for r in evidence.data.orders if r.optimizer in evidence.data.judged]
        s1 = [r.slope_gradient_flow for r in rows]
        s2 = [r.slope_modified_flow for r in rows]
        tol = self.threshold("slope")
        measured = f"slopes {min(s1):.2f}-{max(s1):.2f} against f_0 and {min(s2):.2f}-{max(s2):.2f} against f_0 + h f_1"
        numbers = {"slopes_gradient_flow": s1, "slopes_modified_flow": s2}
        floored = [f"{r.optimizer}/{r.loss}" for r in rows
                   if min(r.error_modified_flow) < self.threshold("error_floor")]
        if floored:
            return inconclusive(f"errors at the integrator's floor for {floored}", measured, **numbers)
        off = [f"{r.optimizer}/{r.loss}" for r in rows
               if abs(r.slope_gradient_flow - 1) > tol or abs(r.slope_modified_flow - 2) > tol]
        if off:
            return disagrees(f"slopes not 1 and 2 (within {tol:g}) for {off}", measured, **numbers)
        return agrees(f"every judged slope is within {tol:g} of 1 and 2", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        return "\n".join([
            "Global error at T = 0.5 of the iterates against the leading flow f_0 and the modified flow f_0 + h f_1 "
            "(scipy DOP853, tol 1e-12), h = 0.025 ... 0.003125; fitted log-log slopes.",
            "",
            markdown_table(
                ["optimizer", "loss", "slope vs f_0", "slope vs f_0 + h f_1", "errors vs modified flow"],
                [[r.optimizer, r.loss, f"{r.slope_gradient_flow:.3f}", f"{r.slope_modified_flow:.3f}",
                  ", ".join(f"{e:.1e}" for e in r.error_modified_flow)] for r in evidence.data.orders],
            ),
        ])


CLAIM = BEAOrders()
