"""Parameter checks (``theory.params``) at and beside every boundary they state.

Each check is compared with the range its own message announces: a value on the closed side of
a bound is returned unchanged, one a step outside is refused with a one-line ``ParameterError``
naming the parameter; open bounds refuse the bound itself.
"""

import math

import numpy as np
import pytest

from implicitbias.theory import params
from implicitbias.theory.params import ParameterError


def test_integer_accepts_its_closed_range_and_integral_floats():
    assert params.integer("K", 3, minimum=3, maximum=7) == 3
    assert params.integer("K", 7, minimum=3, maximum=7) == 7
    assert params.integer("K", 5.0, minimum=3) == 5 and type(params.integer("K", 5.0)) is int
    assert params.integer("K", np.int64(-4)) == -4 and params.integer("K", -4.0, maximum=-4) == -4


@pytest.mark.parametrize("value, bounds, shown", [
    (2, {"minimum": 3, "maximum": 7}, "an integer in [3, 7], got 2"),
    (8, {"minimum": 3, "maximum": 7}, "an integer in [3, 7], got 8"),
    (-1, {"minimum": 0}, "an integer >= 0, got -1"),
    (5, {"maximum": 4}, "an integer <= 4, got 5"),
    (True, {}, "an integer, got True"),
    (2.5, {"minimum": 0}, "an integer >= 0, got 2.5"),
    (math.inf, {}, "an integer, got inf"),
    ("3", {}, "an integer, got '3'"),
])
def test_integer_refuses_outside_with_the_range_in_the_message(value, bounds, shown):
    with pytest.raises(ParameterError, match=r"^K must be ") as e:
        params.integer("K", value, **bounds)
    assert str(e.value) == f"K must be {shown}"


def test_a_value_just_beyond_a_bound_is_shown_in_full():
    """1.0000000005e100 prints as 1e+100 with six digits, the bound itself: the message shows it whole."""
    with pytest.raises(ParameterError) as e:
        params.real("lr", 1.0000000005e100, minimum=0.0, maximum=1e100)
    assert str(e.value) == "lr must be a finite number >= 0 and <= 1e+100, got 1.0000000005e+100"


def test_real_closed_and_open_minimum():
    assert params.real("lr", 0.0, minimum=0.0) == 0.0
    assert params.real("lr", 2.5, minimum=0.0, maximum=2.5) == 2.5
    assert params.real("lr", -1, maximum=0.0) == -1.0 and type(params.real("lr", 3)) is float
    assert params.real("lr", 1e-300, minimum=0.0, open_minimum=True) == 1e-300
    with pytest.raises(ParameterError) as e:
        params.real("lr", 0.0, minimum=0.0, open_minimum=True)
    assert str(e.value) == "lr must be a finite number > 0, got 0"
    with pytest.raises(ParameterError) as e:
        params.real("lr", -0.5, minimum=0.0)
    assert str(e.value) == "lr must be a finite number >= 0, got -0.5"
    with pytest.raises(ParameterError) as e:
        params.real("lr", 2.6, minimum=0.0, maximum=2.5)
    assert str(e.value) == "lr must be a finite number >= 0 and <= 2.5, got 2.6"
    with pytest.raises(ParameterError) as e:
        params.real("lr", 7.0, maximum=2.5)
    assert str(e.value) == "lr must be a finite number <= 2.5, got 7"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "0.1", None])
def test_real_refuses_non_finite_and_non_numbers(value):
    with pytest.raises(ParameterError) as e:
        params.real("lr", value)
    assert str(e.value) == f"lr must be a finite number, got {value!r}"


def test_seed_range():
    assert params.seed("seed", 0) == 0 and params.seed("seed", 2**32 - 1) == 2**32 - 1
    for bad in (-1, 2**32):
        with pytest.raises(ParameterError, match=r"seed must be an integer in \[0, 4294967295\]"):
            params.seed("seed", bad)


def test_choice_lists_what_is_allowed():
    assert params.choice("optimizer", "adam", ("sgd", "adam")) == "adam"
    with pytest.raises(ParameterError) as e:
        params.choice("optimizer", "lion", iter(("sgd", "adam")))
    assert str(e.value) == "optimizer must be one of sgd, adam; got 'lion'"


def test_power_of_two_against_bit_counts():
    for n in range(1, 70):
        if bin(n).count("1") == 1:
            assert params.power_of_two("K", n) == n
        else:
            with pytest.raises(ParameterError, match="K must be a power of two"):
                params.power_of_two("K", n)
    assert params.power_of_two("K", 2, minimum=2, maximum=16) == 2
    assert params.power_of_two("K", 16, minimum=2, maximum=16) == 16
    for bad in (1, 32):
        with pytest.raises(ParameterError, match=r"K must be an integer in \[2, 16\]"):
            params.power_of_two("K", bad, minimum=2, maximum=16)
