"""
Singular-value dynamics under Hadamard initialisation
=====================================================

Under the Hadamard initialisation of the deep UFM every factor keeps its singular vectors, so
gradient flow lives on the singular values.  The balanced reduction, derived with sympy, is
dS_j/dt = N/(K sqrt n) S_j^(2 - 2/N) (1 - g_j) with N = L + 1 factors (L weight matrices).
"""

import matplotlib.pyplot as plt
import numpy as np
from implicitbias.numerics.ufm.spectral_flow import integrate

import implicitbias as ib

ode = ib.singular_value_ode(K=4, L=2)
initial = np.array([0.05, 0.1, 0.2])  # S_1..S_3 at t = 0
trajectory = integrate(ode, initial, t_end=400.0, t_eval=np.linspace(0, 400, 400))
print(trajectory.success, trajectory.message, trajectory.event)

fig, ax = plt.subplots(figsize=(6, 3.5))
for j in range(trajectory.singular_values.shape[1]):
    ax.plot(trajectory.times, trajectory.singular_values[:, j], label=f"S_{j + 1}")
ax.set_xlabel("t")
ax.set_ylabel("logit singular value")
ax.set_yscale("log")
ax.set_title("K = 4, L = 2, balanced: singular values of the logits never decrease")
ax.legend()
fig.tight_layout()
plt.show()
