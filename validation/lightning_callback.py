"""A Lightning callback around ``validation.meter.ForgettingMeter``: the clocks, kernel norms and
epoch metrics of a ``Trainer.fit`` (optional extra ``lightning``).

    callback = ForgettingCallback(batch_size=128, n_train=45_000, sigma_w=0.5, seed=0)
    trainer = lightning.pytorch.Trainer(max_epochs=..., callbacks=[callback])
    trainer.fit(module, train_loader, val_loader)
    callback.meter.save(store)          # or callback.meter.record(), callback.meter.rows()

At ``on_fit_start`` it creates the meter on the LightningModule and the trainer's first optimiser
(keywords as ``ForgettingMeter``'s); at the end of each training epoch (after its validation) it
passes the epoch's metrics, read from ``trainer.callback_metrics`` under the names ``metrics`` maps
them to: log ``train_acc``, ``val_loss``, ``val_acc`` and ``test_acc`` (``train_loss``, ``test_loss``
optional) with ``self.log(..., on_epoch=True)`` (a test accuracy per epoch: a second validation
loader over the test set, logged under ``test_acc``).  The initialisation (epoch 0) is not measured
(Lightning validates before the first step only on a few sanity batches), so records start at
epoch 1.
"""

from __future__ import annotations

from collections.abc import Mapping

from implicitbias.theory import params
from implicitbias.validation.meter import METRICS, ForgettingMeter

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the standalone package, else none: the callback then says how to install it
    try:
        from pytorch_lightning.callbacks import Callback
    except ImportError:
        Callback = object

__all__ = ["ForgettingCallback"]

REQUIRED = METRICS[:4]  # train_acc, val_loss, val_acc, test_acc


class ForgettingCallback(Callback):
    """``ForgettingMeter`` as a Lightning callback (module docstring); ``meter`` after ``fit`` starts.

    Parameters
    ----------
    batch_size, n_train, sigma_w, seed
        As for ``ForgettingMeter``.
    metrics : Mapping of str to str or None
        The logged name of each metric the meter keeps (``train_acc``, ``val_loss``, ``val_acc``,
        ``test_acc``, ``train_loss``, ``test_loss``); ``None``: the same names.
    **meter_keywords
        ``optimizer_name``, ``clock_group``, ``scale_invariant``, ``run_id``, ``dataset``, ``arch``,
        ``num_classes``: as for ``ForgettingMeter``.

    See Also
    --------
    implicitbias.ForgettingMeter : the meter, for a loop of your own.
    """

    meter_class = ForgettingMeter

    def __init__(self, *, batch_size: int, n_train: int, sigma_w: float, seed: int,
                 metrics: Mapping[str, str] | None = None, **meter_keywords):
        if Callback is object:
            raise params.ParameterError("ForgettingCallback needs Lightning: pip install 'implicitbias[lightning]'")
        super().__init__()
        if metrics is not None and not isinstance(metrics, Mapping):
            raise params.ParameterError(f"metrics must map metric names to logged names, got {metrics!r}")
        names = dict(zip(METRICS, METRICS)) | dict(metrics or {})
        unknown = sorted(map(str, set(names) - set(METRICS)))
        if unknown or not all(isinstance(v, str) for v in names.values()):
            raise params.ParameterError(f"metrics must map names among {', '.join(METRICS)} to logged names; got "
                                        f"{metrics!r}")
        allowed = ("optimizer_name", "clock_group", "scale_invariant", "run_id", "dataset", "arch", "num_classes")
        for key in meter_keywords:
            params.choice("ForgettingCallback keyword", key, allowed)
        n_train = params.integer("n_train", n_train, minimum=1)  # checked now, not when fit starts
        keywords = dict(batch_size=params.integer("batch_size", batch_size, minimum=1, maximum=n_train),
                        n_train=n_train, sigma_w=params.real("sigma_w", sigma_w, minimum=0.0, open_minimum=True),
                        seed=params.seed("seed", seed))
        self.names, self.keywords, self.meter = names, keywords | meter_keywords, None

    def on_fit_start(self, trainer, pl_module) -> None:
        if not trainer.optimizers:
            raise params.ParameterError("ForgettingCallback needs configure_optimizers to return an optimizer")
        self.meter = self.meter_class(pl_module, trainer.optimizers[0], **self.keywords)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        logged = trainer.callback_metrics
        missing = [m for m in REQUIRED if self.names[m] not in logged]
        if missing:
            raise params.ParameterError(f"metric {self.names[missing[0]]!r} must be logged every epoch (self.log) for "
                                        f"ForgettingCallback; logged: {', '.join(sorted(logged)) or 'none'}")
        self.meter.epoch_end(**{m: logged[self.names[m]] for m in METRICS if self.names[m] in logged})

    def on_fit_end(self, trainer, pl_module) -> None:
        self.meter.close()
