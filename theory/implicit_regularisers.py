"""Implicit regularisers read off the derived modified flows (never typed in).

Each function derives a modified flow with ``implicitbias.theory.modified_flow`` and identifies
its first-order term f_1 as (minus, possibly preconditioned) the gradient of a combination of
candidate regularisers, f_1 = -P grad(sum_i c_i R_i), by solving for the c_i exactly (the
coefficients of every monomial in the loss derivatives must match).  One parameter theta and
generic losses suffice: the elementary differentials are the same in every dimension.

    gd_coefficient()            c in  L~ = L + c h |grad L|^2          (Barrett & Dherin: 1/4)
    heavy_ball_terms()          f_0 = -a grad L, f_1 = -grad(c |grad L|^2): (a, c);
                                GD at the effective step h a has c_GD = a^2 / 4, ratio c / c_GD
                                (Ghosh et al.: a = 1/(1-beta), ratio (1+beta)/(1-beta))
    sgd_minibatch_coefficients(N, b)
                                SGD with random reshuffling, m = N/b minibatches of the N
                                per-example losses, mean over the random partitions:
                                L~ = C + h (a |grad C|^2 + c Gamma), Gamma = (1/N) sum_i
                                |grad l_i - grad C|^2 (Smith et al.: a = 1/4, c = (N-b)/(4b(N-1)))
    adam_one_norm_coefficient() eps -> 0 and g > 0: f_0 = -g/|g|, f_1 = -(1/|g|) d/dtheta(c |g|):
                                the one-norm |grad L|_1 is penalised when c > 0, anti-penalised
                                when c < 0 (Cattaneo, Klusowski, Shigida 2024: anti for defaults)
"""

from __future__ import annotations

import functools
import itertools

import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import adam, beta1, beta2, eps, gd, heavy_ball, sgd_rr

__all__ = [
    "fit_potential",
    "gd_coefficient",
    "heavy_ball_terms",
    "sgd_minibatch_coefficients",
    "adam_one_norm_coefficient",
]


def fit_potential(field: sp.Expr, basis: list[sp.Expr], theta: sp.Symbol, preconditioner: sp.Expr = 1) -> list[sp.Expr]:
    """Coefficients c with field = -preconditioner * d/dtheta (sum c_i basis_i), exactly.

    Raises ``ParameterError`` if no such coefficients exist (field not of that form).
    """
    cs = sp.symbols(f"c_0:{len(basis)}")
    residual = field + preconditioner * sp.diff(sum(c * B for c, B in zip(cs, basis)), theta)
    residual = sp.expand(sp.together(residual).as_numer_denom()[0])
    atoms = sorted(residual.atoms(sp.Derivative, sp.Function), key=sp.default_sort_key)
    dummies = sp.symbols(f"a_0:{len(atoms)}")
    poly = sp.Poly(residual.xreplace(dict(zip(atoms, dummies))), *dummies)
    sol = sp.solve(poly.coeffs(), cs, dict=True)
    if not sol:
        raise params.ParameterError("field is not a preconditioned gradient of the given basis")
    return [sp.simplify(sol[0].get(c, 0)) for c in cs]


def gd_coefficient() -> sp.Expr:
    """c in the modified loss L + c h |grad L|^2 of gradient descent (derived)."""
    flow = modified_flow(gd(), 1)
    (theta,), (L,) = flow.X, flow.losses
    return fit_potential(flow.terms[1][0], [sp.diff(L, theta) ** 2], theta)[0]


def heavy_ball_terms() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(a, c, ratio): f_0 = -a grad L, f_1 = -grad(c |grad L|^2), ratio = c / (a^2 / 4)."""
    flow = modified_flow(heavy_ball(), 1)
    (theta,), (L,) = flow.X, flow.losses
    g = sp.diff(L, theta)
    a = fit_potential(flow.terms[0][0], [L], theta)[0]
    c = fit_potential(flow.terms[1][0], [g**2], theta)[0]
    # GD with step h a, in the time of the heavy-ball steps: c_GD = a * (a / 4) (flow time rescaled by a)
    c_gd = sp.expand(a * gd_coefficient() * a)
    return sp.factor(a), sp.factor(c), sp.factor(sp.simplify(c / c_gd))


@functools.cache
def _rr_flow(m: int):
    return modified_flow(sgd_rr(m), 1)


def sgd_minibatch_coefficients(N: int, b: int) -> tuple[sp.Expr, sp.Expr]:
    """(a, c) of the mean SGD-RR modified loss C + h (a |grad C|^2 + c Gamma) (derived).

    The engine derives the flow for m = N / b generic minibatch losses; each minibatch loss is
    then replaced by the mean of its b per-example losses l_1..l_N and f_1 is averaged over all
    partitions of the N examples into m ordered minibatches (every reshuffle is equally likely).
    """
    N = params.integer("N", N, minimum=2, maximum=8)
    b = params.integer("b", b, minimum=1, maximum=N)
    if N % b:
        raise params.ParameterError(f"b must divide N, got b = {b}, N = {N}")
    m = N // b
    flow = _rr_flow(m)
    (theta,) = flow.X
    ell = [sp.Function(f"l_{i + 1}", real=True)(theta) for i in range(N)]
    partitions = {tuple(frozenset(p[k * b : (k + 1) * b]) for k in range(m)) for p in itertools.permutations(range(N))}
    total = 0
    for part in partitions:
        batch_losses = [sum(ell[i] for i in B) / b for B in part]
        total += flow.specialise(batch_losses).terms[1][0]
    f1 = sp.expand(total / len(partitions))
    C = sum(ell) / N
    gC = sp.diff(C, theta)
    Gamma = sum((sp.diff(li, theta) - gC) ** 2 for li in ell) / N
    return tuple(fit_potential(f1, [gC**2, Gamma], theta))


def adam_one_norm_coefficient(b1=None, b2=None) -> sp.Expr:
    """c of Adam's first-order term -(1/|g|) d/dtheta (c |g|_1) as eps -> 0 (derived).

    ``b1``, ``b2``: numbers (e.g. 0.9, 0.999) or None for the symbolic beta_1, beta_2.
    """
    subs = {k: v for k, v in ((beta1, b1), (beta2, b2)) if v is not None}
    return sp.simplify(_adam_coefficient().subs(subs))


@functools.lru_cache(maxsize=1)
def _adam_coefficient() -> sp.Expr:
    flow = modified_flow(adam(), 1)
    (theta,), (L,) = flow.X, flow.losses
    g, gg = sp.Derivative(L, theta), sp.Derivative(L, (theta, 2))
    p, q = sp.symbols("p q", positive=True)  # g > 0 and its derivative
    f1 = flow.terms[1][0].subs(eps, 0).xreplace({gg: q}).xreplace({g: p})
    coeff = sp.simplify(-f1 * p / q)  # f_1 = -(1/|g|) d|g|/dtheta c = -(q / p) c
    if coeff.has(p) or coeff.has(q):
        raise params.ParameterError("Adam's first-order term is not a one-norm gradient at eps = 0")
    return coeff
