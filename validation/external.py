"""Your own model and data set in a sweep: ``arch = "package.module:factory"`` and
``dataset = "package.module:loader"`` (Spec B, section 1, on a researcher's own pipeline).

A run config (``validation.run``) takes, besides the built-in names, a *reference*: a module
path, one colon, and the dotted name of a callable in it.  The run then measures what it measures
for the built-in networks (kernel norms at initialisation and per epoch, the clocks T_SGD, T_L2,
T_adapt, the accuracies that the Spec B rules C1-C5 and C7 judge) on that model and data.

The model factory (``arch``)::

    factory(in_shape: tuple[int, ...], num_classes: int, *, width: float) -> torch.nn.Module

``in_shape`` is (C, H, W) of the data set's inputs, ``width`` the run's ``width`` entry (what it
multiplies is the factory's choice).  The module maps a batch (B, C, H, W) to logits
(B, num_classes); it is trained with cross-entropy on them, every parameter by the run's optimiser.
The head entries (``head_depth``, ``head_width``, ``head_activation``) shape the built-in networks'
heads only: with a factory they stay unset.

How sigma_w scales the kernels: after the factory returns, the package's own initialisation
(``validation.init.scale_init_``, the one the built-in networks get) re-draws every kernel of an
``nn.Linear`` or ``nn.Conv1d/2d/3d`` as::

    W = sigma_w W_He,  W_He ~ N(0, 2 / fan_in)  (Kaiming normal, fan_in mode, gain sqrt 2),

from the run's ``seed`` (the same draw for every sigma_w: only the scale differs), sets every bias
to 0 and every BatchNorm, GroupNorm and LayerNorm to gamma 1, beta 0.  The last ``nn.Linear`` in
module order is the head: with ``scale_head = false`` it gets the plain He draw (sigma_w = 1).  The
kernel norms ||W||_F of the records are those kernels'.  Other parameters (an ``nn.Parameter`` of
your own, an embedding) keep what the factory drew; the factory runs with torch's global generator
seeded with the run's ``seed``, so they too are the same for the same seed.  The model needs at
least one conv or linear layer (sigma_w has nothing to scale otherwise).  Spec B's mechanism, an
effective learning rate eta / ||W||_F^2, holds for kernels whose scale the loss does not see (a
norm layer after them, as in the built-in networks); without one, sigma_w changes the function
itself and the clocks' reading of the spreads does not apply as derived.

The data loader (``dataset``)::

    loader(*, seed: int, size: int | None, path: str | None)
        -> (x_train, y_train, x_test, y_test)  or  validation.data.ImageData

with the run's ``data_seed``, ``data_size`` and ``data_path``.  Either four arrays (numpy or
torch): inputs N x C x H x W (vectors as N x 1 x 1 x D), integer labels 0 .. K - 1 (K = the largest
label + 1, at least 2); the package then splits and standardises them exactly as the built-in data
sets (``validation.data.split_dataset``: a validation split of ``val_size`` drawn with
``data_seed``, ``train_size`` / ``test_size`` subsets, per-channel standardisation with
training-split statistics).  Or an ``ImageData`` the loader has split and standardised itself; then
``val_size``, ``train_size`` and ``test_size`` stay unset.

Determinism: same arguments, same data, and same seed, same model.  Draw from
``numpy.random.default_rng(seed)`` or a seeded ``torch.Generator`` (the loader too runs with torch's
global generator seeded with ``data_seed``; numpy's and Python's global generators are not
touched).  A data set is loaded once per process and arguments.

Resolution: ``importlib.import_module`` of the part before the colon, then attribute by attribute
along the part after it.  The module must be importable where the runs execute: from ``sys.path``
(installed packages, ``PYTHONPATH``, the current folder under ``python -m`` and in notebooks) or,
for a spec file, from the spec's own folder (``validation.sweep.load_spec`` adds it).  A bad
reference is one ``ParameterError`` naming ``arch`` or ``dataset`` and what is allowed.  The
module must be a ``.py`` file: a function defined in a notebook cell (module ``__main__``, no
source file) is refused, since edits to it could not be told from the stored runs.

Your code is a guest (``guest``): an exception raised in the factory, the loader or the model, at
the module's import, at construction, at loading or in a forward or backward pass at epoch e, is
reported as yours, one ``UserCodeError`` line naming ``arch`` or ``dataset``, the reference, where,
and your exception's type and message; ``SystemExit`` (``sys.exit``) and a ``KeyboardInterrupt``
your code raises itself are contained the same way, so the run is stored ``failed`` (never left
``running``) and the command line exits 2.  A real interrupt (SIGINT, or SIGTERM where the
command line turns it into one) that arrives while your code runs still interrupts the sweep.
The loaded data are checked at the boundary: real, finite inputs, integer labels in range,
non-empty splits, inputs of the shape the model accepts.

Code fingerprints: a run's code is ``validation.run.execute``'s together with the module of each
reference and the modules of its own top-level package that it imports
(``implicitbias.fingerprint``), so editing the factory, the loader or their helpers recomputes
the runs and a record of older code is never served.  (In a notebook, reload the module after editing it: the
fingerprint reads the file, the run calls what was imported.)

Ensembles (``options.batched``): the runs of a factory's model train as ensembles like the
built-in networks: the ``folded`` engine when the model is an ``nn.Sequential`` of Flatten,
bias-free Linear, BatchNorm1d and ReLU, otherwise ``torch.func.vmap`` over the members' stacked
state (equal to the solo runs to rounding).  A model that ``vmap`` cannot batch (Python control
flow on tensor values, ``.item()``) trains solo: leave ``batched`` off.  The Spec B analysis treats
a factory's model as a network of the shallow family (C6 judges the built-in deep ResNets only).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np
import torch
from torch import nn

from implicitbias.theory import params
from implicitbias.validation.data import ImageData, split_dataset
from implicitbias.validation.init import kernel_modules

__all__ = ["FACTORY", "LOADER", "UserCodeError", "guest", "is_reference", "check", "resolve", "modules", "build_model",
           "load_data"]

FACTORY = "model factory 'package.module:factory'"
LOADER = "data loader 'package.module:loader'"
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_FACTORY_SIGNATURE = "(in_shape, num_classes, *, width)"
_LOADER_SIGNATURE = "(*, seed, size, path)"
MAX_CLASSES = 100_000  # K = the largest label + 1: a label of 10**9 is a bug, not a head of 10**9 logits


def is_reference(value) -> bool:
    """Whether a run config's ``arch`` or ``dataset`` names user code (``module:callable``)."""
    return isinstance(value, str) and ":" in value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


