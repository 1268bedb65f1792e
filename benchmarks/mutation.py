"""Mutation testing of theory/ and numerics/, each source module against its own test modules.

    python benchmarks/mutation.py theory/nc_stability.py numerics/metrics/rank.py [--jobs 2]
    python benchmarks/mutation.py --all            # every module of MODULE_TESTS
    python benchmarks/mutation.py numerics/maxmargin/solver.py --tests tests/test_margin_solver.py
    python benchmarks/mutation.py --claims         # every module of CLAIMS_TESTS, verdict operators

Prints one row per module (mutants, killed, timed out, survived, not covered, score, seconds) and
writes every surviving mutant (line, what changed) to ``benchmarks/mutation/<module>.json``.

Why a runner here rather than mutmut or cosmic-ray (both read): the science folders are mapped
into ``implicitbias`` by setuptools' package-dir, which mutmut 3's copied ``mutants/`` tree cannot
shadow, and cosmic-ray rewrites the file on disk and starts a fresh interpreter per mutant (torch,
scipy and sympy imports cost seconds each, thousands of times).  This runner keeps what those tools
do and adds only the plumbing they lack for this layout:

1. baseline: coverage.py with ``dynamic_context = test_function`` runs the module's test modules
   once and maps every line of the source to the tests that execute it (mutmut's idea: run only
   the covering tests);
2. mutants: ``ast`` nodes of the module changed one at a time with mutmut-like operators (one
   alternative each: + <-> -, * <-> /, ** -> *, // -> /, comparisons to their neighbour or
   negation, and <-> or, dropped not / unary minus, numbers n -> n + 1, True <-> False); strings,
   annotations and lines marked ``pragma: no mutate`` are left alone;
3. each mutant runs in a forked child of a parent that imported the heavy libraries once: an
   import hook serves the mutated code object for the module, then ``pytest.main`` runs the
   covering tests with ``-x``; a failing run or one past ``timeout_factor`` x the baseline kills
   the mutant, a passing run is a survivor, a mutated line no test executes is "not covered".

The claims layer (``--claims``, or any module under ``implicitbias/claims/``; issue 29 item 7) is
mutated where its verdicts are decided: a claim module's ``judge`` (or ``rule``) and every function
or method of the module they name, transitively, its ``thresholds`` and its module-level
``Threshold`` constants; a shared rules module, the functions named in ``RULES_SCOPE``.  Never
mutated there: text (strings, f-strings: they word a verdict, they do not decide it), indices and
slices, arithmetic (it computes what a rule compares; theory/ and numerics/ are where it is
mutated).  The operators are the ones that weaken a verdict rule (``verdict_mutants``): an ordering
comparison to its neighbour (< <-> <=, > <-> >=) and reversed (< <-> >, <= <-> >=), == <-> !=,
in <-> not in, is <-> is not; and <-> or, and each operand of an and / or dropped; an ``if`` /
conditional-expression test negated; a number -20% and +20% (an integer rounded, at least one step;
0 to -1 and +1), the thresholds' values included; True <-> False; a dropped ``not`` or unary minus.
Each claim module runs against its own test module, a shared rules module against the test modules
of the claims that judge through it (``CLAIMS_TESTS``), and of those, as everywhere, only the tests
that execute the mutated line.

Score = (killed + timed out) / mutants.  L counts weight matrices wherever the science does.
Run it with ``nice -n 10`` on a shared machine and quote the load average with the timings.
"""

from __future__ import annotations

import argparse
import ast
import importlib.abc
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {"theory": "implicitbias.theory", "numerics": "implicitbias.numerics", "validation": "implicitbias.validation"}

