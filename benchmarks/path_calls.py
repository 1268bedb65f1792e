"""How many calls each of the three jobs takes to go down the layers (issue 29 item 2).

A ``sys.setprofile`` hook records every call from one package module into another (the package:
``implicitbias`` with ``theory``, ``numerics`` and ``validation`` mapped into it).  Each module has
the layer of ``../shared/ARCHITECTURE.md`` (0 the front: api, cli, commands, session; 1 report;
2 claims; 3 plumbing: store, executors, figures, fingerprint; 4 validation; 5 numerics; 6 theory).
Per job it prints the distinct cross-module call edges (caller function -> callee function), how
many start in the front or the report (the commands' and the API's own path), how many of them climb back up a layer (callee above caller: callbacks included, e.g. ``Store.map``
calling a claim's cell function), and the distinct functions of ``validation/analysis.py``
entered.  Calls inside one module are not counted: they do not go down a layer.

Jobs (cheap stand-ins for the structure, not the science), ``SLUG`` a theorem check of seconds:
``ib.check(SLUG)``; ``verify`` with every other claim taken out of it (``Claim.verify``), and
``verify --only SLUG``;
``ib.phase_diagram(K=[2, 4], L=[1, 2])``; ``implicitbias sweep tiny`` then ``implicitbias analyse
tiny`` (CLI), and ``ib.analyse(ib.sweep("tiny"))`` (API).  Every job runs in a fresh temporary
store.

    python benchmarks/path_calls.py [--jobs check,verify,verify-only,phase,sweep-analyse,api-sweep-analyse]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

import implicitbias

SLUG = "hadamard-diagonalisation-s-4"  # a theorem check of `verify`, seconds on a CPU
ROOT = Path(implicitbias.__file__).resolve().parent.parent
LAYERS = [("implicitbias.report", 1), ("implicitbias.claims", 2), ("implicitbias.store", 3),
          ("implicitbias.executors", 3), ("implicitbias.figures", 3), ("implicitbias.fingerprint", 3),
          ("implicitbias.plain", 3), ("implicitbias.validation", 4), ("implicitbias.numerics", 5),
          ("implicitbias.theory", 6), ("implicitbias", 0)]


def _module(filename: str) -> str | None:
    """The package module of a source file (theory/ -> implicitbias.theory), None outside it."""
    try:
        rel = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[0] in ("theory", "numerics", "validation"):
        parts = ["implicitbias", *parts]
    if parts[0] != "implicitbias" or parts[-1] == "__main__":
        return None
    return ".".join(p for p in parts if p != "__init__")


def layer(module: str) -> int:
    return next(n for prefix, n in LAYERS if module == prefix or module.startswith(prefix + "."))


def trace(job) -> tuple[set, int]:
    """Run ``job()``; the distinct cross-module edges ((module, function) pairs) and the call count."""
    edges: set = set()
    count = [0]
    modules: dict = {}

    def where(frame):
        code = frame.f_code
        if code.co_filename not in modules:
            modules[code.co_filename] = _module(code.co_filename)
        return modules[code.co_filename], code.co_qualname

    def hook(frame, event, arg):
        if event != "call":
            return
        callee = where(frame)
        if callee[0] is None or frame.f_back is None or callee[1].startswith("<"):
            return
        caller = where(frame.f_back)
        if caller[0] is not None and caller[0] != callee[0] and not caller[1].startswith("<"):
            edges.add((caller, callee))
            count[0] += 1

    sys.setprofile(hook)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            job()
    finally:
        sys.setprofile(None)
    return edges, count[0]


def _jobs(tmp: Path) -> dict:
    import implicitbias as ib
    from implicitbias.claims import registry
    from implicitbias.cli import main

    def verify_one():
        for claim in registry().values():
            if claim.slug != SLUG:
                claim.verify = False  # the instance only: this process ends after the jobs
        main(["--store", str(tmp / "verify.sqlite"), "verify", "--no-progress"])

    return {
        "check": lambda: ib.check(SLUG, store=tmp / "check.sqlite"),
        "verify": verify_one,
        "verify-only": lambda: main(["--store", str(tmp / "only.sqlite"), "verify", "--no-progress", "--only", SLUG]),
        "phase": lambda: ib.phase_diagram(K=[2, 4], L=[1, 2], store=tmp / "phase.sqlite"),
        "sweep-analyse": lambda: (main(["--store", str(tmp / "cli.sqlite"), "sweep", "tiny", "--no-progress",
                                        "--executor", "inline"]),
                                  main(["--store", str(tmp / "cli.sqlite"), "analyse", "tiny", "--out",
                                        str(tmp / "analysis")])),
        "api-sweep-analyse": lambda: ib.analyse(ib.sweep("tiny", store=tmp / "api.sqlite"), store=tmp / "api.sqlite"),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", default="check,verify,verify-only,phase,sweep-analyse,api-sweep-analyse")
    p.add_argument("--front", action="store_true", help="also list the edges from the front and the report")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = _jobs(Path(tmp))
        for name in a.jobs.split(","):
            edges, calls = trace(jobs[name])
            climbs = sorted((a, b) for a, b in edges if layer(b[0]) < layer(a[0]))
            analysis = {b[1] for _, b in edges if b[0] == "implicitbias.validation.analysis"}
            front = sum(layer(a_[0]) <= 1 for a_, _ in edges)
            print(f"{name}: {len(edges)} distinct cross-module edges ({calls} calls), {front} of them from the front "
                  f"and the report (layers 0-1), {len(climbs)} climb a layer, {len(analysis)} functions of "
                  "validation/analysis.py entered")
            for a_, b in climbs:
                print(f"    up: {a_[0]}.{a_[1]} -> {b[0]}.{b[1]}")
            for a_, b in sorted(edges) if a.front else []:
                if layer(a_[0]) <= 1:
                    print(f"    front: {a_[0]}.{a_[1]} -> {b[0]}.{b[1]}")


if __name__ == "__main__":
    main()