_WHAT = {"arch": "model factory or model", "dataset": "data loader"}


class UserCodeError(params.ParameterError):
    """An error of the user's own code (a factory, a loader, a model), one line: the run config
    entry (``arch`` or ``dataset``), the reference, where it happened and the user's exception.
    A ``ParameterError``, so a sweep stores the run ``failed`` and the command line exits 2."""

    def __init__(self, message: str, error: BaseException | None = None):
        super().__init__(message)  # the message alone: it pickles back from a worker process
        self.error = error  # the user's exception (in the process that caught it)

    @classmethod
    def of(cls, parameter: str, reference: str, where: str, exc: BaseException) -> UserCodeError:
        """The error for ``exc``, raised by the code ``reference`` of entry ``parameter`` during ``where``."""
        return cls(f"{parameter} {reference!r} raised {_first_line(exc)} during {where} "
                   f"(in your {_WHAT.get(parameter, 'code')}, not in implicitbias)", exc)


@contextlib.contextmanager
def _signals_seen() -> Iterator[list[int]]:
    """A list that records every SIGINT and SIGTERM arriving while the block runs; the handlers in
    force still run as before.  Python raises a signal's ``KeyboardInterrupt`` wherever the
    interpreter is, in user code too, so this is how ``guest`` tells a real interrupt from a
    ``KeyboardInterrupt`` that the user's code raises itself.  Only the main thread receives
    signals (elsewhere the list stays empty); a handler replaced inside the block (the command
    line ignores a second signal while it winds down) is left as it was replaced."""
    seen: list[int] = []
    installed = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            old = signal.getsignal(number)
            if callable(old):
                def handler(signum, frame, old=old):
                    seen.append(signum)
                    return old(signum, frame)

                installed[number] = (old, handler)
                signal.signal(number, handler)
    try:
        yield seen
    finally:
        for number, (old, handler) in installed.items():
            if signal.getsignal(number) is handler:
                signal.signal(number, old)


@contextlib.contextmanager
def guest(parameter: str, reference, where: str) -> Iterator[None]:
    """Run user code named by run config entry ``parameter`` (a reference, ``is_reference``; for a
    built-in name this does nothing): whatever it raises, ``SystemExit`` included, and a
    ``KeyboardInterrupt`` it raises itself (no signal arrived, ``_signals_seen``) becomes one
    ``UserCodeError`` naming ``parameter``, the reference, ``where`` (import, construction,
    loading, forward at epoch e) and the user's exception.  A real interrupt passes through."""
    if not is_reference(reference):
        yield
        return
    with _signals_seen() as seen:
        try:
            yield
        except UserCodeError:
            raise
        except KeyboardInterrupt as exc:
            if seen:
                raise
            raise UserCodeError.of(parameter, reference, where, exc) from None
        except (Exception, SystemExit) as exc:
            raise UserCodeError.of(parameter, reference, where, exc) from None


