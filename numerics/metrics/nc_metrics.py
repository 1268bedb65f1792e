"""Neural-collapse metrics NC1-NC4 (Papyan, Han, Donoho 2020) for features, labels, classifier.

Inputs: features H (n_samples x d), integer labels y in 0..K-1 (every class present), classifier
W (K x d) and optional bias b (K,).  With class means mu_c, global mean mu_G, centred means
M = [mu_c - mu_G]_c (K x d):

    Sigma_W = (1/n_samples) sum_i (h_i - mu_{y_i})(h_i - mu_{y_i})^T,
    Sigma_B = (1/K) sum_c (mu_c - mu_G)(mu_c - mu_G)^T
    NC1 = tr(Sigma_W Sigma_B^+) / K, Sigma_B^+ the rank-(K-1) pseudo-inverse (top K-1 eigenpairs;
          a full pinv inverts numerical noise in the null direction)
    NC2 = || M M^T / ||M M^T||_F - (I - 11^T/K)/sqrt(K-1) ||_F   (distance to the simplex ETF Gram;
          Zhu et al. 2021), with the Papyan parts equinorm = std/mean of ||mu_c - mu_G|| and
          equiangularity = mean_{c != c'} |cos(mu_c - mu_G, mu_c' - mu_G) + 1/(K-1)|
    NC3 = || W^T/||W||_F - M^T/||M||_F ||_F   (self-duality)
    NC4 = fraction of samples with argmax_c (W h + b)_c = argmin_c ||h - mu_c||  (agreement)

Exact simplex ETF with collapsed features and W = M: NC1 = NC2 = NC3 = 0, NC4 = 1.  Regular K-gon
(rank 2, K >= 3, collapsed, W = M): NC1 = NC3 = 0, NC4 = 1 and NC2 = sqrt(2 - 2 sqrt(2/(K-1))).

Conventions against Papyan, Han and Donoho's published analysis code (the PNAS 2020 notebook and
the many repositories that copy it), which ``convention="papyan"`` reproduces:

- NC3: theirs is the *squared* distance ||W^T/||W|| - M^T/||M|| ||_F^2; ours is unsquared (a
  distance between unit-norm matrices, in [0, 2]).
- equinorm: theirs is torch.std / mean, i.e. the *sample* standard deviation (ddof 1) of the K
  norms; ours uses ddof 0 (the spread of the K numbers themselves); the ratio of the two is
  sqrt(K / (K - 1)).
- NC1: both take the top K - 1 eigenpairs of Sigma_B (theirs through scipy.sparse.linalg.svds);
  theirs inverts all of them, ours drops eigenvalues below 1e-12 times the largest, so a between-
  class matrix of rank below K - 1 (e.g. a K-gon, rank 2) does not invert rounding noise.
- global mean: both codes centre on the mean of the class means; the paper's text defines
  mu_G as the mean over all samples.  They differ for unbalanced classes; ``global_mean``
  chooses ("class_means", the default and the code's; "samples", the paper's text).
- NC4: both measure agreement of argmax_c (W h + b) with the nearest class mean; theirs reports
  the mismatch 1 - agreement.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from implicitbias.theory import params
from implicitbias.theory.display import Tabular, field_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CONVENTIONS", "GLOBAL_MEANS", "NCMetrics", "class_mean_rows", "nc_metrics"]

CONVENTIONS = ("package", "papyan")
GLOBAL_MEANS = ("class_means", "samples")
PINV_RTOL = 1e-12  # eigenvalues of Sigma_B below this times the largest are rounding noise (package convention)


@dataclass
class NCMetrics(Tabular):
    r"""Neural-collapse metrics of one layer (Papyan, Han, Donoho 2020), as :func:`nc_metrics` returns them.

    ``to_frame()`` is one row of them; a notebook shows it as a table.

    With class means :math:`\mu_c`, global mean :math:`\mu_G`, centred means
    :math:`M = [\mu_c - \mu_G]_c` and classifier :math:`W`:

    Attributes
    ----------
    nc1 : float
        :math:`\operatorname{tr}(\Sigma_W \Sigma_B^{+}) / K`, within-class variability against the
        between-class spread (0 when every feature sits at its class mean).
    nc2 : float
        :math:`\bigl\| M M^\top / \|M M^\top\|_F - (I - \mathbf{1}\mathbf{1}^\top/K)/\sqrt{K-1} \bigr\|_F`,
        the distance of the means' Gram matrix from the simplex ETF's.
    nc2_equinorm : float
        Standard deviation over mean of the norms :math:`\|\mu_c - \mu_G\|`.
    nc2_equiangularity : float
        Mean over :math:`c \ne c'` of :math:`|\cos(\mu_c - \mu_G, \mu_{c'} - \mu_G) + 1/(K-1)|`.
    nc3 : float
        :math:`\| W^\top/\|W\|_F - M^\top/\|M\|_F \|_F`, self-duality of classifier and means.
    nc4_agreement : float
        The fraction of samples on which the classifier agrees with the nearest-class-mean rule.
    """

    nc1: float
    nc2: float
    nc2_equinorm: float
    nc2_equiangularity: float
    nc3: float
    nc4_agreement: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([self.as_dict()])

    def _display_frame(self) -> pd.DataFrame:
        return field_frame(self.as_dict())

    def _caption(self) -> str:
        return "NC metrics (Papyan, Han, Donoho 2020)"


def class_mean_rows(H: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """Class means mu_c of the rows of ``H`` (n_samples x d) with labels ``y``, as a K x d matrix."""
    return np.stack([H[y == c].mean(axis=0) for c in range(K)])


def nc_metrics(H, y, W, b=None, *, convention: str = "package", global_mean: str = "class_means") -> NCMetrics:
    """NC1-NC4 of features ``H`` (n_samples x d), labels ``y``, classifier ``W`` (K x d), bias ``b``.

    ``convention``: "package" (the module docstring's formulas) or "papyan" (their code's NC3
    squared, equinorm with ddof 1, NC1 without the eigenvalue cut-off); ``global_mean``: the mean
    of the class means (both codes) or of the samples (the paper's text).
    """
    params.choice("convention", convention, CONVENTIONS)
    params.choice("global_mean", global_mean, GLOBAL_MEANS)
    H = params.real_array("H", H, ndim=2, what="an n_samples x d matrix of finite real numbers")
    W = params.real_array("W", W, ndim=2, what="a K x d matrix of finite real numbers")
    y = params.real_array("y", y, ndim=1, what="one integer label per row of H", integer=True)
    if W.shape[1] != H.shape[1]:
        raise params.ParameterError(f"H must be n_samples x d and W K x d, got {H.shape} and {W.shape}")
    K = params.integer("K", W.shape[0], minimum=2)
    if y.shape != (H.shape[0],) or not len(y) or y.min() < 0 or y.max() >= K:
        raise params.ParameterError(f"y must hold one integer label in 0..{K - 1} per row of H")
    if len(np.unique(y)) != K:
        raise params.ParameterError("y must contain every class at least once")
    b = np.zeros(K) if b is None else params.real_array("b", b, ndim=1, what=f"{K} finite real numbers (one per class)")
    if b.shape != (K,):
        raise params.ParameterError(f"b must hold {K} finite real numbers (one per class), got {len(b)}")

    means = class_mean_rows(H, y, K)
    M = means - (means.mean(axis=0) if global_mean == "class_means" else H.mean(axis=0))
    within = H - means[y]
    sigma_w = within.T @ within / H.shape[0]
    sigma_b = M.T @ M / K
    evals, evecs = np.linalg.eigh(sigma_b)
    top, vecs = evals[-(K - 1) :], evecs[:, -(K - 1) :]
    keep = top > top.max() * PINV_RTOL if convention == "package" else np.ones(len(top), dtype=bool)
    pinv = (vecs[:, keep] / top[keep]) @ vecs[:, keep].T
    nc1 = float(np.trace(sigma_w @ pinv) / K)

    gram = M @ M.T
    etf = (np.eye(K) - 1.0 / K) / np.sqrt(K - 1)
    nc2 = float(np.linalg.norm(gram / np.linalg.norm(gram) - etf))
    norms = np.linalg.norm(M, axis=1)
    cos = gram / np.outer(norms, norms)
    off = ~np.eye(K, dtype=bool)
    nc3 = float(np.linalg.norm(W / np.linalg.norm(W) - M / np.linalg.norm(M)) ** (1 if convention == "package" else 2))
    predicted = np.argmax(H @ W.T + b, axis=1)
    nearest = np.argmin(((H[:, None, :] - means[None, :, :]) ** 2).sum(-1), axis=1)
    return NCMetrics(
        nc1=nc1,
        nc2=nc2,
        nc2_equinorm=float(norms.std(ddof=0 if convention == "package" else 1) / norms.mean()),
        nc2_equiangularity=float(np.mean(np.abs(cos[off] + 1.0 / (K - 1)))),
        nc3=nc3,
        nc4_agreement=float(np.mean(predicted == nearest)),
    )