# source module -> the test modules that test it (the scope of its mutants)
MODULE_TESTS = {
    "theory/clocks.py": ["test_clock_calculator.py"],
    "theory/codes.py": ["test_polytope_catalogue.py", "test_codes.py"],
    "theory/hadamard.py": ["test_hadamard.py", "test_hadamard_diagonalisation.py"],
    "theory/implicit_regularisers.py": ["test_modified_flow_gd.py", "test_modified_flow_momentum.py",
                                        "test_modified_flow_sgd.py", "test_modified_flow_adam.py"],
    "theory/linear_regime.py": ["test_theorem_4_4.py"],
    "theory/modified_flow.py": ["test_modified_flow_gd.py", "test_modified_flow_momentum.py",
                                "test_modified_flow_sgd.py", "test_modified_flow_adam.py", "test_order_of_accuracy.py"],
    "theory/nc_stability.py": ["test_theorem_4_3.py"],
    "theory/polytopes.py": ["test_polytope_catalogue.py", "test_codes.py"],
    "theory/params.py": ["test_params.py", "test_nc_metrics.py", "test_spectral_ode.py", "test_optimizers.py", "test_schedules.py"],
    "theory/radial.py": ["test_radial_laws.py"],
    "theory/representation_cost.py": ["test_representation_cost.py"],
    "theory/schedules.py": ["test_schedules.py"],
    "theory/spectral_ode.py": ["test_spectral_ode.py", "test_singular_value_ode.py"],
    "theory/three_classes.py": ["test_three_classes.py"],
    "theory/updates.py": ["test_modified_flow_gd.py", "test_modified_flow_momentum.py", "test_modified_flow_sgd.py",
                          "test_modified_flow_adam.py", "test_order_of_accuracy.py"],
    "numerics/ufm/deep_ufm.py": ["test_deep_ufm.py", "test_spectral_ode.py", "test_singular_value_ode.py", "test_hadamard.py",
                                 "test_theorem_4_5.py"],
    "numerics/ufm/etf_alignment.py": ["test_theorem_4_5.py"],
    "numerics/ufm/nc_ray.py": ["test_theorem_4_3.py"],
    "numerics/ufm/spectral_agreement.py": ["test_singular_value_ode.py", "test_spectral_ode.py"],
    "numerics/ufm/spectral_flow.py": ["test_spectral_ode.py", "test_kl_to_nc.py", "test_theorem_4_4.py", "test_basin.py"],
    "numerics/metrics/forgetting_metrics.py": ["test_forgetting_metrics.py", "test_toy_forgetting.py", "test_validation_analysis.py"],
    "numerics/metrics/resampling.py": ["test_resampling.py", "test_resampling_references.py"],
    "numerics/metrics/memory_stats.py": ["test_memory_stats.py", "test_resampling.py", "test_resampling_references.py"],
    "numerics/metrics/radial_memory.py": ["test_radial_memory.py"],
    "numerics/metrics/clock_direction.py": ["test_clock_direction.py", "test_c7_clocks_collapse_the_spreads.py"],
    "numerics/metrics/kl_to_nc.py": ["test_kl_to_nc.py"],
    "numerics/metrics/nc_metrics.py": ["test_nc_metrics.py"],
    "numerics/metrics/rank.py": ["test_effective_rank.py"],
    "numerics/maxmargin/codes.py": ["test_code_factors.py", "test_codes.py"],
    "numerics/maxmargin/gd_census.py": ["test_gd_census.py"],
    "numerics/maxmargin/gd_crosscheck.py": ["test_gd_crosscheck.py"],
    "numerics/maxmargin/low_rank.py": ["test_low_rank.py"],
    "numerics/maxmargin/lower_bounds.py": ["test_lower_bound_formulas.py", "test_lower_bounds.py"],
    "numerics/maxmargin/margin.py": ["test_margin.py", "test_codes.py", "test_margin_solver.py"],
    "numerics/maxmargin/naming.py": ["test_naming.py", "test_codes.py"],
    "numerics/maxmargin/phase.py": ["test_phase_parts.py", "test_three_classes.py", "test_theorem_3_1.py",
                                    "test_low_rank.py"],
    "numerics/maxmargin/polytopes.py": ["test_codes.py"],
    "numerics/maxmargin/search.py": ["test_search.py", "test_phase_parts.py"],
    "numerics/maxmargin/solver.py": ["test_margin_directions.py", "test_margin_solver.py"],
    "numerics/maxmargin/spherical.py": ["test_spherical.py", "test_codes.py", "test_lower_bounds.py", "test_margin_solver.py"],
    "numerics/maxmargin/symmetry.py": ["test_symmetry.py", "test_codes.py"],
    "numerics/optim/optimizers.py": ["test_optimizers.py"],
    "numerics/optim/order_of_accuracy.py": ["test_order_of_accuracy.py"],
    "numerics/torch_threads.py": ["test_toy_forgetting.py"],
}

