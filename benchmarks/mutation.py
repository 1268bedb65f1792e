"""Mutation testing of theory/ and numerics/, each source module against its own test modules.

    python benchmarks/mutation.py theory/nc_stability.py numerics/metrics/rank.py [--jobs 2]
    python benchmarks/mutation.py --all            # every module of MODULE_TESTS
    python benchmarks/mutation.py numerics/maxmargin/solver.py --tests tests/test_margin_solver.py

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
    "numerics/maxmargin/cross_seed.py": ["test_cross_seed.py"],
    "numerics/maxmargin/gd_census.py": ["test_gd_census.py"],
    "numerics/maxmargin/gd_crosscheck.py": ["test_gd_crosscheck.py"],
    "numerics/maxmargin/lower_bounds.py": ["test_lower_bound_formulas.py", "test_lower_bounds.py"],
    "numerics/maxmargin/margin.py": ["test_margin.py", "test_codes.py", "test_margin_solver.py"],
    "numerics/maxmargin/naming.py": ["test_naming.py", "test_codes.py"],
    "numerics/maxmargin/phase.py": ["test_phase_parts.py", "test_three_classes.py", "test_theorem_3_1.py",
                                    "test_cross_seed.py"],
    "numerics/maxmargin/polytopes.py": ["test_codes.py"],
    "numerics/maxmargin/search.py": ["test_search.py", "test_phase_parts.py"],
    "numerics/maxmargin/solver.py": ["test_margin_directions.py", "test_margin_solver.py"],
    "numerics/maxmargin/spherical.py": ["test_spherical.py", "test_codes.py", "test_lower_bounds.py", "test_margin_solver.py"],
    "numerics/maxmargin/symmetry.py": ["test_symmetry.py", "test_codes.py"],
    "numerics/optim/optimizers.py": ["test_optimizers.py"],
    "numerics/optim/order_of_accuracy.py": ["test_order_of_accuracy.py"],
    "numerics/torch_threads.py": ["test_toy_forgetting.py"],
}

SWAP = {  # one alternative per operator, as mutmut
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Pow: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.And: ast.Or, ast.Or: ast.And,
}


@dataclass
class Mutant:
    index: int  # position of the node in ast.walk order
    slot: int  # which operator of a Compare, else 0
    kind: str
    line: int
    text: str


class _DropNot(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return node.operand if node is self.target else node


def _skipped_ids(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings' and annotations' subtrees."""
    skip = set()
    for node in ast.walk(tree):
        for attr in ("annotation", "returns"):
            sub = getattr(node, attr, None)
            if sub is not None:
                skip |= {id(n) for n in ast.walk(sub)}
    return skip


def mutants_of(source: str) -> list[Mutant]:
    tree = ast.parse(source)
    lines = source.splitlines()
    skip = _skipped_ids(tree)
    out = []
    for i, node in enumerate(ast.walk(tree)):
        if id(node) in skip or not hasattr(node, "lineno") or "pragma: no mutate" in lines[node.lineno - 1]:
            continue
        text = lines[node.lineno - 1].strip()
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
        node.ops[mutant.slot] = SWAP[type(node.ops[mutant.slot])]()
    elif mutant.kind == "drop-unary":
        tree = _DropNot(node).visit(tree)
    elif mutant.kind == "number":
        node.value = node.value + 1
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
    covered, baseline = coverage_map(path, [f"tests/{t}" if "/" not in t else t for t in tests])
    every = mutants_of(source)
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


def _preload() -> None:
    """Import the heavy libraries once in the parent, so every forked child starts warm."""
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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("modules", nargs="*", help="source files relative to the repository root")
    p.add_argument("--all", action="store_true", help="every module of MODULE_TESTS")
    p.add_argument("--tests", nargs="*", help="test files for a module not in MODULE_TESTS")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout-factor", type=float, default=3.0)
    p.add_argument("--max-mutants", type=int, default=None, help="a seeded sample of at most this many per module")
    p.add_argument("--again", action="store_true", help="rerun only the survivors recorded in --out for each module")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "mutation"))
    args = p.parse_args(argv)
    modules = list(MODULE_TESTS) if args.all else args.modules
    if not modules:
        p.error("name at least one module, or --all")
    os.environ.setdefault("IMPLICITBIAS_STORE", str(Path(tempfile.mkdtemp()) / "store.sqlite"))
    _preload()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; jobs {args.jobs}", flush=True)
    print("| module | mutants | killed | timed out | survived | not covered | score | seconds |\n|---|---|---|---|---|---|---|---|",
          flush=True)
    for rel in modules:
        tests = args.tests if args.tests else MODULE_TESTS.get(rel)
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
