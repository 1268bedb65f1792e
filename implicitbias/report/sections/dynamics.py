"""Report section: singular-value dynamics of the deep UFM (Spec A, sections 4 and 5).

Layout only.  Its claims (``implicitbias.claims`` with ``section = "dynamics"``): the Hadamard
diagonalisation, the derived singular-value ODE, Theorems 4.3, 4.4 and 4.5, the KL divergence to
NC, the basin of NC and the section-5 trend of the effective rank with depth and width.
L counts weight matrices; N = L + 1 factors including the features.
"""

NAME = "dynamics"
ORDER = 20
TITLE = "Singular-value dynamics of the deep UFM (Theorems 4.3-4.5, section 5)"
