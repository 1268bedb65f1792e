"""The deep unconstrained-feature model (deep UFM) in torch float64: inits, loss, GD and flow.

Model (Spec A, section 1).  K classes, n samples per class, width d, depth L = number of weight
matrices; the free features H are one more factor, so there are N = L + 1 factors:

    factors = [H, W_1, ..., W_L],   H in R^{d x Kn},  W_l in R^{d x d} (l < L),  W_L in R^{K x d}
    logits  Z = W_L W_{L-1} ... W_1 H   in R^{K x Kn},  columns class by class (label j // n)
    loss    l(theta) = (1 / Kn) sum_j [ logsumexp_c Z_{cj} - Z_{y_j j} ]   (no regularisation)

Initialisations
- ``gaussian_init``: every entry N(0, scale^2 / fan_in), fan_in = d for every factor (W_l acts on
  R^d; H is given the same variance so each feature column has expected squared norm scale^2).
- ``hadamard_init`` (Spec A, section 4; K a power of two): with Q = H_K / sqrt(K) the Sylvester
  Hadamard basis and R_0, ..., R_{L-1} Haar-random orthogonal d x d matrices,

      H = R_0 S_0 (Q kron 1_n / sqrt(n))^T,  W_l = R_l S_l R_{l-1}^T,  W_L = Q S_L R_{L-1}^T,

  S_l diagonal with s_{l,j} on its first K diagonal entries (zeros after).  Then
  Z = Q diag(prod_l s_{l,j}) (Q kron 1_n / sqrt(n))^T and the gradient flow keeps every
  singular vector (``implicitbias.theory.hadamard``).

Dynamics
- ``gradient_descent``: theta <- theta - lr grad l (optionally normalised: lr / l(theta), the
  normalised GD of Nacson et al. 2019 for exponentially tailed losses), recording logits.
- ``gradient_flow``: d theta / dt = -grad l integrated by ``scipy.integrate.solve_ivp`` on the
  flattened parameters, gradients by torch autograd, optional events on the logits.

Gradients are torch autograd in float64 throughout.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.integrate import solve_ivp
from scipy.linalg import hadamard
from scipy.stats import ortho_group

from implicitbias.numerics.maxmargin.margin import min_margin
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params

__all__ = [
    "Trajectory",
    "check_shape",
    "cross_entropy",
    "gaussian_init",
    "gradient",
    "gradient_descent",
    "gradient_flow",
    "gradient_norm",
    "hadamard_bases",
    "hadamard_init",
    "logit_velocity",
    "logits",
    "loss",
    "margin_event",
]

DTYPE = torch.float64


@dataclass
class Trajectory:
    """A recorded run: ``times`` (T,), ``logits`` (T, K, Kn), ``loss`` (T,), final ``factors``.

    For gradient descent the time of step k is k * lr (the gradient-flow clock).  ``success``
    and ``message`` come from the integrator (for gradient descent: the stop reason, "" when
    all steps ran);
    ``event_times`` lists, per event, the times it fired.
    """

    times: np.ndarray
    logits: np.ndarray
    loss: np.ndarray
    factors: list[torch.Tensor]
    success: bool = True
    message: str = ""
    event_times: list[np.ndarray] | None = None


def check_shape(K: int, L: int, d: int, n: int) -> tuple[int, int, int, int]:
    """Validate the model sizes (K >= 2 classes, L >= 1 weight matrices, width d >= 1, n >= 1).

    L counts weight matrices; N = L + 1 factors including the features.
    """
    K = params.integer("K", K, minimum=2, maximum=4096)
    L = params.integer("L", L, minimum=1, maximum=64)
    d = params.integer("d", d, minimum=1, maximum=8192)
    n = params.integer("n", n, minimum=1, maximum=100_000)
    if d * max(d, K * n) * (L + 1) > 2**28:
        raise params.ParameterError(f"d = {d}, K n = {K * n}, L = {L}: the factors would exceed 2 GiB")
    return K, L, d, n


def _as_factors(factors: Sequence) -> list[torch.Tensor]:
    out = [torch.as_tensor(f, dtype=DTYPE) for f in factors]
    if len(out) < 2:
        raise params.ParameterError(f"factors must be [H, W_1, ..., W_L] with L >= 1, got {len(out)} factor(s)")
    for i, f in enumerate(out):
        if not torch.isfinite(f).all():
            raise params.ParameterError(f"factors[{i}] must be finite, got non-finite entries")
    for i in range(1, len(out)):
        if out[i].shape[1] != out[i - 1].shape[0]:
            raise params.ParameterError(
                f"factors[{i}] has {out[i].shape[1]} columns but factors[{i - 1}] has {out[i - 1].shape[0]} rows"
            )
    return out


def gaussian_init(K: int, L: int, d: int, n: int = 1, scale: float = 1.0, seed=0) -> list[torch.Tensor]:
    """[H, W_1, ..., W_L] with i.i.d. N(0, scale^2 / d) entries (fan_in = d for every factor).

    L counts weight matrices (N = L + 1 factors).  ``seed`` is an int or a numpy Generator.
    """
    K, L, d, n = check_shape(K, L, d, n)
    scale = params.real("scale", scale, minimum=0, open_minimum=True)
    rng = np.random.default_rng(seed)
    shapes = [(d, K * n)] + [(d, d)] * (L - 1) + [(K, d)]
    return [torch.from_numpy(rng.standard_normal(s) * (scale / np.sqrt(d))) for s in shapes]


def hadamard_bases(K: int, L: int, d: int, seed=0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Q = H_K / sqrt(K) and the Haar-random orthogonal R_0, ..., R_{L-1} (d x d) of ``hadamard_init``.

    L counts weight matrices (N = L + 1 factors).  R_l is the identity when d == 1.
    """
    K = params.power_of_two("K", K, minimum=2, maximum=4096)
    L = params.integer("L", L, minimum=1, maximum=64)
    d = params.integer("d", d, minimum=K, maximum=8192)
    rng = np.random.default_rng(seed)
    Q = hadamard(K) / np.sqrt(K)
    R = [ortho_group.rvs(d, random_state=rng) for _ in range(L)]
    return Q, R


