"""A researcher's model factories and data loaders that fail in their own code, each in one place
(construction, loading, a forward pass at some epoch), for ``tests/test_user_code_faults.py``."""

import os
import signal
import sys

import numpy as np

from own_pipeline import TinyNet, blobs, blobs_split


def raising_factory(in_shape, num_classes, *, width):
    raise RuntimeError("my factory is broken")


def exiting_factory(in_shape, num_classes, *, width):
    sys.exit(3)


def interrupting_factory(in_shape, num_classes, *, width):
    raise KeyboardInterrupt  # raised by the code itself: no signal arrived


def raising_loader(*, seed, size, path):
    raise ValueError("cannot read my files")


def exiting_loader(*, seed, size, path):
    sys.exit(4)


class _LateFailure(TinyNet):
    """TinyNet whose forward, in training mode from the ``after``-th call on, runs ``fail`` (the
    build check's forward and the evaluation at initialisation run in eval mode and pass)."""

    def __init__(self, in_features, hidden, num_classes, fail, after=3):
        super().__init__(in_features, hidden, num_classes)
        self.fail, self.after, self.calls = fail, after, 0

    def forward(self, x):
        if self.training:
            self.calls += 1
            if self.calls >= self.after:
                self.fail()
        return super().forward(x)


def _late(fail):
    def factory(in_shape, num_classes, *, width):
        return _LateFailure(int(np.prod(in_shape)), 4, num_classes, fail)

    return factory


def _exit_zero():
    sys.exit(0)


def _raise(exc):
    def fail():
        raise exc

    return fail


def _real_sigint():
    os.kill(os.getpid(), signal.SIGINT)  # a real interrupt that arrives while user code runs


exits_in_training = _late(_exit_zero)
interrupts_itself_in_training = _late(_raise(KeyboardInterrupt()))
raises_in_training = _late(_raise(RuntimeError("my forward broke")))
signalled_in_training = _late(_real_sigint)


class _NanOnLargeInputs(TinyNet):
    """TinyNet whose logits are NaN on inputs larger than 100 in eval mode (the test split of
    ``large_test_inputs``): training and validation stay finite."""

    def forward(self, x):
        z = super().forward(x)
        return z * float("nan") if not self.training and x.abs().max() > 100 else z


def nan_on_large_inputs(in_shape, num_classes, *, width):
    return _NanOnLargeInputs(int(np.prod(in_shape)), 4, num_classes)


def large_test_inputs(*, seed, size, path):
    """blobs split by the loader, the test inputs scaled by 1000 (finite, but the model's logits on them are not)."""
    data = blobs_split(seed=seed, size=size, path=path)
    data.x_test = data.x_test * 1000.0
    return data


def infinite_test_inputs(*, seed, size, path):
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    x_test[0, 0, 0, 0] = np.inf
    return x, y, x_test, y_test


def complex_inputs(*, seed, size, path):
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    return x + 1j, y, x_test + 1j, y_test


def no_training_inputs(*, seed, size, path):
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    return x[:0], y[:0], x_test, y_test


def empty_validation_split(*, seed, size, path):
    data = blobs_split(seed=seed, size=size, path=path)
    data.x_val, data.y_val = data.x_val[:0], data.y_val[:0]
    return data


def _labels_up_to(top):
    def loader(*, seed, size, path):
        x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
        y_test = y_test.copy()
        y_test[0] = top
        return x, y, x_test, y_test

    return loader


huge_label = _labels_up_to(10**9)
many_classes = _labels_up_to(99_999)  # K = 100,000: the most classes a loader may give
too_many_classes = _labels_up_to(100_000)
