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

import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import torch
from torch import nn

from implicitbias.theory import params
from implicitbias.validation.data import ImageData, split_dataset
from implicitbias.validation.init import kernel_modules

__all__ = ["FACTORY", "LOADER", "is_reference", "check", "resolve", "modules", "build_model", "load_data"]

FACTORY = "model factory 'package.module:factory'"
LOADER = "data loader 'package.module:loader'"
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_FACTORY_SIGNATURE = "(in_shape, num_classes, *, width)"
_LOADER_SIGNATURE = "(*, seed, size, path)"


def is_reference(value) -> bool:
    """Whether a run config's ``arch`` or ``dataset`` names user code (``module:callable``)."""
    return isinstance(value, str) and ":" in value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


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
        obj = importlib.import_module(module_name)
    except Exception as exc:  # any error the module raises on import is the reference's problem
        raise params.ParameterError(
            f"{parameter} must name a module importable from sys.path (or the spec's folder): {reference!r} "
            f"({_first_line(exc)})"
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


def _call(parameter: str, reference: str, fn: Callable, signature: str, torch_seed: int, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)`` with torch's global generator seeded with ``torch_seed`` (restored after)."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        raise params.ParameterError(
            f"{parameter} must accept {signature}: {reference!r} takes {inspect.signature(fn)}"
        ) from None
    except ValueError:  # a builtin without a signature: let the call say whether it fits
        pass
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed)
        return fn(*args, **kwargs)


def build_model(reference: str, in_shape: tuple[int, ...], num_classes: int, *, width: float, seed: int) -> nn.Module:
    """The model of factory ``reference`` (module docstring), checked: an ``nn.Module`` with a conv
    or linear kernel that maps a batch of two zero inputs to (2, num_classes) logits.  Not yet
    initialised: ``validation.run.build`` applies sigma_w."""
    factory = resolve("arch", reference, FACTORY)
    model = _call("arch", reference, factory, _FACTORY_SIGNATURE, seed, (tuple(in_shape), int(num_classes)), {"width": width})
    if not isinstance(model, nn.Module):
        raise params.ParameterError(f"arch must return a torch.nn.Module: {reference!r} returned a {type(model).__name__}")
    if not kernel_modules(model):
        raise params.ParameterError(
            f"arch must build a model with a conv or linear layer (sigma_w scales their kernels): {reference!r} has none"
        )
    try:
        with torch.no_grad():
            model.eval()
            logits = model(torch.zeros(2, *in_shape))
        model.train()
    except Exception as exc:  # the model's forward is user code: its failure is the reference's problem
        raise params.ParameterError(
            f"arch must map a batch (2, {', '.join(map(str, in_shape))}) to logits: {reference!r} raised {_first_line(exc)}"
        ) from None
    shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
    if shape != (2, num_classes):
        raise params.ParameterError(
            f"arch must map a batch of 2 inputs to logits of shape (2, {num_classes}): {reference!r} gave {shape}"
        )
    return model


def _array(parameter: str, reference: str, name: str, value) -> np.ndarray:
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if name.startswith("x") and (array.ndim != 4 or not np.issubdtype(array.dtype, np.number)):
        raise params.ParameterError(
            f"{parameter} must return inputs {name} of shape N x C x H x W (numbers): {reference!r} gave shape "
            f"{array.shape}, dtype {array.dtype}"
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
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise params.ParameterError(f"dataset must return an ImageData of at least 2 classes: {reference!r} gave {k!r}")
    splits = {}
    for split in ("train", "val", "test"):
        x = _array("dataset", reference, f"x_{split}", getattr(data, f"x_{split}"))
        y = _array("dataset", reference, f"y_{split}", getattr(data, f"y_{split}"))
        if len(x) != len(y) or (len(y) and y.max() >= k):
            raise params.ParameterError(
                f"dataset must return one label in 0..{k - 1} per input: {reference!r} has {len(x)} x_{split}, "
                f"{len(y)} y_{split}" + (f", labels up to {y.max()}" if len(y) else "")
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
    out = _call("dataset", reference, loader, _LOADER_SIGNATURE, seed, (), {"seed": seed, "size": size, "path": path})
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
    k = int(max(y_train.max(initial=0), y_test.max(initial=0))) + 1
    if k < 2:
        raise params.ParameterError(f"dataset must return labels of at least 2 classes: {reference!r} has one")
    return split_dataset(reference, (x_train, y_train, x_test, y_test), k, seed=seed, val_size=val_size,
                         train_size=train_size, test_size=test_size)
