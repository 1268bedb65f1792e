"""Backward error analysis by Taylor matching: the modified flow of an optimiser update.

Given a one-step update with optional optimiser state s (momentum buffers, Adam moments),

    (theta_{k+1}, s_{k+1}) = Phi_h(theta_k, s_k; j)        j = step index within a period of m
                                                           steps (m minibatches of an epoch)

find the vector field f = f_0 + h f_1 + ... + h^p f_p and the slow manifold of the state
s = sigma(theta) = sigma_0 + h sigma_1 + ... (the state "slaved" to theta once the transient of
its initial value has died out) such that, over one period of flow time m h,

    theta-part of Phi^m(theta, sigma(theta))  =  exp(m h f)(theta)          + O(h^{p+2})
    state-part of Phi^m(theta, sigma(theta))  =  sigma(exp(m h f)(theta))   + O(h^{p+1})

where exp(tau f)(theta) = sum_k tau^k / k! (f . grad)^k theta is the time-tau flow of f (Lie
series).  With random reshuffling the period map is averaged over the m! orders of the m
minibatches (the mean iterate, Smith et al. 2021).  Order n of the matching is linear in the
unknowns (f_n, sigma_n): the engine substitutes placeholders for them, expands both sides in h
and solves the linear equations order by order.  The time of the flow is t = k h (one step is
h units of time); d theta / dt = f(theta).

Parameters theta = (theta_1, ..., theta_d) are real symbols; losses are sympy expressions in
them, by default undefined functions L(theta) (or L_1..L_m for m minibatches), so the results
hold for any smooth loss and can be specialised with ``ModifiedFlow.specialise``.

Sources: Hairer, Lubich, Wanner, "Geometric Numerical Integration", ch. IX (backward error
analysis); Barrett & Dherin 2021 (GD); Smith, Dherin, Barrett, De 2021 (SGD); Ghosh et al. 2023
(heavy ball); Cattaneo, Klusowski, Shigida 2024 (Adam).  Written here because no library does
symbolic backward error analysis of optimisers with state.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.display import latex_block

__all__ = ["Update", "ModifiedFlow", "modified_flow", "lie_series", "taylor_in", "h"]

h = sp.Symbol("h", positive=True)

# grad(theta, j) -> the gradient of minibatch j's loss at the point theta (a list of expressions)
Gradient = Callable[[Sequence[sp.Expr], int], list[sp.Expr]]
Step = Callable[[list[sp.Expr], list[sp.Expr], Gradient, int], tuple[list[sp.Expr], list[sp.Expr]]]


@dataclass
class Update:
    """A one-step optimiser map, written with the step size symbol ``h`` of this module.

    ``step(theta, state, grad, j) -> (theta_new, state_new)``: ``theta`` a list of d expressions,
    ``state`` a list of ``state_size(d)`` expressions, ``grad(point, j)`` the gradient of
    minibatch j's loss at ``point``.  ``period`` steps (minibatches) make one period; with
    ``reshuffle`` the period map is averaged over the orders of the minibatches.
    """

    name: str
    step: Step
    state_size: Callable[[int], int] = lambda d: 0
    period: int = 1
    reshuffle: bool = False
    symbols: dict[str, sp.Symbol] = field(default_factory=dict)
    description: str = ""


def taylor_in(expr: sp.Expr, var: sp.Symbol, order: int) -> sp.Expr:
    """sum_{k <= order} (d^k expr / d var^k)(0) var^k / k!  (truncated Taylor polynomial)."""
    terms, d = [], expr
    for k in range(order + 1):
        terms.append(d.subs(var, 0) * var**k / math.factorial(k))
        if k < order:
            d = sp.diff(d, var)
    return sp.Add(*terms)


def _coefficient(expr: sp.Expr, n: int) -> sp.Expr:
    """Coefficient of h^n in the Taylor expansion of ``expr`` about h = 0."""
    return sp.diff(expr, h, n).subs(h, 0) / math.factorial(n)


def _solve_linear(eqs: list[sp.Expr], unknowns: Sequence[sp.Symbol]) -> dict:
    """Solve eqs = 0, linear in ``unknowns``: A u + b = 0 with A the Jacobian, b eqs at u = 0."""
    A = sp.Matrix(eqs).jacobian(unknowns)
    b = sp.Matrix(eqs).subs({u: 0 for u in unknowns})
    if A.det() == 0:
        raise params.ParameterError("the matching equations are singular (no modified flow exists)")
    return dict(zip(unknowns, A.LUsolve(-b)))


def lie_series(f: Sequence[sp.Expr], g: Sequence[sp.Expr], X: Sequence[sp.Symbol], tau: sp.Expr, order: int) -> list[sp.Expr]:
    """g(exp(tau f)(X)) = sum_k tau^k / k! (f . grad)^k g, truncated at order ``order`` in h."""
    out = list(g)
    term = list(g)
    for k in range(1, order + 1):
        term = [sum(fi * sp.diff(t, xi) for fi, xi in zip(f, X)) for t in term]
        out = [o + tau**k / math.factorial(k) * t for o, t in zip(out, term)]
    return [taylor_in(o, h, order) for o in out]


def _shifted_gradient(grads: Sequence[Sequence[sp.Expr]], X: Sequence[sp.Symbol], order: int) -> Gradient:
    """grad(point, j): Taylor expansion of minibatch j's gradient about X, point = X + O(h)."""

    def grad(point, j):
        delta = [sp.expand(p - x) for p, x in zip(point, X)]
        out = list(grads[j])
        term = list(grads[j])
        for k in range(1, order + 1):
            term = [sum(di * sp.diff(t, xi) for di, xi in zip(delta, X)) for t in term]
            out = [o + t / math.factorial(k) for o, t in zip(out, term)]
        return [taylor_in(o, h, order) for o in out]

    return grad


