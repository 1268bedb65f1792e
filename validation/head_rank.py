"""Spec A, section 5, on real networks: head depth and width against the effective rank of logits.

A ResNet body (default ResNet-20) followed by a deep head of L weight matrices (L = ``head_depth``;
with the body's features the head has N = L + 1 factors, as in the deep UFM), trained with
unregularised cross-entropy on a training set it interpolates.  Along training (every
``geometry_every`` epochs and at the end) the run records, on the training set in eval mode:

- the effective rank of the mean-logit matrix Zbar (K x K, column k = mean logits of class k),
  under every definition of ``implicitbias.numerics.metrics.rank`` (Roy–Vetterli primary);
- the effective rank of the centred class-mean feature matrix at the input of every head layer
  (M_l = [mu_c - mu_G]_c, K x d_l; l = 0 is the body's output);
- NC1-NC4 of the last head layer's input features against the last weight matrix W_L.

Spec A predicts: the rank of Zbar falls as the head deepens (depth's low-rank bias), rises with
width, and lower rank goes with worse test accuracy (the claims ``implicitbias.claims.head_rank_*``
judge it; ``depth_lines`` and ``width_lines`` arrange the summary rows along each axis).

Head initialisation (``head_init``): ``he`` (sigma_w x He normal, as the body), ``small``
(the He draw times ``head_init_scale``: the small-initialisation regime of the deep-UFM
dynamics), or ``aligned`` (a Hadamard-like spectral start: W_l = s R_l R_{l-1}^T with random
orthogonal R_l of the run's seed, so the head's singular vectors are aligned layer to layer and
all its singular values equal s = ``head_init_scale``, the NC direction of the deep-UFM ODEs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from implicitbias.numerics.metrics.nc_metrics import class_mean_rows, nc_metrics
from implicitbias.numerics.metrics.rank import effective_ranks
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.validation.precision import parameter_dtype
from implicitbias.validation.run import (
    Trainer,
    build,
    canonical_config,
    dataset_for,
    resolve_device,
    train,
)

__all__ = [
    "KIND", "HEAD_INITS", "HEAD_DEFAULTS", "canonical_head_config", "init_head_", "head_geometry", "execute", "grid",
    "run_grid", "HeadRankRow", "cell_rows", "depth_lines", "width_lines",
]

KIND = "validation.head_rank"
HEAD_INITS = ("he", "small", "aligned")
HEAD_DEFAULTS = {"head_init": "he", "head_init_scale": 1.0, "geometry_every": 0}
RUN_DEFAULTS = {"arch": "resnet20", "optimizer": "adam", "lr": 1e-3, "weight_decay": 0.0}


def canonical_head_config(config: Mapping) -> dict:
    """The run config (``implicitbias.validation.run``) plus the head keys, checked."""
    own = {k: config.get(k, v) for k, v in HEAD_DEFAULTS.items()}
    base = canonical_config({**RUN_DEFAULTS, **{k: v for k, v in config.items() if k not in HEAD_DEFAULTS}})
    if base["weight_decay"] != 0:
        raise params.ParameterError("weight_decay must be 0 for the head-rank runs (Spec A trains without regularisation)")
    params.choice("head_init", own["head_init"], HEAD_INITS)
    own["head_init_scale"] = params.real("head_init_scale", own["head_init_scale"], minimum=0, open_minimum=True)
    own["geometry_every"] = params.integer("geometry_every", own["geometry_every"], minimum=0)
    return {**base, **own}


@torch.no_grad()
def init_head_(head: torch.nn.Module, kind: str, scale: float, seed: int) -> None:
    """Re-initialise the head's kernels in place (see module docstring for ``kind``)."""
    params.choice("head_init", kind, HEAD_INITS)
    layers = list(head.layers)
    if kind == "small":
        for layer in layers:
            layer.weight.mul_(scale)
    elif kind == "aligned":
        gen = torch.Generator().manual_seed(int(seed))
        dims = [layers[0].in_features] + [layer.out_features for layer in layers]
        # R_l: a random orthogonal basis of R^{d_l} (QR of a Gaussian draw), one per interface.
        bases = [torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))[0] for d in dims]
        for layer, r_in, r_out in zip(layers, bases[:-1], bases[1:]):
            k = min(r_in.shape[0], r_out.shape[0])
            w = scale * r_out[:, :k] @ r_in[:, :k].T
            layer.weight.copy_(w.to(layer.weight))


@torch.no_grad()
def head_geometry(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 2048) -> dict:
    """Effective ranks of Zbar and of the class-mean features at every head layer; NC1-NC4; accuracy."""
    model.eval()
    chunks = [model.head.features(model.body(x[i : i + batch])) for i in range(0, len(y), batch)]
    feats = [torch.cat(parts).double().cpu().numpy() for parts in zip(*chunks)]
    labels = y.cpu().numpy()
    K = int(labels.max()) + 1
    logits = feats[-1]
    zbar = class_mean_rows(logits, labels, K).T
    layers = []
    for h in feats[:-1]:
        means = class_mean_rows(h, labels, K)
        layers.append(effective_ranks(means - means.mean(axis=0)))
    w_last = model.head.layers[-1].weight.double().cpu().numpy() * model.head.scale
    return {
        "logit_rank": effective_ranks(zbar),
        "layer_ranks": layers,
        "nc": nc_metrics(feats[-2], labels, w_last).as_dict(),
        "train_acc": float(np.mean(logits.argmax(axis=1) == labels)),
    }