# the claims layer (issue 29 item 7): a claim module -> its own test module; a shared rules module ->
# the test modules of the claims that judge through it
_C = "implicitbias/claims/"
CLAIMS_TESTS = {
    **{f"{_C}depth/{name}.py": [f"test_{name}.py"] for name in (
        "basin", "hadamard_diagonalisation", "head_rank_accuracy", "head_rank_depth", "head_rank_small_init",
        "head_rank_width", "kl_to_nc", "nc_shallow", "section_5_deep_ufm", "singular_value_ode", "theorem_3_1",
        "theorem_3_2", "theorem_4_3", "theorem_4_4", "theorem_4_5")},
    f"{_C}depth/head_rank.py": ["test_head_rank.py", "test_head_rank_accuracy.py", "test_head_rank_depth.py",
                                "test_head_rank_small_init.py", "test_head_rank_width.py"],
    **{f"{_C}forgetting/{name}.py": [f"test_{name}.py"] for name in (
        "bea_adam", "bea_gd", "bea_heavy_ball", "bea_orders", "bea_sgd", "c1_low_lr_sgd_remembers",
        "c2_longer_training_keeps_the_spread", "c3_adaptive_methods_forget", "c4_sgd_forgets_with_larger_lr_or_l2",
        "c5_larger_batches_keep_more_memory", "c6_deep_nets_fail_to_interpolate", "c7_clocks_collapse_the_spreads")},
    # a shared rules module: the test modules of the claims that judge through it, the cheapest that drive
    # its branches (C1's 6 s rather than C3's and C4's 1-2 min, except for the rules only C3 and C4 use)
    f"{_C}rules.py": ["test_claims_rules.py", "test_head_rank_depth.py", "test_head_rank_width.py",
                      "test_head_rank_small_init.py", "test_bea_gd.py", "test_bea_sgd.py", "test_bea_heavy_ball.py",
                      "test_basin.py"],
    f"{_C}forgetting/memory_rules.py": ["test_memory_rules.py"],  # each condition driven there (C1's: 6-min baseline)
    f"{_C}forgetting/forgetting_claim.py": ["test_c3_adaptive_methods_forget.py",
                                            "test_c4_sgd_forgets_with_larger_lr_or_l2.py"],
    f"{_C}forgetting/regime.py": ["test_regime.py"],  # its gate on synthetic radial memories (C3's and C4's take minutes)
    f"{_C}forgetting/group_claim.py": ["test_c1_low_lr_sgd_remembers.py"],
    f"{_C}forgetting/wording.py": ["test_c1_low_lr_sgd_remembers.py", "test_c2_longer_training_keeps_the_spread.py"],
}

# the functions of a shared rules module that decide verdicts (its wording and simulations left out)
RULES_SCOPE = {
    f"{_C}rules.py": ("trend", "trend_verdict", "fisher_smaller", "same_expression"),
    f"{_C}forgetting/memory_rules.py": ("side", "_sides", "combine", "_worlds", "claim_oc", "seeds_needed", "_part",
                                        "_simulated", "decide", "primary", "wrong"),
    f"{_C}forgetting/forgetting_claim.py": ("judge", "parts", "bound_of"),
    f"{_C}forgetting/regime.py": ("regime_misses", "regime_premise", "_x_hi", "_slope"),
    f"{_C}forgetting/group_claim.py": ("halves", "stable_evidences"),
    f"{_C}forgetting/wording.py": ("memory_verdict", "stability"),
}
ROOTS = ("judge", "rule")  # where a claim module's verdict is decided

