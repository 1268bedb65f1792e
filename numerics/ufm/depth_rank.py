"""Effective rank of the mean-logit matrix after gradient descent vs depth and width (Spec A, s. 5).

Deep UFM (``deep_ufm``), K classes, n per class, width d, depth L = number of weight matrices
(N = L + 1 factors), Gaussian init N(0, scale^2/d), plain gradient descent on the unregularised mean
cross-entropy.  After ``steps`` steps the mean-logit matrix Zbar (K x K, column k = mean logits of
class k) is summarised by its Roy-Vetterli effective rank exp(H(sigma / sum sigma)) (primary),
the other definitions of ``implicitbias.numerics.metrics.rank``, its margin, the KL divergence to NC and
the NC1-NC4 metrics of the last hidden features W_{L-1} ... W_1 H with classifier W_L
(or ``diverged: True`` when the step size was too large for that depth and seed).
Spec A reports: the rank falls with depth and rises with width.
"""

from __future__ import annotations

from implicitbias.numerics.ufm.deep_ufm import gaussian_init, gradient_descent, logits
from implicitbias.numerics.metrics.kl_to_nc import kl_to_nc_of_matrix
from implicitbias.numerics.maxmargin.margin import class_means, labels, min_margin
from implicitbias.numerics.metrics.nc_metrics import nc_metrics
from implicitbias.numerics.metrics.rank import effective_ranks

__all__ = ["trained_rank"]


def trained_rank(config: dict) -> dict:
    """Cell: {"K", "L", "d", "n", "scale", "lr", "steps", "seed"} -> ranks, loss, margin, KL, NC1-NC4.

    L counts weight matrices (N = L + 1 factors).
    """
    factors = gaussian_init(config["K"], config["L"], config["d"], config["n"], config["scale"], config["seed"])
    run = gradient_descent(factors, config["lr"], config["steps"], record_every=config["steps"] or 1)
    if not run.success:
        return {"diverged": True, "message": run.message}
    Zbar = class_means(run.logits[-1], config["n"])
    features = logits(run.factors[:-1]).numpy().T  # (K n) x d: the input of the classifier W_L
    nc = nc_metrics(features, labels(config["K"], config["n"]), run.factors[-1].numpy())
    return {
        **nc.as_dict(),
        "diverged": False,
        **effective_ranks(Zbar),
        "loss": float(run.loss[-1]),
        "margin": min_margin(Zbar),
        "kl_to_nc": kl_to_nc_of_matrix(Zbar),
    }
