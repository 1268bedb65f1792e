"""Hadamard diagonalisation (Spec A, section 4): the column softmax of a dyadic logit matrix is
dyadic, so the cross-entropy gradient of a logit matrix diagonal in Q = H_K / sqrt(K) is again
diagonal in Q, which is what freezes the singular vectors of a Hadamard initialisation.

Source: Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4.

Two routes (``implicitbias.theory.hadamard``):

- exact: with symbols f_0..f_{K-1} and M_ab = f_{a XOR b}, sympy simplifies P_ab - P_{a XOR b, 0}
  and the off-diagonal entries of H_K (P - I) H_K to zero (K = 4, 8; the proof is exact but
  sympy's simplification grows fast with K);
- numerical: for larger K, random dyadic logits M = Q diag(sigma) Q with sigma ~ N(0, 3^2), the
  float64 column softmax P: its dyadic defect max |P_ab - P_{a XOR b, 0}| / max |P| and the
  off-diagonal mass of Q (P - I) Q.

A numerical counterexample refutes the statement (disagrees); a symbolic check that sympy could
not close while the numbers are dyadic to rounding is inconclusive (simplification failed, not
the mathematics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table
from implicitbias.numerics.ufm.spectral_agreement import off_diagonal_mass
from implicitbias.theory.hadamard import dyadic_defect, softmax_dyadic_proof, sylvester

PROOF_KIND = "hadamard_diagonalisation.proof"
NUMERIC_KIND = "hadamard_diagonalisation.numeric"


@dataclass(frozen=True)
class Config:
    symbolic_Ks: tuple[int, ...] = (4, 8)
    numeric_Ks: tuple[int, ...] = (16, 64, 256)
    seeds: int = 3


@dataclass(frozen=True)
class ProofCell:
    """K: whether sympy proved the column softmax dyadic and the gradient diagonal in Q."""

    K: int
    softmax_is_dyadic: bool
    gradient_is_diagonal: bool

    @property
    def proven(self) -> bool:
        return self.softmax_is_dyadic and self.gradient_is_diagonal


@dataclass(frozen=True)
class NumericCell:
    """(K, seed): the dyadic defect of the float64 softmax and the off-diagonal mass of Q (P - I) Q."""

    K: int
    seed: int
    softmax_defect: float
    gradient_off_diagonal: float

    @property
    def defect(self) -> float:
        return max(self.softmax_defect, self.gradient_off_diagonal)


@dataclass(frozen=True)
class Measured:
    """The claim's evidence: the symbolic proofs and the numerical cells."""

    proofs: tuple[ProofCell, ...]
    numeric: tuple[NumericCell, ...]


def proof_cell(config: dict) -> dict:
    """Cell {"K"} -> the exact sympy checks of ``softmax_dyadic_proof(K)``."""
    proof = softmax_dyadic_proof(config["K"])
    return {"softmax_is_dyadic": proof.softmax_is_dyadic, "gradient_is_diagonal": proof.gradient_is_diagonal}


def numeric_cell(config: dict) -> dict:
    """Cell {"K", "seed"} -> dyadic defect of softmax(M) and off-diagonal mass of Q (P - I) Q."""
    K = config["K"]
    Q = sylvester(K) / np.sqrt(K)
    sigma = 3.0 * np.random.default_rng(config["seed"]).standard_normal(K)
    P = softmax(Q @ np.diag(sigma) @ Q, axis=0)
    return {"softmax_defect": dyadic_defect(P), "gradient_off_diagonal": off_diagonal_mass(Q @ (P - np.eye(K)) @ Q)}


class HadamardDiagonalisation(TheoremCheck):
    id = "Hadamard diagonalisation (s. 4)"
    statement = "column softmax of a dyadic logit matrix is dyadic, so the CE gradient is diagonal in Q"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4"
    section = "dynamics"
    order = 10
    thresholds = {
        "rounding": Threshold(1e-12, "float64 softmax of O(10) logits is exact to ~1e-15 relative; a non-dyadic "
                                     "softmax is off by O(1)"),
    }
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        proofs = ctx.map(PROOF_KIND, proof_cell, [{"K": K} for K in config.symbolic_Ks], desc="Hadamard proofs")
        numeric_cfgs = [{"K": K, "seed": s} for K in config.numeric_Ks for s in range(config.seeds)]
        numbers = ctx.map(NUMERIC_KIND, numeric_cell, numeric_cfgs, desc="Hadamard numerics")
        check = (f"exact sympy proof for K = {', '.join(map(str, config.symbolic_Ks))}; float64 softmax of random "
                 f"dyadic logits, K = {', '.join(map(str, config.numeric_Ks))}, {config.seeds} seeds")
        return Evidence(check, Measured(tuple(ProofCell(K, **p) for K, p in zip(config.symbolic_Ks, proofs)),
                                        tuple(NumericCell(**c, **r) for c, r in zip(numeric_cfgs, numbers))))

    def judge(self, evidence: Evidence) -> Verdict:
        proofs, numeric = evidence.data.proofs, evidence.data.numeric
        tol = self.threshold("rounding")
        proven = [p.K for p in proofs if p.proven]
        worst = max(r.defect for r in numeric)
        measured = (f"proved for K = {', '.join(map(str, proven)) or 'none'} of {len(proofs)}; largest numerical "
                    f"defect {worst:.1e} (K up to {max(r.K for r in numeric)})")
        numbers = {"proven_K": proven, "max_numeric_defect": worst}
        if worst > tol:
            bad = sorted({r.K for r in numeric if r.defect > tol})
            return disagrees(f"softmax of a dyadic matrix is not dyadic for K = {bad} (defect {worst:.1e} > {tol:g})",
                             measured, **numbers)
        if len(proven) < len(proofs):
            return inconclusive("sympy could not close the proof for every K, yet the numbers are dyadic to rounding",
                                measured, **numbers)
        return agrees("exact for the symbolic K and dyadic to rounding for the numerical K", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        rows = [[r.K, r.seed, f"{r.softmax_defect:.1e}", f"{r.gradient_off_diagonal:.1e}"]
                for r in evidence.data.numeric]
        return markdown_table(["K", "seed", "dyadic defect of softmax", "off-diagonal mass of Q(P - I)Q"], rows)


CLAIM = HadamardDiagonalisation()
