"""Fuzz of the Python API: every public callable of ``import implicitbias`` (discovered from
``implicitbias.__all__``, so a name added there is fuzzed the day it is added) with generic bad
arguments for each of its parameters (``inspect.signature``): None, strings, NaN, infinities,
negative and huge integers, numpy scalars, wrong types.  Whatever the input: the call returns or
raises ``ParameterError``, nothing else, within a time limit (an alarm, never a wall-time
assertion), and never returns a non-finite number.  Values that are nonsense for every parameter
(NaN, infinities, complex numbers) must be refused: no silent success on nonsense.  The cases the
issue measured (issue 31) are pinned one by one below, each naming its argument.

Parameters not fuzzed in an example take a cheap valid value (``BASE``), so a call that passes
validation is short; a callable without a ``BASE`` entry (a new public name) has every parameter
fuzzed.  ``check`` judges a claim for minutes: its science (``claims.evaluate``) is replaced by a
stub here, so what is fuzzed is its arguments, as ``test_cli_fuzz.py`` does for ``verify``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
import signal
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import implicitbias as ib
from implicitbias.store import Store
from implicitbias.theory.params import ParameterError


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so no error path of the package can swallow it."""


SECONDS = 60  # per call; the slowest valid call here (a first sweep or phase column) takes a few seconds

# typed results the package builds and users read by attribute (no inputs of theirs to check)
RESULTS = {"PhaseCell", "Certificate", "PhaseDiagram", "Check", "SweepResult", "Analysis", "ImportedRuns"}


def _public() -> dict:
    found = {}
    for name in ib.__all__:
        obj = getattr(ib, name)
        if not callable(obj) or name in RESULTS or (isinstance(obj, type) and issubclass(obj, BaseException)):
            continue
        found[name] = obj
    return found


PUBLIC = _public()

SPEC = {"name": "fuzz", "base": {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 1,
                                 "batch_size": 16, "sigma_w": 1.0}, "options": {"threads": 1}}
RNG = np.random.default_rng(0)
BASE = {
    "phase_diagram": {"K": 2, "L": 1},
    "MarginProblem": {"K": 2, "L": 1},
    "modified_flow": {"optimizer": "gd", "order": 0},
    "forgetting_clocks": {"optimizer": "sgd", "lr_schedule": 0.1, "batch_size": 8, "n_train": 16, "epochs": 2},
    "singular_value_ode": {"K": 2, "L": 1},
    "nc_metrics": {"features": RNG.normal(size=(6, 3)), "labels": [0, 1, 2, 0, 1, 2]},
    "check": {"slug": "theorem-3.1"},
    "sweep": {"spec": SPEC, "store": "fuzz.sqlite"},
    "analyse": {"runs": SPEC, "store": "fuzz.sqlite"},
}
# methods of a valid instance, fuzzed as the functions are
METHODS = {
    "MarginProblem.objective": (lambda: ib.MarginProblem(3, 2).objective, {"Z": np.eye(3)}),
    "MarginProblem.solve": (lambda: ib.MarginProblem(2, 1).solve, {}),
}

NONSENSE = [float("nan"), float("inf"), -float("inf"), np.float64("nan"), complex(1, 1)]
BAD = [*NONSENSE, None, "", "x", "no", -1, 0, 1.5, 10**30, -(10**30), np.int64(-3), np.int64(10**18), np.bool_(True),
       True, b"x", [], [1, 2], [[1, "a"]], {}, {"x": 1}, object(), range(2, 10**12)]


def _is_nonsense(value) -> bool:
    return any(value is v for v in NONSENSE)