def hadamard_init(singular_values, d: int | None = None, n: int = 1, seed=0) -> list[torch.Tensor]:
    """Spectral (Hadamard) initialisation [H, W_1, ..., W_L] with per-layer singular values.

    ``singular_values`` has shape (L + 1, K): row l holds s_{l,j}, j = 0..K-1 (row 0 for H,
    row L for W_L); L counts weight matrices, N = L + 1 factors.  K must be a power of two,
    d >= K (default d = K).  The logit singular values are prod_l s_{l,j}; column j of Q is
    the Walsh character chi_j.  Formula in the module docstring.
    """
    s = np.asarray(singular_values, dtype=float)
    if s.ndim != 2 or s.shape[0] < 2:
        raise params.ParameterError(f"singular_values must have shape (L + 1, K) with L >= 1, got {s.shape}")
    if not np.isfinite(s).all():
        raise params.ParameterError("singular_values must be finite")
    L, K = s.shape[0] - 1, s.shape[1]
    d = K if d is None else d
    n = params.integer("n", n, minimum=1, maximum=100_000)
    check_shape(K, L, params.integer("d", d, minimum=K), n)
    Q, R = hadamard_bases(K, L, d, seed)

    def diag(row, rows, cols):
        S = np.zeros((rows, cols))
        S[np.arange(K), np.arange(K)] = row
        return S

    E = np.kron(Q, np.ones((n, 1)) / np.sqrt(n))  # (Kn x K): Q kron 1_n / sqrt(n)
    factors = [R[0] @ diag(s[0], d, K) @ E.T]
    factors += [R[l] @ diag(s[l], d, d) @ R[l - 1].T for l in range(1, L)]
    factors.append(Q @ diag(s[L], K, d) @ R[L - 1].T)
    return [torch.from_numpy(f) for f in factors]


def logits(factors: Sequence) -> torch.Tensor:
    """Z = W_L ... W_1 H for factors [H, W_1, ..., W_L]."""
    Z = factors[0]
    for W in factors[1:]:
        Z = W @ Z
    return Z


