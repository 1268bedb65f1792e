"""One module per CLI command; each defines ``register(subparsers)``.

A command module imports at its top only what its parser needs (names of choices, light
modules); the science it calls is imported inside its ``run``.
"""

from __future__ import annotations

from implicitbias.theory import params

__all__ = ["parse_list"]


def parse_list(name: str, text: str, kind=float) -> list:
    """A comma-separated list of numbers; an empty list, an empty item (``1,,2`` or ``1,2,``) or a
    bad item is a ParameterError naming ``name``."""
    items = [v.strip() for v in str(text).split(",")]
    what = "integers" if kind is int else "numbers"
    if any(not v for v in items):
        raise params.ParameterError(f"{name} must be a comma-separated list of {what} without empty items, got {text!r}")
    try:
        return [kind(v) for v in items]
    except ValueError:
        raise params.ParameterError(f"{name} must be a comma-separated list of {what}, got {text!r}") from None