def _parameters(fn) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _non_finite(obj, depth: int = 0) -> str | None:
    """Where ``obj`` (a result) holds a non-finite number: numbers, arrays, mappings, sequences and
    dataclass fields, a few levels deep; None when it holds none."""
    if depth > 5:
        return None
    if isinstance(obj, numbers.Real) and not isinstance(obj, bool):
        return None if math.isfinite(obj) else repr(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fc":
        return None if np.isfinite(obj).all() else "an array with non-finite entries"
    if isinstance(obj, Mapping):
        items = list(obj.items())[:2000]
        return next((f"{k!r}: {w}" for k, v in items if (w := _non_finite(v, depth + 1))), None)
    if isinstance(obj, (list, tuple)):
        return next((w for v in obj[:2000] if (w := _non_finite(v, depth + 1))), None)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return next((f"{f.name}: {w}" for f in dataclasses.fields(obj)
                     if (w := _non_finite(getattr(obj, f.name, None), depth + 1))), None)
    return None


def _call(fn, kwargs: dict, seconds: float = SECONDS):
    """``fn(**kwargs)`` (a context manager it returns is entered and left) under an alarm."""

    def alarm(*_):
        raise Hang(f"{fn.__qualname__}({kwargs}) ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        result = fn(**kwargs)
        if hasattr(result, "__enter__") and hasattr(result, "__exit__"):
            with result as entered:
                return entered
        return result
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


OUTCOMES: dict[str, int] = {}


@pytest.fixture(scope="module", autouse=True)
def _tally():
    """Print how the fuzzed calls ended (``pytest -s`` shows it)."""
    yield
    print(f"\nfuzzed API calls: {sum(OUTCOMES.values())}, outcomes {dict(sorted(OUTCOMES.items()))}")


@pytest.fixture
def cheap_checks(monkeypatch, tmp_path):
    """``check``'s science stubbed (its arguments are what is fuzzed); calls run in a temporary folder
    (paths among the fuzzed values create files there)."""
    import implicitbias.claims as claims

    monkeypatch.setattr(claims, "evaluate", lambda claim, ctx: [])
    monkeypatch.chdir(tmp_path)
    closed = Store(tmp_path / "closed.sqlite")
    closed.close()
    return closed


def _fuzz(name: str, fn, base: dict, closed: Store, examples: int):
    names = _parameters(fn)
    pool = st.sampled_from([*BAD, closed, ":memory:"])

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.data())
    def fuzz(data):
        fuzzed = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)) if base else names
        kwargs = {k: v for k, v in base.items() if k not in fuzzed}
        kwargs |= {k: data.draw(pool, label=k) for k in fuzzed}
        try:
            result = _call(fn, kwargs)
        except ParameterError as exc:
            OUTCOMES[f"{name}: ParameterError"] = OUTCOMES.get(f"{name}: ParameterError", 0) + 1
            assert "\n" not in str(exc), f"{name}({kwargs}): a message of several lines: {exc}"
            return
        OUTCOMES[f"{name}: returned"] = OUTCOMES.get(f"{name}: returned", 0) + 1
        nonsense = [k for k in fuzzed if _is_nonsense(kwargs[k])]
        assert not nonsense, f"{name}({kwargs}): nonsense {nonsense} accepted"
        where = _non_finite(result)
        assert where is None, f"{name}({kwargs}) returned a non-finite value ({where})"

    fuzz()


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_callable_takes_bad_arguments_with_one_parameter_error(name, cheap_checks):
    if not _parameters(PUBLIC[name]):
        pytest.skip(f"{name} takes no arguments")
    _fuzz(name, PUBLIC[name], BASE.get(name, {}), cheap_checks, examples=60 if name in BASE else 100)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods_of_public_objects_take_bad_arguments_with_one_parameter_error(name, cheap_checks):
    make, base = METHODS[name]
    _fuzz(name, make(), base, cheap_checks, examples=60)


# -- the cases the issue measured, one by one: one ParameterError naming the argument ------------

def _closed_store(tmp_path):
    store = Store(tmp_path / "closed.sqlite")
    store.close()
    return store


