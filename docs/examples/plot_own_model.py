"""
Your own model and data set
===========================

A Spec B sweep of a model and a data set that are not the package's: ``lab_pipeline.py`` beside
this example defines a model factory (a small BatchNorm CNN) and a data loader (noisy 8 x 8 bars),
and the spec names them as ``"module:function"``.  The package initialises every kernel as
sigma_w x He normal, trains each sigma_w x seed with low-rate SGD and with Adam, records kernel
norms, accuracies and the clocks per epoch, and judges the Spec B claims on the runs.  The contract
(what the factory and the loader return, how sigma_w scales the kernels) is on the page
*Your own model and data set*.

.. literalinclude:: ../examples/lab_pipeline.py
   :language: python
   :lines: 9-
"""

import tomllib

import matplotlib.pyplot as plt
from implicitbias.validation.analysis import summarise

import implicitbias as ib

# the spec as a TOML file would hold it (``implicitbias sweep lab.toml`` runs the same)
spec = tomllib.loads("""
name = "lab"
[base]
arch = "lab_pipeline:small_cnn"
dataset = "lab_pipeline:bars"
batch_size = 30
epochs = 8
sigma_w = [0.25, 1.0, 4.0]
seed = [0, 1, 2]
[[grid]]
optimizer = "sgd"
lr = 0.05
[[grid]]
optimizer = "adam"
lr = 0.003
[options]
threads = 1
""")
run = ib.sweep(spec)
analysis = ib.analyse(run)
print(analysis.verdicts())  # 8 epochs, 3 seeds: most rules are honestly inconclusive here

# %%
# The memory of initialisation in the weights: the final norm of every kernel against sigma_w, with
# each setting's governing clock.  A norm that stays proportional to sigma_w (slope 1 on these axes)
# remembers the initial scale; 8 epochs are a short clock for either optimiser, so both remember
# most of it here (longer training or a larger rate moves the clock, see the clocks tutorial).
fig, ax = plt.subplots(figsize=(6, 3.5))
for group in analysis.groups:
    sigmas = [config["sigma_w"] for config, _ in group.runs]
    norms = [record["history"][-1]["kernel_norm"] for _, record in group.runs]
    summary = summarise(group)
    clock = summary["governing"]
    ax.scatter(sigmas, norms, label=f"{group.label}: {clock} = {summary['clocks'][clock]:.3g}")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("sigma_w (initial weight scale)")
ax.set_ylabel("final kernel norm ||W||")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
