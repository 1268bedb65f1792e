"""One judging path: ``ib.check``, ``implicitbias verify`` and the report judge a claim through
:func:`judge_claim`, which measures and judges it (``claims.evaluate``) and turns an error raised on
the way into one line naming the claim (:func:`naming`, ``ClaimError``); the claims table of what
was judged has one writer, ``claims.table``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from implicitbias import claims
from implicitbias.claims import Claim, Context, Result
from implicitbias.store import CellError
from implicitbias.theory import params

__all__ = ["ClaimError", "Judgement", "judge_claim", "naming"]


class ClaimError(CellError):
    """The computation of a claim or of a report section's exhibit raised; the message names it."""


@contextlib.contextmanager
def naming(what: str):
    """Turn an error raised while computing ``what`` into a ``ClaimError`` that names it in one line
    (bad input, ``ParameterError``, passes through as it is)."""
    try:
        yield
    except params.ParameterError:
        raise
    except Exception as exc:
        cause = exc.__cause__ if isinstance(exc, CellError) and exc.__cause__ else exc
        raise ClaimError(f"{what} failed to compute: {type(cause).__name__}: {' '.join(str(cause).split())[:300]}") from exc


@dataclass(frozen=True)
class Judgement:
    """A claim judged in a context: one ``Result`` per piece of evidence, or, when its computation
    raised, no result and the one-line ``error`` naming the claim (``ClaimError``'s message)."""

    claim: Claim
    results: tuple[Result, ...] = ()
    error: str | None = None
    cause: BaseException | None = field(default=None, repr=False, compare=False)  # what the computation raised

    def raise_error(self) -> None:
        """A ``ClaimError`` with the one-line error (from its cause), if the computation raised;
        nothing otherwise."""
        if self.error is not None:
            raise ClaimError(self.error) from self.cause


def judge_claim(claim: Claim, ctx: Context) -> Judgement:
    """The one judging path of ``ib.check``, ``implicitbias verify`` and the report: ``claim``
    measured and judged in ``ctx`` (``claims.evaluate``), an error raised on the way caught as the
    judgement's one-line ``error`` (a ``ParameterError`` is raised: bad input is no claim's fault)."""
    try:
        with naming(f"claim {claim.id}"):
            return Judgement(claim, tuple(claims.evaluate(claim, ctx)))
    except ClaimError as exc:
        return Judgement(claim, error=str(exc), cause=exc.__cause__)
