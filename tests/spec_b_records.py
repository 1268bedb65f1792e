"""Synthetic run records for Spec B's verdict tests: every number is set by the test, not trained.

A record has the layout ``validation.run.train`` writes: epoch 0 at initialisation, then one row
per epoch with train/val/test accuracy, validation loss, kernel norm (total, and per kernel: the
MLP's two hidden kernels and its head, a third of the total's square each) and cumulative clocks.  The
validation loss is lowest at ``selected_epoch``, where the test accuracy is ``selected``; the
last row has test accuracy ``final``.  Training accuracy reaches ``train_acc`` at epoch ``tau``
(``tau=None``: it stays at ``train_acc`` < 99.5% throughout).
"""

from __future__ import annotations

from implicitbias.theory.clocks import forgetting_clocks
from implicitbias.validation.run import canonical_config

SIGMAS = (0.25, 0.5, 1.0, 2.5)
KERNELS = ("body.1", "body.4", "head.layers.0")  # the kernels of validation.models.BatchNormMLP and its head
SEEDS = (0, 1, 2, 3)
BASE = {"dataset": "synthetic", "data_size": 300, "arch": "mlp", "width": 0.25, "optimizer": "sgd", "lr": 0.1,
        "batch_size": 64, "epochs": 6}


def record(config, *, selected, final=None, train_acc=1.0, tau=2, norm0=None, norm1=None, diverged=None,
           selected_epoch=3, n_train=1000, middle=0.3, norm_by=1):
    """One run record (see the module docstring); accuracies as fractions, ``diverged=(epoch, reason)``;
    ``middle``: the test accuracy of every other epoch; the kernel norm goes linearly from ``norm0``
    to ``norm1`` over the first ``norm_by`` epochs and stays there."""
    c = canonical_config(config)
    E = c["epochs"]
    final = selected if final is None else final
    norm0 = 10.0 * c["sigma_w"] if norm0 is None else norm0
    norm1 = norm0 if norm1 is None else norm1
    clocks = forgetting_clocks(c["optimizer"], c["lr"], c["batch_size"], n_train, E, c["weight_decay"])
    history = []
    for e in range(E + 1):
        reached = tau is not None and e >= tau
        history.append({
            "epoch": e, "train_loss": 0.1, "train_acc": 0.1 if e == 0 else (max(train_acc, 0.995) if reached else
                                                                            min(train_acc, 0.99)),
            "val_loss": 1.0 if e == selected_epoch else 2.0 + 0.01 * e, "val_acc": 0.5,
            "test_acc": selected if e == selected_epoch else (final if e == E else middle),
            "kernel_norm": norm0 + (norm1 - norm0) * min(e / norm_by, 1),
            "kernel_norms": dict.fromkeys(KERNELS, (norm0 + (norm1 - norm0) * min(e / norm_by, 1)) / 3**0.5),
            "clocks": {k: (v[e - 1] if e else 0.0) for k, v in clocks.cumulative.items()},
        })
    summary = {"governing_clock": clocks.governing, "clocks": clocks.total, "steps_per_epoch": clocks.steps_per_epoch,
               "diverged_epoch": None, "diverged_reason": None}
    status = "done"
    if diverged is not None:
        epoch, reason = diverged
        history = history[: epoch + 1]
        history[-1]["train_loss"] = None
        summary.update(diverged_epoch=epoch, diverged_reason=reason)
        status = "diverged"
    return c, {"status": status, "summary": summary, "history": history}


def group(setting=None, *, accuracy, sigmas=SIGMAS, seeds=SEEDS, **kw):
    """The runs of one setting: ``accuracy(sigma, seed)`` -> selected accuracy (or (selected, final));
    other keyword arguments go to :func:`record` (callables of (sigma, seed) are evaluated)."""
    runs = []
    for s in sigmas:
        for k in seeds:
            acc = accuracy(s, k)
            selected, final = acc if isinstance(acc, tuple) else (acc, acc)
            extra = {key: (v(s, k) if callable(v) else v) for key, v in kw.items()}
            runs.append(record({**BASE, **(setting or {}), "sigma_w": s, "seed": k}, selected=selected, final=final, **extra))
    return runs


def remembering(s, k):
    """Selected accuracy falling by 20 points from the smallest to the largest sigma_w (+-0.5 pt by seed)."""
    return 0.6 - 0.08 * (s - 0.25) + 0.005 * ((k % 3) - 1)


def forgetting(s, k):
    """Accuracy independent of sigma_w up to +-1 point of noise."""
    return 0.6 + 0.01 * (((k + 3 * int(4 * s)) % 3) - 1)


SEEDS8 = tuple(range(8))
_Z = __import__("numpy").random.default_rng(20261201).standard_normal((8, 64, 64))  # fixed residual noise


def noisy(memory: float, noise: float = 0.005, draw: int = 0, sigmas=SIGMAS):
    """accuracy(sigma, seed) = 0.6 + memory x c(sigma) + noise x z: ``c`` a linear contrast over the
    sigma_w grid with sum 0 and sum c^2 / (k - 1) = 1 (so the memory variance is memory^2 exactly,
    in accuracy fractions), z a fixed standard-normal table (``draw`` picks another)."""
    k = len(sigmas)
    raw = [i - (k - 1) / 2 for i in range(k)]
    scale = (sum(r * r for r in raw) / (k - 1)) ** 0.5
    contrast = {s: r / scale for s, r in zip(sigmas, raw)}
    index = {s: i for i, s in enumerate(sigmas)}
    return lambda s, seed: 0.6 + memory * contrast[s] + noise * float(_Z[draw, index[s], seed])


def judged(claim, evidence, sims=0):
    """``claim.judge(evidence)`` with ``sims`` simulated experiments for its operating characteristics
    (0: judged by the intervals alone, no underpowered gate)."""
    old = claim.oc_sims
    claim.oc_sims = sims
    try:
        return claim.judge(evidence)
    finally:
        claim.oc_sims = old


def moved(claim, evidence, name, values):
    """The verdicts of ``claim`` on ``evidence`` with its threshold ``name`` set to each of ``values``."""
    from implicitbias.claims import Threshold

    saved = claim.thresholds
    try:
        out = []
        for v in values:
            claim.thresholds = {**saved, name: Threshold(v, "moved for the test")}
            out.append(judged(claim, evidence).verdict)
        return out
    finally:
        claim.thresholds = saved


# The smallest sweep that trains: two runs (sigma_w 0.5 and 1) of one epoch on synthetic data, one thread.
TINY = {
    "name": "api-tiny",
    "base": {
        "dataset": "synthetic",
        "data_size": 300,
        "arch": "mlp",
        "width": 0.25,
        "epochs": 1,
        "batch_size": 64,
        "sigma_w": [0.5, 1.0],
        "seed": 0,
        "optimizer": "sgd",
        "lr": 0.05,
    },
    "options": {"threads": 1},
}
