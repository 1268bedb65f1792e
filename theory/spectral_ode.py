"""Singular-value ODEs of the deep UFM under Hadamard initialisation, derived with sympy.

Setting (Spec A, sections 1 and 4).  K = 2^k classes, n samples per class, depth L = number of
weight matrices, N = L + 1 factors including the features H.  Under the Hadamard initialisation
(``implicitbias.numerics.ufm.deep_ufm.hadamard_init``) every factor keeps its singular vectors
(``implicitbias.theory.hadamard``: the cross-entropy gradient of a dyadic logit matrix is diagonal
in Q = H_K / sqrt(K)), so the flow lives on the per-layer singular values s_{l,j}, l = 0..L
(l = 0 is H), j = 0..K-1, with logit singular values S_j = prod_l s_{l,j} and

    Zbar = Q diag(S) Q / sqrt(n),  Zbar_{ab} = z_{a XOR b} / sqrt(n),  z_m = (1/K) sum_j S_j chi_j(m),
    loss = (1/K) sum_k [ log sum_a exp Zbar_{ak} - Zbar_{kk} ]      (mean over all K n columns).

Gradient flow on the factors restricted to that invariant set is ds_{l,j}/dt = -dl/ds_{l,j}.
``derive_from_loss(K, L)`` differentiates the loss above exactly (any n, K <= 8); the result is
the per-mode system (coupling g_j = <chi_j, p>, p = softmax(z / sqrt n))

    unbalanced:  ds_{l,j}/dt = 1/(K sqrt n) * prod_{m != l} s_{m,j} * (1 - g_j)
    balanced:    dS_j/dt     = N/(K sqrt n) * S_j^(2 - 2/N) * (1 - g_j)     (all s_{l,j} equal)

which ``per_mode_system`` builds generically in K (tests prove both agree exactly for K = 2, 4, 8).
The j = 0 mode has g_0 = 1: it never moves and shifts all logits equally, so it is left out of the
state.  Every 1 - g_j >= 0, so singular values never decrease: log coordinates u = log s are used
for integration (no sign changes, and blow-ups become linear growth in u).

``SpectralODE`` lambdifies the per-mode right-hand side and its partial derivatives and assembles
the full right-hand side and Jacobian (dg_j/dS_k = Cov_p(chi_j, chi_k) / (K sqrt n)) for any K,
in terms of r_j = 1 - g_j computed without cancellation (accurate at any margin).
Source: Garrod, Keating, Thrampoulidis, arXiv 2512.04006 and 2605.23087 (statement); the
derivation and constants here are this package's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from scipy.special import softmax

from implicitbias.theory import params
from implicitbias.theory.display import latex_block
from implicitbias.theory.hadamard import sylvester

__all__ = [
    "FullDerivation",
    "PerModeSystem",
    "SpectralODE",
    "check_depth",
    "check_spectrum",
    "derive_from_loss",
    "per_mode_matches_loss",
    "per_mode_system",
]

n_sym = sp.Symbol("n", positive=True)
K_sym = sp.Symbol("K", positive=True, integer=True)
g_sym = sp.Symbol("g", real=True)
r_sym = sp.Symbol("r", nonnegative=True)  # r = 1 - g


def check_depth(L) -> int:
    """L counts weight matrices (N = L + 1 factors); L >= 1."""
    return params.integer("L", L, minimum=1, maximum=64)


@dataclass
class FullDerivation:
    """Exact derivation for one (K, L): symbols s[l][j], the loss, and rhs[l][j] = -dl/ds_{l,j}.

    ``exponentials`` maps each exp(z_m / sqrt n) appearing in the loss to a symbol E_m, so that
    expressions become rational functions in (s, E) that sympy can compare exactly.
    """

    K: int
    L: int
    s: list[list[sp.Symbol]]
    loss: sp.Expr
    rhs: list[list[sp.Expr]]
    logit: list[sp.Expr]  # z_m / sqrt(n), m = 0..K-1
    exponentials: dict


def _logit_index_expr(K: int, S: list, m: int, chi) -> sp.Expr:
    """z_m / sqrt(n) = (1 / (K sqrt n)) sum_j S_j chi_j(m)."""
    return sum(S[j] * int(chi[m, j]) for j in range(K)) / (K * sp.sqrt(n_sym))


def derive_from_loss(K: int, L: int) -> FullDerivation:
    """Differentiate the mean cross-entropy of the Hadamard-structured deep UFM (exact, sympy).

    K a power of two (2..8 for speed), L counts weight matrices (N = L + 1 factors), n symbolic.
    Builds Zbar_{ab} = z_{a XOR b}/sqrt(n) from the per-layer singular values and returns
    rhs[l][j] = -d loss / d s_{l,j} for all l = 0..L and j = 0..K-1 (the j = 0 mode included).
    """
    K = params.power_of_two("K", K, minimum=2, maximum=8)
    L = check_depth(L)
    chi = sylvester(K)
    s = [[sp.Symbol(f"s_{l}_{j}", positive=True) for j in range(K)] for l in range(L + 1)]
    S = [sp.Mul(*[s[l][j] for l in range(L + 1)]) for j in range(K)]
    x = [_logit_index_expr(K, S, m, chi) for m in range(K)]
    cols = []
    for k in range(K):
        column = [x[a ^ k] for a in range(K)]
        cols.append(sp.log(sum(sp.exp(v) for v in column)) - column[k])
    loss = sum(cols) / K
    rhs = [[-sp.diff(loss, s[l][j]) for j in range(K)] for l in range(L + 1)]
    E = {sp.exp(x[m]): sp.Symbol(f"E_{m}", positive=True) for m in range(K)}
    return FullDerivation(K, L, s, loss, rhs, x, E)


@dataclass
class PerModeSystem:
    """The per-mode ODE of one singular-value mode j (coupling g = g_j = <chi_j, p>).

    ``layer_values`` a_0..a_L (per-layer singular values of mode j) for the unbalanced system,
    or the single logit singular value S for the balanced one; ``rhs`` their time derivatives;
    ``log_rhs`` the same in log coordinates u = log(value); ``log_state`` the symbols u.
    """

    K: sp.Expr
    L: int
    balanced: bool
    layer_values: list[sp.Symbol]
    rhs: list[sp.Expr]
    log_state: list[sp.Symbol]
    log_rhs: list[sp.Expr]

    def latex_lines(self) -> list[str]:
        """LaTeX of the system (``sympy.latex``), one equation per mode variable."""
        lhs = [sp.Derivative(sp.Function(v.name)(sp.Symbol("t")), sp.Symbol("t")) for v in self.layer_values]
        return [f"{sp.latex(a)} = {sp.latex(b)}" for a, b in zip(lhs, self.rhs)]

    def latex(self) -> str:
        """LaTeX of the system, one equation per line."""
        return r" \\ ".join(self.latex_lines())

    def _repr_latex_(self) -> str:
        return latex_block(self.latex_lines())


def per_mode_system(L: int, K=None, balanced: bool = False) -> PerModeSystem:
    """The per-mode singular-value ODE for depth L (N = L + 1 factors), generic or fixed K.

    Chain rule through S = prod_l a_l with dl/dS = -(1 - g)/(K sqrt n) (the derivative of the
    mean cross-entropy in the Hadamard basis, checked against ``derive_from_loss``):
    da_l/dt = -dl/dS * dS/da_l.  Balanced: a_l = S^(1/N) for every l, dS/dt = sum_l dS/da_l da_l/dt.
    """
    L = check_depth(L)
    N = L + 1
    K = K_sym if K is None else sp.sympify(K)
    dl_dS = -(1 - g_sym) / (K * sp.sqrt(n_sym))
    a = list(sp.symbols(f"a0:{N}", positive=True))
    S = sp.Mul(*a)
    unbalanced = [sp.simplify(-dl_dS * sp.diff(S, a_l)) for a_l in a]
    if not balanced:
        u = list(sp.symbols(f"u0:{N}", real=True))
        to_u = {a_l: sp.exp(u_l) for a_l, u_l in zip(a, u)}
        log_rhs = [
            sp.powsimp(sp.expand_power_base(r.xreplace(to_u) / sp.exp(u_l), force=True))
            for r, u_l in zip(unbalanced, u)
        ]
        return PerModeSystem(K, L, False, a, unbalanced, u, [sp.simplify(r) for r in log_rhs])
    Ssym = sp.Symbol("S", positive=True)
    on_balanced = {a_l: Ssym ** sp.Rational(1, N) for a_l in a}
    dS = sp.simplify(sum(sp.diff(S, a_l) * r for a_l, r in zip(a, unbalanced)).xreplace(on_balanced))
    v = sp.Symbol("v", real=True)
    log_rhs = sp.simplify(sp.powsimp((dS / Ssym).xreplace({Ssym: sp.exp(v)}), force=True))
    return PerModeSystem(K, L, True, [Ssym], [dS], [v], [log_rhs])


def per_mode_matches_loss(K: int, L: int) -> bool:
    """Exact check that ``derive_from_loss(K, L)`` equals ``per_mode_system(L, K)`` for every (l, j).

    Both sides become rational functions of the per-layer singular values and E_m = exp(z_m/sqrt n)
    (p_m = E_m / sum E, g_j = sum_m p_m chi_j(m)); their difference must cancel to 0.
    L counts weight matrices (N = L + 1 factors).
    """
    full = derive_from_loss(K, L)
    mode = per_mode_system(L, K)
    chi = sylvester(full.K)
    E = [full.exponentials[sp.exp(x)] for x in full.logit]
    p = [e / sum(E) for e in E]
    for j in range(full.K):
        g = sum(p[m] * int(chi[m, j]) for m in range(full.K))
        on_mode = {a: full.s[i][j] for i, a in enumerate(mode.layer_values)}
        for l in range(full.L + 1):
            template = mode.rhs[l].xreplace(on_mode).xreplace({g_sym: g})
            if sp.cancel(sp.together(full.rhs[l][j].xreplace(full.exponentials) - template)) != 0:
                return False
    return True


def check_spectrum(values, shape: tuple[int, ...], name: str = "singular_values") -> np.ndarray:
    """Validate initial singular values: the given shape, finite and > 0 (log coordinates)."""
    x = np.asarray(values, dtype=float)
    if x.shape != shape:
        raise params.ParameterError(f"{name} must have shape {shape}, got {x.shape}")
    if not np.isfinite(x).all():
        raise params.ParameterError(f"{name} must be finite, got non-finite entries")
    if not (x > 0).all():
        raise params.ParameterError(f"{name} must be > 0 (singular values of a Hadamard init), got min {x.min():g}")
    return x


@dataclass
class SpectralODE:
    r"""Numeric right-hand side and Jacobian of the derived system, in log coordinates, any :math:`K`.

    State :math:`x`: balanced, :math:`x_j = \log S_j` (:math:`j = 1, \dots, K-1`, shape ``(K-1,)``);
    unbalanced, :math:`x = \log s_{l,j}` flattened from shape ``(L+1, K-1)``, row :math:`l` =
    factor :math:`l` (0 is :math:`H`).  :math:`L` counts weight matrices (:math:`N = L + 1`
    factors).  Built from ``per_mode_system`` by lambdify; the coupling is
    :math:`g = H_K^\top p` with :math:`p = \operatorname{softmax}(z/\sqrt{n})`,
    :math:`z = H_K S / K` (:math:`H_K` the Hadamard matrix, ``scipy.linalg.hadamard``).  Balanced,

    .. math::

        \frac{dS_j}{dt} = \frac{N}{K\sqrt{n}} \, S_j^{\,2 - 2/N} \, (1 - g_j).
    """

    K: int
    L: int
    n: int = 1
    balanced: bool = True
    system: PerModeSystem = field(init=False, repr=False)

    def __post_init__(self):
        self.K = params.power_of_two("K", self.K, minimum=2, maximum=2**13)
        self.L = check_depth(self.L)
        self.n = params.integer("n", self.n, minimum=1, maximum=10**6)
        self.balanced = params.boolean("balanced", self.balanced)
        self.system = per_mode_system(self.L, self.K, self.balanced)
        u = self.system.log_state
        # Written in r = 1 - g: at large margins 1 - g ~ e^{-margin} is far below float64 resolution
        # of g itself, so r is computed directly as 2 * (softmax mass where chi_j = -1).
        exprs = [e.subs({n_sym: self.n, g_sym: 1 - r_sym}) for e in self.system.log_rhs]
        self._f = sp.lambdify([*u, r_sym], exprs, "numpy")
        self._df_du = sp.lambdify([*u, r_sym], [[sp.diff(e, ui) for ui in u] for e in exprs], "numpy")
        self._df_dr = sp.lambdify([*u, r_sym], [sp.diff(e, r_sym) for e in exprs], "numpy")
        self._chi = sylvester(self.K).astype(float)[:, 1:]  # chi_j(m), j = 1..K-1
        self._negative = 1.0 - self._chi  # 2 where chi_j(m) = -1: r = (1 - chi)^T p
        self.layers = 1 if self.balanced else self.L + 1
        self.shape = (self.K - 1,) if self.balanced else (self.L + 1, self.K - 1)

    def _repr_latex_(self) -> str:
        """The per-mode system it integrates (``PerModeSystem``), as LaTeX."""
        return latex_block(self.system.latex_lines())

    # -- state helpers --------------------------------------------------------------------
    def initial_state(self, singular_values) -> np.ndarray:
        """Log coordinates of positive initial singular values of shape ``self.shape``."""
        return np.log(check_spectrum(singular_values, self.shape)).reshape(-1)

    def _u(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=float).reshape(self.layers, self.K - 1)

    def logit_singular_values(self, x: np.ndarray) -> np.ndarray:
        r""":math:`S_j = \prod_l s_{l,j}`, :math:`j = 1, \dots, K-1`: the singular values of :math:`Z` (:math:`\sqrt{n}` times those of :math:`\bar Z`)."""
        return np.exp(self._u(x).sum(axis=0))

    def logit_vector(self, x: np.ndarray) -> np.ndarray:
        r""":math:`z_m/\sqrt{n}`, :math:`m = 0, \dots, K-1`: :math:`\bar Z_{ab} = (z/\sqrt{n})_{a \oplus b}`."""
        return self._chi @ self.logit_singular_values(x) / (self.K * np.sqrt(self.n))

    def margin(self, x: np.ndarray) -> float:
        r"""Smallest margin of the logits: :math:`(z_0 - \max_{m \ne 0} z_m)/\sqrt{n}`."""
        z = self.logit_vector(x)
        return float(z[0] - z[1:].max())

    def coupling(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""``(r, p)``: :math:`r_j = 1 - g_j = 2 \sum_{m:\, \chi_j(m) = -1} p_m` (:math:`j = 1, \dots, K-1`, no cancellation) and the softmax :math:`p`."""
        p = softmax(self.logit_vector(x))
        return self._negative.T @ p, p

    # -- right-hand side and Jacobian -------------------------------------------------------
    def rhs(self, _t: float, x: np.ndarray) -> np.ndarray:
        """dx/dt in log coordinates (flattened)."""
        u = self._u(x)
        r, _ = self.coupling(x)
        out = self._f(*u, r)
        return np.broadcast_to(np.array(out, dtype=float), u.shape).reshape(-1)

    def jac(self, _t: float, x: np.ndarray) -> np.ndarray:
        r""":math:`\partial \dot x / \partial x`: per-mode partials plus the coupling :math:`\partial g_j / \partial u_{m,k} = \operatorname{Cov}_p(\chi_j, \chi_k) \, S_k/(K\sqrt{n})`."""
        u = self._u(x)
        r, p = self.coupling(x)
        S = np.exp(u.sum(axis=0))
        centred = self._chi - 1.0 + r[None, :]  # chi_j(m) - g_j, accurate when g_j ~ 1
        cov = (centred.T * p) @ centred
        dr = -cov * S[None, :] / (self.K * np.sqrt(self.n))  # dr_j/du_{m,k}, the same for every layer m
        M = self.K - 1
        df_du = np.broadcast_to(
            np.array(self._df_du(*u, r), dtype=float).reshape(self.layers, self.layers, -1),
            (self.layers, self.layers, M),
        )
        df_dr = np.broadcast_to(np.array(self._df_dr(*u, r), dtype=float).reshape(self.layers, -1), (self.layers, M))
        J = np.einsum("lj,jk->ljk", df_dr, dr)[:, :, None, :].repeat(self.layers, axis=2)  # (l, j, m, k)
        idx = np.arange(M)
        J[:, idx, :, idx] += np.moveaxis(df_du, 2, 0)
        return J.reshape(self.layers * M, self.layers * M)
