"""Checks for user-supplied parameters, shared by every layer.

Every public function that takes user input validates it here, so that bad input always
raises a ``ParameterError`` (a ``ValueError``) whose one-line message names the parameter and what is allowed.
The command line turns that into one line on stderr and exit status 2.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ParameterError", "integer", "real", "boolean", "real_array", "choice", "power_of_two", "seed", "SEED_MAX"]

SEED_MAX = 2**32 - 1  # every RNG of the project (numpy, torch, mnist1d) takes seeds up to here


class ParameterError(ValueError):
    """Bad user input.  The message is one line naming the parameter and what is allowed.

    Every public function and class of ``implicitbias`` raises it for a bad argument; the command
    line prints the same message, naming the flag, and exits with status 2.

    Examples
    --------
    >>> import implicitbias as ib
    >>> try:
    ...     ib.phase_diagram(K=1, L=2)
    ... except ib.ParameterError as error:
    ...     print(str(error).split(",")[0])
    K must be an integer in [2
    """


def integer(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` or raise ``ParameterError`` naming ``name`` and the range."""
    allowed = _range_text("an integer", minimum, maximum)
    if isinstance(value, bool):  # True is an Integral in Python, never an integer in a spec
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ParameterError(f"{name} must be {allowed}, got {value}")
    return value


def real(
    name: str,
    value,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_minimum: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` in range or raise ``ParameterError`` naming ``name``."""
    lower = None if minimum is None else (f"> {minimum:g}" if open_minimum else f">= {minimum:g}")
    parts = [p for p in (lower, None if maximum is None else f"<= {maximum:g}") if p]
    allowed = "a finite number" + (" " + " and ".join(parts) if parts else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    too_low = minimum is not None and (value <= minimum if open_minimum else value < minimum)
    if too_low or (maximum is not None and value > maximum):
        shown = f"{value:g}"
        if any(b is not None and b != value and f"{b:g}" == shown for b in (minimum, maximum)):  # just beyond a bound
            shown = repr(value)
        raise ParameterError(f"{name} must be {allowed}, got {shown}")
    return value


def boolean(name: str, value) -> bool:
    """Return ``value`` as a ``bool`` if it is one (Python's or a numpy scalar bool), else raise
    ``ParameterError``: a truthy string such as ``"no"`` or a number is never taken as True."""
    if isinstance(value, bool):
        return value
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "b" and getattr(value, "shape", None) == ():
        return bool(value)
    raise ParameterError(f"{name} must be True or False, got {value!r}")


def real_array(name: str, value: object, *, ndim: int, what: str, integer: bool = False) -> np.ndarray:
    """``value`` as a numpy array of ``ndim`` dimensions of finite real numbers (float64; with
    ``integer``, of integers, kept as int64), else ``ParameterError`` naming ``name``, ``what`` it
    must be, and the shape and type it has: strings, objects, complex numbers and booleans are refused,
    never converted."""
    import numpy as np  # here, not at the top: the command line's parsers import this module

    # arrays (numpy's, or anything with __array__: torch tensors, pandas), nested lists and tuples;
    # a range or a generator is no array, and numpy would materialise it whatever its length
    if not (hasattr(value, "__array__") or isinstance(value, (list, tuple, numbers.Real))):
        raise ParameterError(f"{name} must be {what} (an array or nested lists), got {type(value).__name__}")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError, MemoryError) as exc:  # ragged lists, unconvertible objects
        raise ParameterError(f"{name} must be {what}, got {type(value).__name__} ({' '.join(str(exc).split())})") from None
    kinds = "iu" if integer else "iuf"
    if array.ndim != ndim or array.dtype.kind not in kinds:
        raise ParameterError(f"{name} must be {what}, got shape {array.shape} of {array.dtype}")
    if integer:
        return array.astype(np.int64)
    array = array.astype(float)
    if not np.isfinite(array).all():
        raise ParameterError(f"{name} must be {what}, got {array.size - np.isfinite(array).sum()} non-finite entries")
    return array


def seed(name: str, value) -> int:
    """A random seed: an integer in [0, SEED_MAX], else ``ParameterError`` naming ``name``."""
    return integer(name, value, minimum=0, maximum=SEED_MAX)


def choice(name: str, value, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise ``ParameterError`` listing them."""
    allowed = list(allowed)
    if value not in allowed:
        raise ParameterError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")
    return value


def power_of_two(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer power of two in range, else raise ``ParameterError``."""
    value = integer(name, value, minimum=minimum, maximum=maximum)
    if value & (value - 1):
        raise ParameterError(f"{name} must be a power of two (2, 4, 8, ...), got {value}")
    return value


def _range_text(kind: str, minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} in [{minimum}, {maximum}]"
    if minimum is not None:
        return f"{kind} >= {minimum}"
    if maximum is not None:
        return f"{kind} <= {maximum}"
    return kind