@dataclass
class ModifiedFlow:
    r"""A modified flow :math:`\dot\theta = f_0 + h f_1 + h^2 f_2 + \dots` (``terms[n]`` is :math:`f_n`).

    Optimisers with a state (momentum, Adam's moments) have it on the slow manifold
    :math:`s = \sum_n h^n \sigma_n(\theta)`.  :func:`implicitbias.modified_flow` derives one.
    """

    update: Update
    X: tuple[sp.Symbol, ...]
    losses: tuple[sp.Expr, ...]
    terms: list[list[sp.Expr]]
    state: list[list[sp.Expr]]

    @property
    def order(self) -> int:
        return len(self.terms) - 1

    def field(self, order: int | None = None) -> list[sp.Expr]:
        r""":math:`f_0 + h f_1 + \dots + h^{\text{order}} f_{\text{order}}` (all computed terms by default)."""
        order = self.order if order is None else params.integer("order", order, minimum=0, maximum=self.order)
        return [sp.Add(*(h**n * self.terms[n][i] for n in range(order + 1))) for i in range(len(self.X))]

    def slow_state(self, order: int | None = None) -> list[sp.Expr]:
        r""":math:`\sigma_0 + h \sigma_1 + \dots`: the state on the slow manifold (used to start iterates)."""
        order = self.order if order is None else order
        if not self.state:
            return []
        return [sp.Add(*(h**n * self.state[n][i] for n in range(order + 1))) for i in range(len(self.state[0]))]

    def specialise(self, losses: Sequence[sp.Expr], **values) -> ModifiedFlow:
        """The same flow with the generic losses replaced by concrete ones and symbols by values.

        Every derivative of a generic loss is replaced by the derivative of the concrete loss
        (``xreplace`` of the derivative atoms: fast, no re-derivation, no simplification).
        """
        if len(losses) != len(self.losses):
            raise params.ParameterError(f"losses must hold {len(self.losses)} expressions, got {len(losses)}")
        reps = {}
        for generic, concrete in zip(self.losses, losses):
            reps[generic] = concrete
            for expr in self.terms + self.state:
                for e in expr:
                    for atom in e.atoms(sp.Derivative):
                        if atom.expr == generic:
                            reps[atom] = sp.diff(concrete, *atom.variable_count)
        subs = {self.update.symbols[k]: v for k, v in values.items() if k in self.update.symbols}

        def sub(e):
            return e.xreplace(reps).subs(subs)

        return ModifiedFlow(
            self.update,
            self.X,
            tuple(losses),
            [[sub(e) for e in t] for t in self.terms],
            [[sub(e) for e in s] for s in self.state],
        )

    def latex_lines(self, simplify: bool = True) -> list[str]:
        """LaTeX of d theta/dt = f_0 + h f_1 + ..., one equation per component (``sympy.latex``)."""
        lines = []
        for i, x in enumerate(self.X):
            parts = []
            for n, t in enumerate(self.terms):
                e = sp.factor(sp.simplify(t[i])) if simplify else t[i]
                if e == 0:
                    continue
                parts.append(sp.latex(e) if n == 0 else rf"{sp.latex(h**n)} \left({sp.latex(e)}\right)")
            rhs = " + ".join(parts) or "0"
            lines.append(rf"\frac{{d {sp.latex(x)}}}{{dt}} = {rhs}")
        return lines

    def latex(self, simplify: bool = True) -> str:
        r"""LaTeX of :math:`\dot\theta = f_0 + h f_1 + \dots`, one line per component."""
        return r" \\ ".join(self.latex_lines(simplify))

    def _repr_latex_(self) -> str:
        return latex_block(self.latex_lines())

    def __repr__(self) -> str:
        return f"ModifiedFlow({self.update.name!r}, order={self.order}, dim={len(self.X)})"


