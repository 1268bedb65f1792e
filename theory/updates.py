"""Built-in one-step optimiser maps for the backward-error-analysis engine.

Each constructor returns an ``implicitbias.theory.modified_flow.Update`` with symbolic
hyper-parameters (in ``Update.symbols``); h is the step size, g = grad L(theta_k), and every map
is written in PyTorch's convention (the gradient is taken at the current iterate):

    gd            theta' = theta - h g
    sgd_rr(m)     m steps of GD on minibatch losses L_1..L_m per epoch, random reshuffling
                  (period map averaged over the m! orders: the mean iterate)
    heavy_ball    v' = beta v + g;            theta' = theta - h v'
    nesterov      v' = beta v + g;            theta' = theta - h (g + beta v')
    rmsprop       v' = rho v + (1-rho) g^2;   theta' = theta - h g / sqrt(v' + eps)
    adam          m' = beta1 m + (1-beta1) g, v' = beta2 v + (1-beta2) g^2,
                  theta' = theta - h m' / sqrt(v' + eps)
    adamw         adam with decoupled decay: theta' = (1 - h lambda) theta - h m' / sqrt(v' + eps)
    sign          theta' = theta - h g / sqrt(g^2 + eps)   (smoothed sign descent; eps -> 0 is sign)
    muon          B' = mu B + g, U = g + mu B' (Nesterov), theta' = theta - h polar_eps(U), with the
                  polar factor in closed form: ``shape="diagonal"`` (theta the diagonal of a
                  diagonal weight matrix: polar = U_i / sqrt(U_i^2 + eps) per entry) or
                  ``shape="row"`` (theta a 1 x d matrix, rank one: polar = U / sqrt(|U|^2 + eps))
    coupled_l2(u) u with g replaced by g + lambda theta (L2 decay added to the loss)

Choices (documented): Adam/RMSProp put eps inside the square root (the perturbed one-norm
convention of Cattaneo, Klusowski, Shigida 2024) and omit bias correction (the modified flow
describes the iterates after the moment transients, where the correction factors are 1);
polar factors are eps-smoothed so the flow is smooth (eps -> 0 recovers the exact factor).
"""

from __future__ import annotations

import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.modified_flow import Update, h

__all__ = [
    "gd",
    "sgd_rr",
    "heavy_ball",
    "nesterov",
    "rmsprop",
    "adam",
    "adamw",
    "sign_descent",
    "muon",
    "coupled_l2",
    "UPDATES",
    "builtin",
    "ALIASES",
]

beta, rho, beta1, beta2, mu = sp.symbols("beta rho beta_1 beta_2 mu", positive=True)
eps = sp.Symbol("epsilon", positive=True)
lam = sp.Symbol("lambda", positive=True)


def gd() -> Update:
    def step(theta, state, grad, j):
        return [t - h * g for t, g in zip(theta, grad(theta, j))], []

    return Update("gd", step, description="gradient descent theta' = theta - h g")


def sgd_rr(m: int = 2) -> Update:
    """Random reshuffling over m minibatches (period m, mean over the m! orders)."""
    m = params.integer("minibatches", m, minimum=1, maximum=4)
    return Update(
        "sgd_rr",
        gd().step,
        period=m,
        reshuffle=True,
        description=f"SGD with random reshuffling over m = {m} minibatches per epoch",
    )


def heavy_ball() -> Update:
    def step(theta, v, grad, j):
        g = grad(theta, j)
        v = [beta * vi + gi for vi, gi in zip(v, g)]
        return [t - h * vi for t, vi in zip(theta, v)], v

    return Update("heavy_ball", step, lambda d: d, symbols={"beta": beta}, description="v' = beta v + g, theta' = theta - h v'")


def nesterov() -> Update:
    def step(theta, v, grad, j):
        g = grad(theta, j)
        v = [beta * vi + gi for vi, gi in zip(v, g)]
        return [t - h * (gi + beta * vi) for t, gi, vi in zip(theta, g, v)], v

    return Update("nesterov", step, lambda d: d, symbols={"beta": beta}, description="v' = beta v + g, theta' = theta - h (g + beta v')")


def rmsprop() -> Update:
    def step(theta, v, grad, j):
        g = grad(theta, j)
        v = [rho * vi + (1 - rho) * gi**2 for vi, gi in zip(v, g)]
        return [t - h * gi / sp.sqrt(vi + eps) for t, gi, vi in zip(theta, g, v)], v

    return Update("rmsprop", step, lambda d: d, symbols={"rho": rho, "eps": eps}, description="v' = rho v + (1-rho) g^2, theta' = theta - h g / sqrt(v' + eps)")