def _labels(Z: torch.Tensor) -> torch.Tensor:
    K, m = Z.shape[-2:]
    if m % K:
        raise params.ParameterError(f"the logits have {m} columns, not a multiple of K = {K}")
    return torch.arange(K).repeat_interleave(m // K)


def cross_entropy(Z: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (1/Kn) sum_j [logsumexp_c Z_cj - Z_{y_j j}] of logits Z, labels class by class.

    Evaluated per column as log(1 + sum_{c != y} e^{Z_cj - Z_yj}) = softplus(s_j) with
    s_j = logsumexp_{c != y}(Z_cj - Z_yj) (``torch.logaddexp(0, s)``), which keeps full relative
    precision down to losses of ~1e-300; the direct difference logsumexp - Z_y rounds to 0 once
    the loss falls below ~1e-16 |Z| (margins ~35).  ``Z`` is K x Kn, or a batch [..., K, Kn] of
    such (one loss per leading index: ``gd_census`` runs many seeds at once).
    """
    y, cols = _labels(Z), torch.arange(Z.shape[-1])
    diff = Z - Z[..., y, cols][..., None, :]
    own = torch.zeros(Z.shape[-2:], dtype=torch.bool)
    own[y, cols] = True
    s = torch.logsumexp(torch.where(own, -torch.inf, diff), dim=-2)
    return torch.logaddexp(torch.zeros_like(s), s).mean(dim=-1)


def gradient_norm(grads: Sequence[torch.Tensor], batch_dims: int = 0) -> torch.Tensor:
    """||(g_0, ..., g_L)||, the Euclidean norm over all factors' gradients, per index of their first
    ``batch_dims`` dimensions (a tensor of that shape; 0-d by default).

    Underflow-safe: computed as top * sqrt(sum (g / top)^2) with top the largest |entry|, since
    the squares of gradients of ~1e-200 (losses near 1e-300) underflow; 0 where every entry is 0.
    """
    flat = [g.reshape(*g.shape[:batch_dims], -1) for g in grads]
    top = torch.stack([f.abs().amax(dim=-1) for f in flat]).amax(dim=0)
    safe = torch.where(top > 0, top, torch.ones_like(top))
    total = sum(((f / safe[..., None]) ** 2).sum(dim=-1) for f in flat)
    return torch.where(top > 0, safe * torch.sqrt(total), torch.zeros_like(top))


def loss(factors: Sequence) -> torch.Tensor:
    """Mean cross-entropy of the logits Z = W_L ... W_1 H (``cross_entropy(logits(factors))``)."""
    return cross_entropy(logits(factors))


def gradient(factors: Sequence) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """(loss, [dl/dH, dl/dW_1, ..., dl/dW_L]) by torch autograd in float64."""
    leaves = [torch.as_tensor(f, dtype=DTYPE).detach().requires_grad_(True) for f in factors]
    value = loss(leaves)
    return value.detach(), list(torch.autograd.grad(value, leaves))


def logit_velocity(factors: Sequence) -> torch.Tensor:
    """dZ/dt under gradient flow d theta/dt = -grad l: the Jacobian-vector product of Z(theta)."""
    factors = _as_factors(factors)
    _, grads = gradient(factors)
    _, dZ = torch.func.jvp(lambda *f: logits(f), tuple(factors), tuple(-g for g in grads))
    return dZ


def gradient_descent(
    factors: Sequence,
    lr: float,
    steps: int,
    *,
    record_every: int | None = None,
    normalized: bool | str = False,
    loss_target: float | None = None,
) -> Trajectory:
    """Plain or normalised gradient descent on the deep UFM, no regularisation.

    theta_{k+1} = theta_k - eta_k grad l(theta_k) with

        eta_k = lr                      (normalized=False)
        eta_k = lr / l(theta_k)         (normalized=True or "loss": the normalised GD of Nacson
                                         et al. 2019 for exponentially tailed losses)
        eta_k = lr / ||grad l(theta_k)|| (normalized="gradient": every step has length lr, so a
                                         small initialisation leaves the saddle at the origin
                                         as fast as a large one moves; ||.|| over all factors).

    Logits and loss are recorded every ``record_every`` steps (default: about 200 records) and
    at the last step; time of step k is sum of the step sizes.  A run stops early, recording that
    step, when its loss becomes non-finite (``success=False``), when the divisor of a normalised
    step (loss or gradient norm) underflows to 0 (``success=False``), or when the loss falls below
    ``loss_target`` (``success=True``); ``message`` says which.
    """
    lr = params.real("lr", lr, minimum=0, open_minimum=True)
    steps = params.integer("steps", steps, minimum=0, maximum=10**8)
    every = record_every or max(1, steps // 200)
    every = params.integer("record_every", every, minimum=1)
    mode = {False: "none", True: "loss"}[normalized] if isinstance(normalized, bool) else normalized
    mode = params.choice("normalized", mode, ["none", "loss", "gradient"])
    target = -math.inf if loss_target is None else params.real("loss_target", loss_target, minimum=0)
    theta = [f.clone().requires_grad_(True) for f in _as_factors(factors)]
    times, Zs, losses = [], [], []
    with torch_threads(1):
        success, message = _descend(theta, lr, steps, every, mode, target, times, Zs, losses)
    return Trajectory(np.array(times), np.array(Zs), np.array(losses), [p.detach() for p in theta], success, message)


def _step_divisor(mode: str, value: torch.Tensor, grads: Sequence[torch.Tensor]) -> float:
    """eta = lr / divisor: 1, the loss, or the gradient norm over all factors."""
    if mode == "loss":
        return value.item()
    if mode == "gradient":
        return float(gradient_norm(grads))
    return 1.0


def _descend(theta, lr, steps, every, mode, target, times, Zs, losses) -> tuple[bool, str]:
    """The GD loop; returns (success, message) of ``gradient_descent``."""
    t = 0.0
    for k in range(steps + 1):
        Z = logits(theta)
        value = cross_entropy(Z)
        stop = None
        if not math.isfinite(value.item()):
            stop = False, f"diverged (non-finite loss) at step {k}"
        elif value.item() < target:
            stop = True, f"loss {value.item():.3g} below loss_target at step {k}"
        elif k < steps:
            grads = torch.autograd.grad(value, theta)
            divisor = _step_divisor(mode, value, grads)
            if divisor == 0:
                stop = (False, f"the {mode} normaliser underflowed to 0 at step {k} (loss {value.item():.3g})")
        if k % every == 0 or k == steps or stop:
            times.append(t)
            Zs.append(Z.detach().numpy().copy())
            losses.append(value.item())
        if stop:
            return stop
        if k == steps:
            return True, ""
        eta = lr / divisor
        with torch.no_grad():
            for p, g in zip(theta, grads):
                p.sub_(eta * g)
        t += eta


def margin_event(target: float) -> Callable[[np.ndarray], float]:
    """Event for ``gradient_flow``: fires (and stops) when the smallest margin of Z reaches ``target``."""
    target = params.real("target", target)

    def event(Z: np.ndarray) -> float:
        return min_margin(Z, np.arange(Z.shape[1]) // (Z.shape[1] // Z.shape[0])) - target

    event.terminal = True
    event.direction = 1
    return event


def gradient_flow(
    factors: Sequence,
    t_end: float,
    *,
    t_eval: Sequence[float] | None = None,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-12,
    events: Sequence[Callable[[np.ndarray], float]] = (),
) -> Trajectory:
    """Full-matrix gradient flow d theta/dt = -grad l(theta), solve_ivp on the flattened factors.

    ``events`` are functions of the logit matrix Z (numpy, K x Kn) with the solve_ivp
    ``terminal``/``direction`` attributes (e.g. ``margin_event(5.0)``).  The result records Z
    and the loss at ``t_eval`` (default: the integrator's own steps).
    """
    t_end = params.real("t_end", t_end, minimum=0, open_minimum=True)
    method = params.choice("method", method, ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
    theta0 = _as_factors(factors)
    shapes = [f.shape for f in theta0]
    sizes = [f.numel() for f in theta0]

    def unflatten(x: np.ndarray) -> list[torch.Tensor]:
        return [c.reshape(s) for c, s in zip(torch.from_numpy(np.ascontiguousarray(x)).split(sizes), shapes)]

    def rhs(_t, x):
        _, grads = gradient(unflatten(x))
        return -torch.cat([g.reshape(-1) for g in grads]).numpy()

    def wrap(ev):
        def f(_t, x):
            return ev(logits(unflatten(x)).numpy())

        f.terminal = getattr(ev, "terminal", False)
        f.direction = getattr(ev, "direction", 0)
        return f

    x0 = torch.cat([f.reshape(-1) for f in theta0]).numpy()
    with torch_threads(1):
        sol = solve_ivp(
            rhs, (0.0, t_end), x0, method=method, t_eval=t_eval, rtol=rtol, atol=atol, events=[wrap(e) for e in events]
        )
    with torch.no_grad():
        Zs = [logits(unflatten(x)) for x in sol.y.T]
        losses = [loss(unflatten(x)).item() for x in sol.y.T]
    return Trajectory(
        times=sol.t,
        logits=np.array([Z.numpy() for Z in Zs]),
        loss=np.array(losses),
        factors=unflatten(sol.y[:, -1].copy()),
        success=bool(sol.success),
        message=str(sol.message),
        event_times=list(sol.t_events) if events else None,
    )
