"""``ib.ForgettingMeter``: the meter of ``implicitbias.validation.meter`` whose ``save`` also takes
a store's path (or nothing: the session store), as every ``implicitbias.api`` function does.

    import implicitbias as ib

    meter = ib.ForgettingMeter(model, optimizer, batch_size=128, n_train=45_000, sigma_w=0.5, seed=0)
    for epoch in range(epochs):
        ...  # your training steps
        meter.epoch_end(train_acc=..., val_loss=..., val_acc=..., test_acc=...)
    meter.save("runs.sqlite")          # then: implicitbias --store runs.sqlite analyse
"""

from __future__ import annotations

import os

from implicitbias.api import open_store
from implicitbias.store import Store
from implicitbias.validation import lightning_callback, meter

__all__ = ["ForgettingMeter", "ForgettingCallback"]


class ForgettingMeter(meter.ForgettingMeter):
    __doc__ = meter.ForgettingMeter.__doc__

    def save(self, store: Store | str | os.PathLike | None = None) -> tuple[dict, dict]:
        """Put the run in ``store`` (an open ``Store``, the path of an SQLite store, or ``None``: the
        session store), where ``implicitbias analyse`` and ``ib.analyse`` judge it; returns
        (config, record)."""
        with open_store(store) as opened:  # refuses anything else, naming store
            return super().save(opened)


class ForgettingCallback(lightning_callback.ForgettingCallback):
    __doc__ = lightning_callback.ForgettingCallback.__doc__
    meter_class = ForgettingMeter  # its meter saves to a path too