def _adam_step(decay):
    def step(theta, state, grad, j):
        d = len(theta)
        g = grad(theta, j)
        m = [beta1 * a + (1 - beta1) * gi for a, gi in zip(state[:d], g)]
        v = [beta2 * b + (1 - beta2) * gi**2 for b, gi in zip(state[d:], g)]
        new = [(1 - h * decay) * t - h * mi / sp.sqrt(vi + eps) for t, mi, vi in zip(theta, m, v)]
        return new, m + v

    return step


def adam() -> Update:
    return Update(
        "adam",
        _adam_step(0),
        lambda d: 2 * d,
        symbols={"beta1": beta1, "beta2": beta2, "eps": eps},
        description="m' = b1 m + (1-b1) g, v' = b2 v + (1-b2) g^2, theta' = theta - h m'/sqrt(v' + eps)",
    )


def adamw() -> Update:
    return Update(
        "adamw",
        _adam_step(lam),
        lambda d: 2 * d,
        symbols={"beta1": beta1, "beta2": beta2, "eps": eps, "lambda": lam},
        description="adam with decoupled decay theta' = (1 - h lambda) theta - h m'/sqrt(v' + eps)",
    )


def sign_descent() -> Update:
    def step(theta, state, grad, j):
        return [t - h * gi / sp.sqrt(gi**2 + eps) for t, gi in zip(theta, grad(theta, j))], []

    return Update("sign", step, symbols={"eps": eps}, description="theta' = theta - h g / sqrt(g^2 + eps)")


def muon(shape: str = "diagonal") -> Update:
    """Muon with Nesterov momentum and a closed-form (eps-smoothed) polar factor."""
    shape = params.choice("shape", shape, ("diagonal", "row"))

    def step(theta, B, grad, j):
        g = grad(theta, j)
        B = [mu * b + gi for b, gi in zip(B, g)]
        U = [gi + mu * b for gi, b in zip(g, B)]
        if shape == "diagonal":
            O = [u / sp.sqrt(u**2 + eps) for u in U]
        else:
            norm = sp.sqrt(sum(u**2 for u in U) + eps)
            O = [u / norm for u in U]
        return [t - h * o for t, o in zip(theta, O)], B

    return Update(
        f"muon_{shape}",
        step,
        lambda d: d,
        symbols={"mu": mu, "eps": eps},
        description=f"B' = mu B + g, theta' = theta - h polar(g + mu B') ({shape} weight, closed-form polar factor)",
    )


def coupled_l2(update: Update) -> Update:
    """``update`` on L + (lambda/2)|theta|^2: the gradient becomes g + lambda theta."""

    def step(theta, state, grad, j):
        return update.step(theta, state, lambda p, i: [g + lam * x for g, x in zip(grad(p, i), p)], j)

    return Update(
        update.name + "+l2",
        step,
        update.state_size,
        update.period,
        update.reshuffle,
        {**update.symbols, "lambda": lam},
        update.description + " with g -> g + lambda theta",
    )


UPDATES = {
    "gd": gd,
    "sgd_rr": sgd_rr,
    "heavy_ball": heavy_ball,
    "nesterov": nesterov,
    "rmsprop": rmsprop,
    "adam": adam,
    "adamw": adamw,
    "sign": sign_descent,
    "muon": muon,
}

# optimiser names of implicitbias.theory.clocks.OPTIMIZERS -> update names
ALIASES = {"sgd": "gd", "sgd_momentum": "heavy_ball"}  # optimiser names of theory.clocks


def builtin(name: str, *, l2: bool = False, minibatches: int = 1) -> Update:
    """The built-in update ``name`` (an ``UPDATES`` key or an optimiser name such as ``sgd``).

    ``sgd`` with ``minibatches`` > 1 is SGD with random reshuffling; ``l2`` adds coupled decay.
    """
    params.choice("optimizer", name, list(UPDATES) + list(ALIASES))
    l2 = params.boolean("l2", l2)
    name = ALIASES.get(name, name)
    minibatches = params.integer("minibatches", minibatches, minimum=1, maximum=4)
    if minibatches > 1 and name not in ("gd", "sgd_rr"):
        raise params.ParameterError(
            f"minibatches > 1 (random reshuffling) applies to sgd only, got optimizer {name} with minibatches {minibatches}"
        )
    upd = sgd_rr(minibatches) if name in ("gd", "sgd_rr") and minibatches > 1 else UPDATES[name]()
    return coupled_l2(upd) if l2 else upd