def modified_flow(update: Update, order: int = 1, dim: int = 1, losses: Sequence[sp.Expr] | None = None) -> ModifiedFlow:
    """Derive f_0, ..., f_order of ``update`` by Taylor matching (see module docstring).

    ``dim``: number of scalar parameters d; ``losses``: one expression per minibatch in the
    parameters ``theta_1..theta_d`` (default undefined functions ``L`` or ``L_1..L_m``).
    """
    order = params.integer("order", order, minimum=0, maximum=3)
    d = params.integer("dim", dim, minimum=1, maximum=4)
    m = update.period
    X = tuple(sp.symbols(f"theta_1:{d + 1}", real=True)) if d > 1 else (sp.Symbol("theta", real=True),)
    if losses is None:
        names = ["L"] if m == 1 else [f"L_{j + 1}" for j in range(m)]
        losses = [sp.Function(n, real=True)(*X) for n in names]
    if len(losses) != m:
        raise params.ParameterError(f"losses must hold {m} expressions (one per minibatch), got {len(losses)}")
    grads = [[sp.diff(L, x) for x in X] for L in losses]
    r = update.state_size(d)
    orders = list(itertools.permutations(range(m))) if update.reshuffle else [tuple(range(m))]
    terms: list[list[sp.Expr]] = []
    state: list[list[sp.Expr]] = []
    for n in range(order + 1):
        F = sp.symbols(f"F_1:{d + 1}")
        S = sp.symbols(f"S_1:{r + 1}") if r else ()
        f = [sp.Add(*(h**i * terms[i][c] for i in range(n))) + h**n * F[c] for c in range(d)]
        sigma = [sp.Add(*(h**i * state[i][c] for i in range(n))) + h**n * S[c] for c in range(r)]
        grad = _shifted_gradient(grads, X, n + 1)
        lhs_theta = [sp.Integer(0)] * d
        lhs_state = [sp.Integer(0)] * r
        for perm in orders:
            theta, s = list(X), list(sigma)
            for j in perm:
                theta, s = update.step(theta, s, grad, j)
                theta = [taylor_in(t, h, n + 1) for t in theta]
                s = [taylor_in(v, h, n) for v in s]
            lhs_theta = [a + b / len(orders) for a, b in zip(lhs_theta, theta)]
            lhs_state = [a + b / len(orders) for a, b in zip(lhs_state, s)]
        rhs_theta = lie_series(f, X, X, m * h, n + 1)
        rhs_state = lie_series(f, sigma, X, m * h, n)
        sol_state = _solve_linear([_coefficient(a - b, n) for a, b in zip(lhs_state, rhs_state)], S) if r else {}
        sol_state = {k: sp.simplify(v) for k, v in sol_state.items()}
        eq_theta = [_coefficient(a - b, n + 1).subs(sol_state) for a, b in zip(lhs_theta, rhs_theta)]
        sol = _solve_linear(eq_theta, F)
        terms.append([sp.simplify(sol[Fi]) for Fi in F])
        state.extend([[sol_state[Si] for Si in S]] if r else [])
    return ModifiedFlow(update, X, tuple(losses), terms, state)
