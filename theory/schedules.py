"""Learning-rate schedules as pure functions of the 0-based step index k.

``schedule(name, lr, total_steps, **kw)`` returns ``eta: int -> float`` defined for
0 <= k < total_steps (T = total_steps, eta_0 = lr the peak rate):

- ``constant``:  eta_k = lr.
- ``step``:      eta_k = lr * gamma^(number of milestones m with k >= m T); keywords
                 ``milestones`` (fractions of training, default (0.5, 0.75)), ``gamma`` (0.1).
- ``cosine``:    eta_k = eta_min + (lr - eta_min) (1 + cos(pi k / T)) / 2 (torch's
                 CosineAnnealingLR with T_max = T); keyword ``eta_min`` (default 0).
- ``warmup``:    linear warm-up eta_k = lr (k + 1) / W for k < W (W = round(warmup T), keyword
                 ``warmup`` the fraction, default 0.05), then ``after`` = ``constant`` (lr) or
                 ``cosine`` (cosine from lr to ``eta_min`` over the remaining T - W steps).
- ``onecycle``:  torch's OneCycleLR (cosine annealing, three_phase=False): from
                 lr / div_factor up to lr over the first pct_start T - 1 steps, then down to
                 lr / (div_factor final_div_factor) at step T - 1; keywords ``pct_start`` (0.3),
                 ``div_factor`` (25), ``final_div_factor`` (1e4).
- a user callable ``f(k) -> float`` in place of the name: used as it is (eta_k = f(k)); ``lr``
  is then ignored; each value is checked finite and >= 0 when it is evaluated.

Sources: the torch.optim.lr_scheduler definitions (tests compare against them step by step).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from implicitbias.theory import params

__all__ = ["schedule", "SCHEDULES"]

SCHEDULES = ("constant", "step", "cosine", "warmup", "onecycle")

_KEYWORDS = {
    "constant": set(),
    "step": {"milestones", "gamma"},
    "cosine": {"eta_min"},
    "warmup": {"warmup", "after", "eta_min"},
    "onecycle": {"pct_start", "div_factor", "final_div_factor"},
}


def _cosine(start: float, end: float, frac: float) -> float:
    return end + (start - end) * (1.0 + math.cos(math.pi * frac)) / 2.0


def schedule(name, lr: float = 0.1, total_steps: int = 1, **kw) -> Callable[[int], float]:
    """The schedule ``name`` (one of ``SCHEDULES``, or a callable) as a function of k.

    Bad input (unknown name or keyword, lr <= 0, total_steps < 1, fractions outside [0, 1])
    raises ``ParameterError``; so does evaluating at k outside [0, total_steps).
    """
    total = params.integer("total_steps", total_steps, minimum=1, maximum=10**9)
    if callable(name):
        user = name

        def eta_user(k: int) -> float:
            k = params.integer("k", k, minimum=0, maximum=total - 1)
            return params.real("lr_schedule(k)", user(k), minimum=0.0)

        return eta_user
    params.choice("schedule", name, SCHEDULES)
    lr = params.real("lr", lr, minimum=0.0, open_minimum=True)
    unknown = set(kw) - _KEYWORDS[name]
    if unknown:
        allowed = ", ".join(sorted(_KEYWORDS[name])) or "none"
        raise params.ParameterError(
            f"schedule keyword must be one of ({allowed}) for {name}; got {sorted(unknown)[0]!r}"
        )
    eta_min = params.real("eta_min", kw.get("eta_min", 0.0), minimum=0.0, maximum=lr)

    if name == "constant":
        f = lambda k: lr
    elif name == "step":
        gamma = params.real("gamma", kw.get("gamma", 0.1), minimum=0.0, maximum=1.0, open_minimum=True)
        milestones = [params.real("milestones", m, minimum=0.0, maximum=1.0) for m in kw.get("milestones", (0.5, 0.75))]
        f = lambda k: lr * gamma ** sum(k >= m * total for m in milestones)
    elif name == "cosine":
        f = lambda k: _cosine(lr, eta_min, k / total)
    elif name == "warmup":
        frac = params.real("warmup", kw.get("warmup", 0.05), minimum=0.0, maximum=1.0)
        after = params.choice("after", kw.get("after", "constant"), ("constant", "cosine"))
        W = round(frac * total)

        def f(k):
            if k < W:
                return lr * (k + 1) / W
            if after == "constant":
                return lr
            return _cosine(lr, eta_min, (k - W) / max(total - W, 1))

    else:
        pct = params.real("pct_start", kw.get("pct_start", 0.3), minimum=0.0, maximum=1.0, open_minimum=True)
        div = params.real("div_factor", kw.get("div_factor", 25.0), minimum=1.0)
        final_div = params.real("final_div_factor", kw.get("final_div_factor", 1e4), minimum=1.0)
        start, low = lr / div, lr / (div * final_div)
        up_end = float(pct * total) - 1.0
        down_end = float(total - 1)

        def f(k):
            if k <= up_end:
                return _cosine(start, lr, k / up_end) if up_end > 0 else lr
            return _cosine(lr, low, (k - up_end) / (down_end - up_end))

    def eta(k: int) -> float:
        return float(f(params.integer("k", k, minimum=0, maximum=total - 1)))

    return eta