CASES = [
    ("K", lambda t: ib.phase_diagram(K=range(2, 10**12), L=1)),
    ("K", lambda t: ib.phase_diagram(K=np.int64(10**6), L=1)),
    ("store", lambda t: ib.phase_diagram(K=2, L=1, store=123)),
    ("store", lambda t: ib.phase_diagram(K=2, L=1, store=_closed_store(t))),
    ("executor", lambda t: ib.phase_diagram(K=2, L=1, executor="process")),
    ("progress", lambda t: ib.phase_diagram(K=2, L=1, progress="no")),
    ("spec", lambda t: ib.sweep(None)),
    ("spec", lambda t: ib.sweep([1, 2])),
    ("runs", lambda t: ib.analyse(123)),
    ("order", lambda t: ib.modified_flow("adam", order=3)),
    ("order", lambda t: ib.modified_flow("muon", order=1, dim=4)),
    ("minibatches", lambda t: ib.modified_flow("sgd", order=1, minibatches=4)),
    ("l2", lambda t: ib.modified_flow("gd", l2="no")),
    ("lr", lambda t: ib.forgetting_clocks("sgd", 1e200, 32, 1000, 10)),
    ("lr", lambda t: ib.forgetting_clocks("sgd", 1e154, 1, 1000, 10)),
    ("weight_decay", lambda t: ib.forgetting_clocks("sgd", 0.1, 32, 1000, 10, weight_decay=1e308)),
    ("drop_last", lambda t: ib.forgetting_clocks("sgd", 0.1, 32, 1000, 10, drop_last="no")),
    ("epochs", lambda t: ib.forgetting_clocks("sgd", 0.1, 1, 10**5, 10**4)),
    ("balanced", lambda t: ib.singular_value_ode(2, 1, balanced="no")),
    ("labels", lambda t: ib.nc_metrics(RNG.normal(size=(6, 3)), [0, 0, 2, 2, 3, 3])),
    ("features", lambda t: ib.nc_metrics(np.zeros((0, 3)), [])),
    ("features", lambda t: ib.nc_metrics([["a", "b"], ["c", "d"]], [0, 1])),
    ("labels", lambda t: ib.nc_metrics(RNG.normal(size=(4, 3)), [0, 1, 0, 10**9])),
    ("bias", lambda t: ib.nc_metrics(RNG.normal(size=(4, 3)), [0, 1, 0, 1], RNG.normal(size=(2, 3)), [1.0, 2.0, 3.0])),
    ("classifier", lambda t: ib.nc_metrics(RNG.normal(size=(4, 3)), [0, 1, 0, 1], RNG.normal(size=(2, 4)))),
    ("Z", lambda t: ib.MarginProblem(3, 2).objective(-np.eye(3))),
    ("Z", lambda t: ib.MarginProblem(3, 2).objective("x")),
    ("slug", lambda t: ib.check("no-such-claim")),
    ("tier", lambda t: ib.check("theorem-3.1", tier="fast")),
]


@pytest.mark.parametrize("name, call", CASES, ids=[f"{i}-{n}" for i, (n, _) in enumerate(CASES)])
def test_each_measured_case_is_one_parameter_error_naming_its_argument(name, call, tmp_path):
    with pytest.raises(ParameterError, match=rf"^{name} must") as info:
        _call(lambda: call(tmp_path), {}, seconds=30)
    assert "\n" not in str(info.value)


def test_numpy_integers_are_integers():
    """``K=np.int64(3), L=np.int32(2)`` is the cell (3, 2), computed as with Python integers."""
    numpy_cell = ib.phase_diagram(K=np.int64(3), L=np.int32(2)).cell(3, 2)
    plain = ib.phase_diagram(K=3, L=2).cell(3, 2)
    assert (numpy_cell.K, numpy_cell.L, numpy_cell.verdict, numpy_cell.value) == (plain.K, plain.L, plain.verdict,
                                                                                  plain.value)
    assert ib.MarginProblem(K=np.int64(3), L=np.int64(2)).solve().value == plain.value


@pytest.mark.parametrize("value", [True, np.bool_(True)])
def test_a_bool_that_is_a_bool_is_taken(value):
    assert ib.modified_flow("gd", 1, l2=value).terms == ib.modified_flow("gd", 1, l2=True).terms