def execute(config: Mapping, *, options: Mapping | None = None) -> dict:
    """Train one head-rank run and return the forgetting-run record plus ``geometry`` rows."""
    c = canonical_head_config(config)
    options = dict(options or {})
    with torch_threads(options.get("threads")):
        return _train_and_measure(c, resolve_device(options.get("device")))


def _train_and_measure(c: dict, device: torch.device) -> dict:
    data = dataset_for(c)
    dtype = parameter_dtype(c["precision"])
    model = build(c, data, device, dtype)
    init_head_(model.head, c["head_init"], c["head_init_scale"], c["seed"])
    x_train, y_train = data.x_train.to(device, dtype), data.y_train.to(device)
    rows: list[dict] = []

    def on_epoch(g: int, epoch: int, row: dict) -> None:
        every = c["geometry_every"]
        if epoch == c["epochs"] or (every and epoch % every == 0):
            rows.append({"epoch": epoch, **head_geometry(model, x_train, y_train)})

    (record,) = train([c], Trainer(model), data, device, on_epoch=on_epoch)
    record["geometry"] = rows
    final = rows[-1] if rows else head_geometry(model, x_train, y_train)
    record["summary"].update(
        logit_rank=final["logit_rank"]["roy_vetterli"],
        logit_ranks=final["logit_rank"],
        nc=final["nc"],
        final_test_acc=record["history"][-1]["test_acc"],
        final_train_acc=final["train_acc"],
    )
    return record


def grid(base: Mapping, *, depths, widths, seeds, head_inits=("he",)) -> list[dict]:
    """Configs of a head depth x width x seeds (x head init) sweep around ``base``, all checked.

    A depth-1 head has no hidden layer, so its width is dropped (one run per seed, not per width).
    """
    configs = {}
    for init in head_inits:
        for L in depths:
            for w in widths:
                for s in seeds:
                    c = canonical_head_config(
                        {**base, "head_depth": L, "head_width": w if L > 1 else None, "seed": s, "head_init": init}
                    )
                    configs[repr(sorted(c.items()))] = c
    if not configs:
        raise params.ParameterError("depths, widths and seeds must each hold at least one value")
    return list(configs.values())


def run_grid(configs: list[dict], store, *, executor=None, progress: bool = True) -> list[dict]:
    """Records of every config (cached in ``store``, resumable, through ``executor``)."""
    return store.map(KIND, execute, configs, executor=executor, progress=progress, desc="head rank")


@dataclass(frozen=True)
class HeadRankRow:
    """One cell (head init, head depth L, hidden width; None for L = 1) of a grid over its finished
    seeds: the Roy-Vetterli effective rank of Zbar (mean, standard deviation), the mean test
    accuracy, the smallest final training accuracy and the mean NC1 of the last head layer."""

    head_init: str
    depth: int
    width: int | None
    seeds: int
    rank_mean: float
    rank_std: float
    test_acc_mean: float
    train_acc_min: float
    nc1_mean: float


def cell_rows(configs: list[dict], records: list[dict]) -> list[HeadRankRow]:
    """One row per cell (head_init, depth, width): mean and spread over seeds of rank and accuracy
    (``validation.analysis.summarise`` is the one ``summarise``: a Spec B group's numbers)."""
    cells: dict[tuple, list[dict]] = {}
    for c, r in zip(configs, records):
        if r["status"] == "done":
            cells.setdefault((c["head_init"], c["head_depth"], c["head_width"]), []).append(r["summary"])
    rows = []
    for (init, L, w), runs in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        rank = np.array([s["logit_rank"] for s in runs])
        acc = np.array([s["final_test_acc"] for s in runs])
        rows.append(HeadRankRow(
            head_init=init, depth=L, width=w, seeds=len(runs), rank_mean=float(rank.mean()), rank_std=float(rank.std()),
            test_acc_mean=float(acc.mean()), train_acc_min=float(min(s["final_train_acc"] for s in runs)),
            nc1_mean=float(np.mean([s["nc"]["nc1"] for s in runs])),
        ))
    return rows


def depth_lines(rows: Sequence[HeadRankRow]) -> dict[tuple, list[tuple[int, float]]]:
    """{(head_init, width): [(depth, rank_mean), ...] by depth}: the rank along the depth axis.

    The depth-1 head has no hidden width, so it starts the line of every width.
    """
    widths = sorted({r.width for r in rows if r.width is not None})
    lines = {(i, w): sorted((r.depth, r.rank_mean) for r in rows if r.head_init == i and r.width in (w, None))
             for i in sorted({r.head_init for r in rows}) for w in widths}
    return {k: v for k, v in lines.items() if len(v) >= 2}


def width_lines(rows: Sequence[HeadRankRow]) -> dict[tuple, list[tuple[int, float]]]:
    """{(head_init, depth >= 2): [(width, rank_mean), ...] by width}: the rank along the width axis."""
    lines = {(i, L): sorted((r.width, r.rank_mean) for r in rows if (r.head_init, r.depth) == (i, L))
             for i in sorted({r.head_init for r in rows}) for L in sorted({r.depth for r in rows if r.depth > 1})}
    return {k: v for k, v in lines.items() if len(v) >= 2}
