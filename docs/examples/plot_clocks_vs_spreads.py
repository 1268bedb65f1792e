"""
Clocks against measured spreads
===============================

A small Spec B sweep, trained while this page is built: a BatchNorm MLP on MNIST-1D from three
initial weight scales sigma_w and three seeds, by low-rate SGD and by Adam.  The spread of a setting
is the range of its seed-mean test accuracies across sigma_w; the clocks T_SGD = sum eta^2 / b and
T_adapt = sum eta say how much of the initial scale training has had time to forget.
"""

import matplotlib.pyplot as plt

import implicitbias as ib

spec = {
    "name": "gallery",
    "base": {
        "dataset": "mnist1d",
        "train_size": 500,
        "val_size": 200,
        "test_size": 500,
        "arch": "mlp",
        "width": 0.25,
        "batch_size": 64,
        "epochs": 20,
        "sigma_w": [0.25, 1.0, 2.5],
        "seed": [0, 1, 2],
    },
    "grid": [{"label": "SGD", "optimizer": "sgd", "lr": 0.3}, {"label": "Adam", "optimizer": "adam", "lr": 0.003}],
    "options": {"threads": 1},
}
run = ib.sweep(spec)
analysis = ib.analyse(run)
analysis.to_frame()  # one row per claim: verdict, measured, reason (20 epochs, 3 seeds: inconclusive is honest)

# %%
# Seed-mean test accuracy against sigma_w, per optimiser, with the spread and the governing clock:
# ``analysis.groups_frame()`` has one row per group and sigma_w.
frame = analysis.groups_frame()
fig, ax = plt.subplots(figsize=(6, 3.5))
for _, rows in frame.groupby("label", sort=False):
    first = rows.iloc[0]
    ax.plot(
        rows["sigma_w"],
        rows["selected_test_acc"],
        marker="o",
        label=f"{first.optimizer}: spread {first.spread:.1f} pts, {first.governing} = {first.clock:.3g}",
    )
ax.set_xscale("log")
ax.set_xticks(spec["base"]["sigma_w"], [str(s) for s in spec["base"]["sigma_w"]])
ax.minorticks_off()
ax.set_xlabel("sigma_w (initial weight scale)")
ax.set_ylabel("test accuracy (%), mean of 3 seeds")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