def resolve(parameter: str, reference: str, what: str) -> Callable:
    """The callable ``reference`` (``package.module:name``) names; ``ParameterError`` naming
    ``parameter`` when it is malformed, its module cannot be imported or has no ``.py`` source (a
    notebook's ``__main__``: its edits could not be fingerprinted), the name is missing or not
    callable."""
    module_name, _, attribute = reference.partition(":")
    if not (_DOTTED.fullmatch(module_name) and _DOTTED.fullmatch(attribute)):
        raise params.ParameterError(
            f"{parameter} must be a {what}: dotted Python names either side of one colon; got {reference!r}"
        )
    try:
        with guest(parameter, reference, f"the import of {module_name}"):
            obj = importlib.import_module(module_name)
    except UserCodeError as exc:
        missing = getattr(exc.error, "name", None)
        if not isinstance(exc.error, ModuleNotFoundError) or not (
            missing == module_name or module_name.startswith(f"{missing}.")
        ):
            raise
        raise params.ParameterError(  # the module itself is not there: the reference is wrong, not its code
            f"{parameter} must name a module importable from sys.path (or the spec's folder): {reference!r} "
            f"({_first_line(exc.error)})"
        ) from None
    if not str(getattr(obj, "__file__", None) or "").endswith(".py"):
        raise params.ParameterError(
            f"{parameter} must name a module with a Python source file (its code fingerprint reads it): "
            f"{reference!r} is in {module_name}, which has none (defined interactively?); put it in a .py module"
        )
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise params.ParameterError(
                f"{parameter} must name a callable in module {module_name}: {reference!r} has no {part!r}"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise params.ParameterError(f"{parameter} must be a {what} (a callable); {reference!r} is a {type(obj).__name__}")
    return obj


def check(parameter: str, value, builtin: Iterable[str], what: str) -> str:
    """``value`` if it is a built-in name or a reference that resolves; else ``ParameterError``."""
    builtin = list(builtin)
    if is_reference(value):
        resolve(parameter, value, what)
        return value
    if value not in builtin:
        raise params.ParameterError(f"{parameter} must be one of {', '.join(builtin)} or a {what}; got {value!r}")
    return value


def modules(config: Mapping) -> tuple[str, ...]:
    """The modules of user code a run config names (``arch`` and ``dataset`` references), for its
    code fingerprint; empty for the built-in networks and data sets."""
    return tuple(sorted({config[k].partition(":")[0] for k in ("arch", "dataset") if is_reference(config.get(k))}))


def _call(parameter: str, reference: str, fn: Callable, signature: str, torch_seed: int, args: tuple, kwargs: dict,
          where: str):
    """``fn(*args, **kwargs)`` with torch's global generator seeded with ``torch_seed`` (restored
    after), as a ``guest`` (its errors are the reference's, ``where``)."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        raise params.ParameterError(
            f"{parameter} must accept {signature}: {reference!r} takes {inspect.signature(fn)}"
        ) from None
    except ValueError:  # a builtin without a signature: let the call say whether it fits
        pass
    with torch.random.fork_rng(devices=[]), guest(parameter, reference, where):
        torch.manual_seed(torch_seed)
        return fn(*args, **kwargs)


def build_model(reference: str, in_shape: tuple[int, ...], num_classes: int, *, width: float, seed: int) -> nn.Module:
    """The model of factory ``reference`` (module docstring), checked: an ``nn.Module`` with a conv
    or linear kernel that maps a batch of two zero inputs to (2, num_classes) logits.  Not yet
    initialised: ``validation.run.build`` applies sigma_w."""
    factory = resolve("arch", reference, FACTORY)
    model = _call("arch", reference, factory, _FACTORY_SIGNATURE, seed, (tuple(in_shape), int(num_classes)),
                  {"width": width}, "construction")
    if not isinstance(model, nn.Module):
        raise params.ParameterError(f"arch must return a torch.nn.Module: {reference!r} returned a {type(model).__name__}")
    if not kernel_modules(model):
        raise params.ParameterError(
            f"arch must build a model with a conv or linear layer (sigma_w scales their kernels): {reference!r} has none"
        )
    with guest("arch", reference, f"its forward pass on a batch (2, {', '.join(map(str, in_shape))}) of the data's shape"):
        with torch.no_grad():
            model.eval()
            logits = model(torch.zeros(2, *in_shape))
        model.train()
    shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
    if shape != (2, num_classes):
        raise params.ParameterError(
            f"arch must map a batch of 2 inputs to logits of shape (2, {num_classes}): {reference!r} gave {shape}"
        )
    return model


def _array(parameter: str, reference: str, name: str, value) -> np.ndarray:
    """One array a loader returned, checked at the boundary: inputs ``x_*`` real and finite, N x C x H x W;
    labels ``y_*`` one integer >= 0 per input."""
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    real = np.issubdtype(array.dtype, np.number) and not np.issubdtype(array.dtype, np.complexfloating)
    if name.startswith("x") and (array.ndim != 4 or not real):
        raise params.ParameterError(
            f"{parameter} must return inputs {name} of shape N x C x H x W (real numbers): {reference!r} gave shape "
            f"{array.shape}, dtype {array.dtype}"
        )
    if name.startswith("x") and not np.isfinite(array).all():
        raise params.ParameterError(
            f"{parameter} must return finite inputs {name}: {reference!r} gave {np.size(array) - np.isfinite(array).sum()} "
            "non-finite values (inf or NaN)"
        )
    if name.startswith("y") and (array.ndim != 1 or not np.issubdtype(array.dtype, np.integer) or (array < 0).any()):
        raise params.ParameterError(
            f"{parameter} must return labels {name} as one integer >= 0 per input: {reference!r} gave shape "
            f"{array.shape}, dtype {array.dtype}"
        )
    return array


def _checked(reference: str, data: ImageData) -> ImageData:
    """A loader's own ``ImageData`` on the CPU in float32, after the checks of the four arrays."""
    k = data.num_classes
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= MAX_CLASSES:
        raise params.ParameterError(f"dataset must return an ImageData of 2 to {MAX_CLASSES} classes: {reference!r} "
                                    f"gave {k!r}")
    splits = {}
    for split in ("train", "val", "test"):
        x = _array("dataset", reference, f"x_{split}", getattr(data, f"x_{split}"))
        y = _array("dataset", reference, f"y_{split}", getattr(data, f"y_{split}"))
        if not len(y):
            raise params.ParameterError(f"dataset must return non-empty splits: the {split} split of {reference!r} is empty")
        if len(x) != len(y) or y.max() >= k:
            raise params.ParameterError(
                f"dataset must return one label in 0..{k - 1} per input: {reference!r} has {len(x)} x_{split}, "
                f"{len(y)} y_{split}, labels up to {y.max()}"
            )
        splits |= {f"x_{split}": torch.as_tensor(x), f"y_{split}": torch.as_tensor(y)}
    return ImageData(str(data.name), num_classes=k, **splits).to("cpu", torch.float32)


def load_data(
    reference: str,
    *,
    seed: int,
    size: int | None = None,
    path: str | None = None,
    val_size: int | None = None,
    train_size: int | None = None,
    test_size: int | None = None,
) -> ImageData:
    """The data of loader ``reference`` (module docstring), split and standardised, on the CPU."""
    loader = resolve("dataset", reference, LOADER)
    out = _call("dataset", reference, loader, _LOADER_SIGNATURE, seed, (), {"seed": seed, "size": size, "path": path},
                "loading")
    if isinstance(out, ImageData):
        for key, value in (("val_size", val_size), ("train_size", train_size), ("test_size", test_size)):
            if value is not None:
                raise params.ParameterError(
                    f"{key} must stay unset for dataset {reference!r}: its loader returns an ImageData, split already"
                )
        return _checked(reference, out)
    if not isinstance(out, (tuple, list)) or len(out) != 4:
        raise params.ParameterError(
            f"dataset must return (x_train, y_train, x_test, y_test) or an ImageData: {reference!r} returned a "
            f"{type(out).__name__}"
        )
    names = ("x_train", "y_train", "x_test", "y_test")
    arrays = [_array("dataset", reference, name, value) for name, value in zip(names, out)]
    x_train, y_train, x_test, y_test = arrays
    if len(x_train) != len(y_train) or len(x_test) != len(y_test) or x_train.shape[1:] != x_test.shape[1:]:
        raise params.ParameterError(
            f"dataset must return one label per input and test inputs shaped like the training inputs: {reference!r} "
            f"gave x_train {x_train.shape}, y_train {y_train.shape}, x_test {x_test.shape}, y_test {y_test.shape}"
        )
    if len(x_train) < 3 or len(x_test) < 1:
        raise params.ParameterError(
            f"dataset must return at least 3 training inputs (a validation split of 1 and 2 to train on) and 1 test "
            f"input: {reference!r} gave {len(x_train)} training and {len(x_test)} test inputs"
        )
    k = int(max(y_train.max(initial=0), y_test.max(initial=0))) + 1
    if not 2 <= k <= MAX_CLASSES:
        raise params.ParameterError(f"dataset must return labels of 2 to {MAX_CLASSES} classes (K = the largest label + 1): "
                                    f"{reference!r} has K = {k}")
    return split_dataset(reference, (x_train, y_train, x_test, y_test), k, seed=seed, val_size=val_size,
                         train_size=train_size, test_size=test_size)