SWAP = {  # one alternative per operator, as mutmut
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Pow: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.And: ast.Or, ast.Or: ast.And,
}


FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}  # an ordering the other way round


@dataclass
class Mutant:
    index: int  # position of the node in ast.walk order
    slot: int  # which operator of a Compare, which operand of a BoolOp, else 0
    kind: str
    line: int
    text: str
    new: str | int | float | None = None  # the verdict operators' replacement: an ast operator's name or a number


class _Replace(ast.NodeTransformer):
    """Replaces one node (``target``) by ``by(target)``, its children visited first."""

    def __init__(self, target, by):
        self.target, self.by = target, by

    def generic_visit(self, node):
        super().generic_visit(node)
        return self.by(node) if node is self.target else node


def _skipped_ids(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings' and annotations' subtrees."""
    skip = set()
    for node in ast.walk(tree):
        for attr in ("annotation", "returns"):
            sub = getattr(node, attr, None)
            if sub is not None:
                skip |= {id(n) for n in ast.walk(sub)}
    return skip


def _subtree(node) -> set[int]:
    return {id(n) for n in ast.walk(node)}


def verdict_scope(tree: ast.Module, names: tuple[str, ...] | None = None) -> set[int]:
    """ids of the nodes of a claims module that decide verdicts: the functions ``names`` (None: the
    ``ROOTS`` defined here and every function or method of the module they name, transitively), the
    ``thresholds`` of its classes and its module-level assignments that build a ``Threshold``;
    f-strings left out (they word the verdict)."""
    defs: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.setdefault(node.name, []).append(node)
    chosen = set(names or ())
    if names is None:
        todo = [n for n in ROOTS if n in defs]
        while todo:
            name = todo.pop()
            if name in chosen:
                continue
            chosen.add(name)
            named = {n.id if isinstance(n, ast.Name) else n.attr for fn in defs[name] for n in ast.walk(fn)
                     if isinstance(n, ast.Name | ast.Attribute)}
            todo += sorted(named & set(defs))
    scope = set().union(*(_subtree(fn) for name in chosen for fn in defs.get(name, ())))
    bodies = [tree.body, *(c.body for c in tree.body if isinstance(c, ast.ClassDef))]
    for stmt in (s for body in bodies for s in body if isinstance(s, ast.Assign | ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        builds = any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "Threshold" for n in ast.walk(stmt))
        if builds or any(getattr(t, "id", None) == "thresholds" for t in targets):
            scope |= _subtree(stmt)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            scope -= _subtree(node)
        elif isinstance(node, ast.Subscript):  # an index or a slice picks data, it is no bound
            scope -= _subtree(node.slice)
    return scope


def _moved(value: int | float) -> list[int | float]:
    """A number -20% and +20% (an integer rounded, at least one step away; 0 to -1 and +1)."""
    if value == 0:
        return [type(value)(-1), type(value)(1)]
    out = []
    for factor, step in ((0.8, -1), (1.2, 1)):
        moved = value * factor
        if isinstance(value, int):
            moved = round(moved) if round(moved) != value else value + step
        out.append(moved)
    return out


def verdict_mutants(node: ast.AST, i: int, text: str) -> list[Mutant]:
    """The verdict operators (module docstring) at one node."""
    line = node.lineno
    if isinstance(node, ast.Compare):
        out = []
        for k, op in enumerate(node.ops):
            others = [SWAP[type(op)], FLIP[type(op)]] if type(op) in FLIP else [SWAP.get(type(op))]
            out += [Mutant(i, k, "compare", line, f"{type(op).__name__} -> {o.__name__}: {text}", o.__name__)
                    for o in others if o is not None]
        return out
    if isinstance(node, ast.BoolOp):
        name = type(node.op).__name__
        return [Mutant(i, 0, "boolop", line, f"{name} -> {SWAP[type(node.op)].__name__}: {text}"),
                *(Mutant(i, k, "drop-operand", line, f"drop operand {k} of {name}: {text}")
                  for k in range(len(node.values)))]
    if isinstance(node, ast.If | ast.IfExp | ast.While):
        test = node.test
        same = (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)) or (
            isinstance(test, ast.Compare) and len(test.ops) == 1)  # already a dropped not / a compare's negation
        return [] if same else [Mutant(i, 0, "negate", line, f"negate the test: {text}")]
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return [Mutant(i, 0, "number", line, f"{node.value!r} -> {new:.6g}: {text}", new) for new in _moved(node.value)]
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        return [Mutant(i, 0, "bool", line, f"{node.value} -> {not node.value}: {text}")]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
        return [Mutant(i, 0, "drop-unary", line, f"drop {type(node.op).__name__}: {text}")]
    return []


def mutants_of(source: str, scope: tuple[str, ...] | bool = False) -> list[Mutant]:
    """Every mutant of ``source``: theory / numerics operators over the whole module, or with ``scope``
    (True: a claim module's ``verdict_scope``; names: those functions) the verdict operators there."""
    tree = ast.parse(source)
    lines = source.splitlines()
    skip = _skipped_ids(tree)
    inside = None if scope is False else verdict_scope(tree, None if scope is True else scope)
    out = []
    for i, node in enumerate(ast.walk(tree)):
        if id(node) in skip or not hasattr(node, "lineno") or "pragma: no mutate" in lines[node.lineno - 1]:
            continue
        if inside is not None and id(node) not in inside:
            continue
        text = lines[node.lineno - 1].strip()
        if inside is not None:
            if not isinstance(node, ast.BinOp | ast.AugAssign):  # arithmetic computes what a rule compares
                out += verdict_mutants(node, i, text)
            continue
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in SWAP:
            out.append(Mutant(i, 0, "binop", node.lineno, f"{type(node.op).__name__} -> {SWAP[type(node.op)].__name__}: {text}"))
        elif isinstance(node, ast.Compare):
            out += [Mutant(i, k, "compare", node.lineno, f"{type(op).__name__} -> {SWAP[type(op)].__name__}: {text}")
                    for k, op in enumerate(node.ops) if type(op) in SWAP]
        elif isinstance(node, ast.BoolOp):
            out.append(Mutant(i, 0, "boolop", node.lineno, f"{type(node.op).__name__} -> {SWAP[type(node.op)].__name__}: {text}"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            out.append(Mutant(i, 0, "drop-unary", node.lineno, f"drop {type(node.op).__name__}: {text}"))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            out.append(Mutant(i, 0, "number", node.lineno, f"{node.value!r} -> {node.value + 1!r}: {text}"))
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            out.append(Mutant(i, 0, "bool", node.lineno, f"{node.value} -> {not node.value}: {text}"))
    return out


def mutated_code(source: str, path: Path, mutant: Mutant):
    tree = ast.parse(source)
    node = list(ast.walk(tree))[mutant.index]
    if mutant.kind in ("binop", "boolop"):
        node.op = SWAP[type(node.op)]()
    elif mutant.kind == "compare":
        node.ops[mutant.slot] = getattr(ast, mutant.new)() if mutant.new else SWAP[type(node.ops[mutant.slot])]()
    elif mutant.kind == "drop-unary":
        tree = _Replace(node, lambda n: n.operand).visit(tree)
    elif mutant.kind == "drop-operand":
        kept = node.values[:mutant.slot] + node.values[mutant.slot + 1:]
        tree = _Replace(node, lambda n: kept[0] if len(kept) == 1 else ast.BoolOp(n.op, kept)).visit(tree)
    elif mutant.kind == "negate":
        node.test = ast.UnaryOp(ast.Not(), node.test)
    elif mutant.kind == "number":
        node.value = node.value + 1 if mutant.new is None else mutant.new
    elif mutant.kind == "bool":
        node.value = not node.value
    ast.fix_missing_locations(tree)
    return compile(tree, str(path), "exec")


def module_name(path: Path) -> str:
    rel = path.resolve().relative_to(ROOT).with_suffix("")
    head, *rest = rel.parts
    return ".".join([PACKAGE_DIRS.get(head, head), *rest])


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the mutated code object for one module name; every other import is untouched."""

    def __init__(self, name: str, path: Path, code):
        self.name, self.path, self.code = name, path, code

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)


def coverage_map(path: Path, tests: list[str]) -> tuple[dict[int, set[str]], float]:
    """{line: test node ids executing it} from one coverage.py run of ``tests``, and its wall time."""
    from coverage import CoverageData

    with tempfile.TemporaryDirectory() as tmp:
        rc = Path(tmp) / "rc"
        rc.write_text(f"[run]\ndynamic_context = test_function\ninclude = {path}\ndata_file = {tmp}/data\n")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", "-q", "-x",
                               "-p", "no:cacheprovider", *tests], cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"baseline failed for {path}:\n{proc.stdout[-3000:]}")
        data = CoverageData(f"{tmp}/data")
        data.read()
        by_line = data.contexts_by_lineno(str(path))
    nodes = {}
    for line, contexts in by_line.items():
        ids = set()
        for ctx in contexts:
            module, _, func = ctx.rpartition(".")
            file = f"tests/{module.split('.')[-1]}.py"
            if ctx and (ROOT / file).exists():  # "test_x.test_fn" -> tests/test_x.py::test_fn, every parametrisation
                ids.add(f"{file}::{func}")
            else:  # import time (no context) or a test run through hypothesis' engine: all the module's tests
                ids |= set(tests)
        nodes[line] = ids
    return nodes, seconds


def _run_child(name: str, path: Path, code, tests: list[str]) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.meta_path.insert(0, _MutantFinder(name, path, code))
    import pytest
    from hypothesis import Phase, settings

    # a failing property is a kill: shrinking its example only spends the timeout (it made kills
    # read as timeouts under load); no example database, the tree stays clean
    settings.register_profile("mutation", phases=(Phase.explicit, Phase.reuse, Phase.generate), database=None)
    settings.load_profile("mutation")

    rc = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", *tests])
    os._exit(int(rc))


def run_module(rel: str, tests: list[str], jobs: int, timeout_factor: float, max_mutants: int | None = None,
               previous: dict | None = None) -> dict:
    """Mutants of ``rel`` against ``tests``; ``max_mutants``: a seeded uniform sample of that many;
    ``previous``: an earlier result of this module, whose survivors alone are run again (the
    counts then add the earlier kills, so the score covers the earlier run's mutants)."""
    import random

    path = (ROOT / rel).resolve()
    source = path.read_text()
    name = module_name(path)
    every = mutants_of(source, RULES_SCOPE.get(rel, True) if rel.startswith(_C) else False)
    # a module without mutants (a claim whose rule lives in a shared module) costs no baseline
    covered, baseline = coverage_map(path, [f"tests/{t}" if "/" not in t else t for t in tests]) if every else ({}, 0.0)
    mutants = every
    if max_mutants is not None and len(every) > max_mutants:
        mutants = sorted(random.Random(0).sample(every, max_mutants), key=lambda m: m.index)
    if previous is not None:  # every mutant sharing (line, change) with an earlier survivor runs again
        again = {(r["line"], r["mutation"]) for r in previous["survivors"]}
        mutants = [m for m in mutants if (m.line, m.text) in again]
    timeout = max(10.0, timeout_factor * baseline)
    results = []
    running: dict[int, tuple[Mutant, float]] = {}
    todo = list(mutants)
    start = time.perf_counter()
    while todo or running:
        while todo and len(running) < jobs:
            m = todo.pop(0)
            if m.line not in covered:
                results.append((m, "not covered"))
                continue
            code = mutated_code(source, path, m)
            pid = os.fork()
            if pid == 0:
                _run_child(name, path, code, sorted(covered[m.line]))
            running[pid] = (m, time.perf_counter())
        if not running:
            continue
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.02)
            for p, (m, t0) in list(running.items()):
                if time.perf_counter() - t0 > timeout:
                    os.kill(p, signal.SIGKILL)
                    os.waitpid(p, 0)
                    results.append((m, "timed out"))
                    del running[p]
            continue
        m, _ = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        results.append((m, "survived" if code == 0 else "killed"))
    counts = {k: sum(1 for _, s in results if s == k) for k in ("killed", "timed out", "survived", "not covered")}
    total = len(results)
    if previous is not None:  # tests were only added, so earlier kills stand; timeouts count as kills here
        total = previous["mutants"]
        counts["timed out"] = 0
        counts["killed"] = total - counts["survived"] - counts["not covered"]
    score = (counts["killed"] + counts["timed out"]) / max(1, total)
    return {"module": rel, "tests": tests, "mutants": total, "of": len(every), **counts, "score": score,
            "seconds": time.perf_counter() - start, "baseline_seconds": baseline,
            "survivors": [{"line": m.line, "index": m.index, "slot": m.slot, "mutation": m.text, "status": s} for m, s in
                          sorted(results, key=lambda r: r[0].line) if s in ("survived", "not covered")],
            "timed_out": [{"line": m.line, "mutation": m.text} for m, s in sorted(results, key=lambda r: r[0].line)
                          if s == "timed out"]}


def _preload(claims_only: bool = False) -> None:
    """Import the heavy libraries once in the parent, so every forked child starts warm (with
    ``claims_only``, the layers below the claims too: no mutated module is among them)."""
    import hypothesis  # noqa: F401
    import matplotlib

    matplotlib.use("Agg")
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import scipy.integrate  # noqa: F401
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401
    import sympy  # noqa: F401
    import torch

    torch.set_num_threads(1)
    if claims_only:
        import implicitbias.figures  # noqa: F401
        import implicitbias.validation.analysis  # noqa: F401


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("modules", nargs="*", help="source files relative to the repository root")
    p.add_argument("--all", action="store_true", help="every module of MODULE_TESTS")
    p.add_argument("--claims", action="store_true", help="every module of CLAIMS_TESTS (the claims layer)")
    p.add_argument("--tests", nargs="*", help="test files for a module not in MODULE_TESTS or CLAIMS_TESTS")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout-factor", type=float, default=3.0)
    p.add_argument("--max-mutants", type=int, default=None, help="a seeded sample of at most this many per module")
    p.add_argument("--again", action="store_true", help="rerun only the survivors recorded in --out for each module")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "mutation"))
    args = p.parse_args(argv)
    modules = [*(MODULE_TESTS if args.all else ()), *(CLAIMS_TESTS if args.claims else ()), *args.modules]
    if not modules:
        p.error("name at least one module, or --all, or --claims")
    os.environ.setdefault("IMPLICITBIAS_STORE", str(Path(tempfile.mkdtemp()) / "store.sqlite"))
    _preload(claims_only=all(rel.startswith(_C) for rel in modules))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; jobs {args.jobs}", flush=True)
    print("| module | mutants | killed | timed out | survived | not covered | score | seconds |\n|---|---|---|---|---|---|---|---|",
          flush=True)
    for rel in modules:
        tests = args.tests if args.tests else MODULE_TESTS.get(rel) or CLAIMS_TESTS.get(rel)
        if not tests:
            p.error(f"no test modules known for {rel}: pass --tests")
        record = out / (rel.replace("/", "_").removesuffix(".py") + ".json")
        previous = json.loads(record.read_text()) if args.again else None
        r = run_module(rel, tests, args.jobs, args.timeout_factor, args.max_mutants, previous)
        record.write_text(json.dumps(r, indent=1))
        sampled = f" (sample of {r['of']})" if r["of"] > r["mutants"] else ""
        print(f"| {rel} | {r['mutants']}{sampled} | {r['killed']} | {r['timed out']} | {r['survived']} | {r['not covered']} | "
              f"{r['score']:.1%} | {r['seconds']:.0f} |", flush=True)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
