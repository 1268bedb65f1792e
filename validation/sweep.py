"""Sweeps over run configs from a TOML spec: validated whole, run through the store, resumable.

A spec (see ``validation/specs/*.toml``)::

    name = "default"
    description = "..."
    [base]                      # run-config entries shared by every run (validation.run.DEFAULTS)
    dataset = "digits"
    sigma_w = [0.25, 0.5, 1.0, 2.0]   # a list is a grid axis
    seed = [0, 1]
    [[grid]]                    # one block of runs: its entries override base, lists are axes
    label = "SGD, low lr"       # a name for the block (not part of the run config)
    optimizer = "sgd"
    lr = 0.01
    [options]                   # runtime options, not hashed: device, threads, channels_last, batched,
                                # max_members (runs per ensemble; default: 48 on a CPU, all on a GPU)

The runs of a block are the Cartesian product of every list-valued entry of ``base`` merged
with the block.  :func:`load_spec` expands and validates every run (unknown key or optimiser,
sigma_w <= 0, a device this machine lacks...: one ``ParameterError``) without touching data
files.  The number of runs is computed from the grids before they are expanded (at most
``MAX_RUNS``), and a spec that sets no run entry (an empty file, ``/dev/null``) is refused rather
than training the built-in defaults.  :func:`check_data` then checks what needs the data, before
anything trains and on ``--dry-run``: the files are on this machine, and everything a run checks
before it trains (``run.plan``: a batch larger than the training split or leaving a last
minibatch of one image, clocks that overflow, the step cap).  Types are strict,
as TOML writes them: a string is not a boolean (``flip = "false"`` is an error, not true), a
boolean is not a number (``epochs = true`` is an error, not 1), a float is not an integer
(``epochs = 1.0`` is an error), ``base`` and ``options`` are tables,
``grid`` a list of tables, ``data_path`` a string.  :func:`run_sweep` hands the runs to
``Store.map`` keyed by the hash of the canonical config, so rerunning a sweep skips finished
runs, a sweep killed at any moment (SIGKILL included) resumes with nothing completed lost or
repeated, and an interrupted run is left as a ``running`` (partial) record whose per-epoch rows
(stored as they happen when runs execute in this process) show how far it got.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import os
import sys
import tomllib
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from implicitbias.theory import params
from implicitbias.theory.clocks import MAX_STEPS, steps_per_epoch
from implicitbias.validation import external
from implicitbias.validation import run as run_mod

__all__ = ["Spec", "load_spec", "with_options", "check_data", "packaged_specs", "run_sweep", "sweep_status", "MAX_RUNS"]

MAX_RUNS = 100_000
MAX_SPEC_BYTES = 1 << 20  # a spec is a page of TOML; a larger file is not one
OPTION_KEYS = {"device": str, "threads": int, "channels_last": bool, "batched": bool, "compile": bool, "max_members": int}


@dataclass
class Spec:
    """An expanded sweep: its runs as (label, canonical config) pairs plus runtime options."""

    name: str
    description: str
    runs: list[tuple[str, dict]]
    options: dict = field(default_factory=dict)
    path: str | None = None

    @property
    def configs(self) -> list[dict]:
        return [c for _, c in self.runs]


def packaged_specs() -> dict[str, Path]:
    """The specs shipped with the package, by name (file stem)."""
    folder = resources.files("implicitbias.validation") / "specs"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


def _resolve(spec: str | os.PathLike) -> Path:
    path = Path(spec)
    if path.is_dir():
        raise params.ParameterError(f"spec {path} is a folder; it must be a TOML file or a packaged spec name")
    if path.exists() and not path.is_file():
        raise params.ParameterError(f"spec {path} is not a regular file (a device or pipe); it must be a TOML file")
    if path.exists() and path.stat().st_size > MAX_SPEC_BYTES:
        raise params.ParameterError(f"spec {path} must be a TOML file of at most {MAX_SPEC_BYTES} bytes, "
                                    f"got {path.stat().st_size}")
    if path.exists():
        return path
    shipped = packaged_specs()
    if str(spec) in shipped:
        return shipped[str(spec)]
    raise params.ParameterError(
        f"spec must be a TOML file or one of {', '.join(sorted(shipped))}; got {str(spec)!r}"
    )


# entry types of a run config where the default (None) does not tell
_OPTIONAL_TYPES = {"data_path": str, "data_size": int, "train_size": int, "val_size": int, "test_size": int,
                   "head_width": int, "momentum": float}
_TYPE_NAMES = {bool: "a boolean (true or false)", str: "a string", int: "an integer", float: "a number"}


def _check_types(table: Mapping, where: str) -> None:
    """Strict TOML types of the run-config entries of ``table`` (lists: of every item)."""
    for key, value in table.items():
        if key == "label":
            if not isinstance(value, str):
                raise params.ParameterError(f"spec {where} label must be a string, got {value!r}")
            continue
        if key not in run_mod.DEFAULTS:
            continue  # canonical_config names unknown keys
        want = _OPTIONAL_TYPES.get(key) or type(run_mod.DEFAULTS[key])
        for item in value if isinstance(value, list) else [value]:
            ok = {bool: isinstance(item, bool), str: isinstance(item, str), int: type(item) is int}.get(
                want, isinstance(item, (int, float)) and not isinstance(item, bool)
            )
            if not ok:
                raise params.ParameterError(f"spec entry {key} must be {_TYPE_NAMES[want]}, got {item!r}")


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise params.ParameterError(f"spec {path} is not UTF-8 text; a spec is a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise params.ParameterError(f"spec {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise params.ParameterError(f"spec {path} cannot be read ({exc.strerror})") from None


def _axes(table: Mapping) -> list[dict]:
    keys = list(table)
    values = [v if isinstance(v, list) else [v] for v in table.values()]
    for k, v in zip(keys, values):
        if not v:
            raise params.ParameterError(f"spec entry {k} must be a value or a non-empty list, got []")
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _importable_beside(path: Path, tables: list[Mapping]) -> None:
    """Put the folder of spec file ``path`` at the end of ``sys.path`` when its ``tables`` (base and
    grid blocks) name a model factory or a data loader (``validation.external``), so a module beside
    the spec is found (by worker processes too: a spawned worker starts with its parent's ``sys.path``)."""
    values = [v for t in tables for k in ("arch", "dataset") for v in _listed(t.get(k))]
    folder = str(path.resolve().parent)
    if any(external.is_reference(v) for v in values) and folder not in sys.path:
        sys.path.append(folder)


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def load_spec(spec: str | os.PathLike | Mapping, data_root: str | os.PathLike | None = None) -> Spec:
    """Parse, expand and validate a spec (a TOML path, a packaged spec name, or a parsed dict).

    Relative ``data_path`` entries are taken relative to ``data_root`` (default: the spec's
    folder).  ``arch`` and ``dataset`` may name a model factory and a data loader of your own
    (``"package.module:name"``, ``validation.external``); a spec file's folder is importable for them.  Every run is canonicalised before this returns; no data file is touched (the
    checks that need the data are :func:`check_data`'s).
    """
    path = None
    if not isinstance(spec, Mapping):
        path = _resolve(spec)
        spec = _read(path)
        data_root = data_root or path.parent
    unknown = sorted(set(spec) - {"name", "description", "base", "grid", "options"})
    if unknown:
        raise params.ParameterError(f"spec section must be one of name, description, base, grid, options; got {unknown[0]!r}")
    for key in ("name", "description"):
        if key in spec and not isinstance(spec[key], str):
            raise params.ParameterError(f"spec {key} must be a string, got {spec[key]!r}")
    for key in ("base", "options"):
        if not isinstance(spec.get(key, {}), Mapping):
            raise params.ParameterError(f"spec {key} must be a table ([{key}]), got {spec[key]!r}")
    base = dict(spec.get("base", {}))
    blocks = spec.get("grid", [{}])
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, Mapping) for b in blocks):
        raise params.ParameterError(f"spec grid must be a non-empty list of tables ([[grid]]), got {blocks!r}")
    _check_types(base, "base")
    for i, block in enumerate(blocks):
        _check_types(block, f"grid block {i + 1}")
    if path is not None:
        _importable_beside(path, [base, *blocks])
    options = _checked_options(spec.get("options", {}))

    entries = set(base).union(*(set(b) - {"label"} for b in blocks))
    if not entries:
        raise params.ParameterError(
            f"spec {path or 'given'} sets no run entries (no [base] or [[grid]] entries): it would train the built-in "
            "defaults; set at least the dataset"
        )
    size = sum(math.prod(len(v) if isinstance(v, list) else 1 for v in {**base, **b}.values()) for b in blocks)
    if size > MAX_RUNS:
        raise params.ParameterError(f"spec must expand to at most {MAX_RUNS} runs, its grids have {size:.3g}")
    runs: list[tuple[str, dict]] = []
    seen: set[str] = set()
    for i, block in enumerate(blocks):
        block = dict(block)
        label = str(block.pop("label", f"block {i + 1}"))
        for raw in _axes({**base, **block}):
            if raw.get("data_path") is not None and data_root is not None:
                raw["data_path"] = str(Path(data_root, raw["data_path"]).expanduser())
            config = run_mod.canonical_config(raw)
            key = json.dumps(config, sort_keys=True)
            if key not in seen:
                seen.add(key)
                runs.append((label, config))
    return Spec(str(spec.get("name", path.stem if path else "sweep")), str(spec.get("description", "")), runs, options,
                None if path is None else str(path))


def _checked_options(options: Mapping) -> dict:
    """Runtime options (``OPTION_KEYS``), each checked: its type, threads and max_members in range, a
    device this machine has."""
    for k, v in options.items():
        if k not in OPTION_KEYS:
            raise params.ParameterError(f"spec option must be one of {', '.join(OPTION_KEYS)}; got {k!r}")
        if not isinstance(v, OPTION_KEYS[k]) or (OPTION_KEYS[k] is int and isinstance(v, bool)):
            raise params.ParameterError(f"spec option {k} must be {_TYPE_NAMES[OPTION_KEYS[k]]}, got {v!r}")
    if "threads" in options:
        params.integer("threads", options["threads"], minimum=1, maximum=1024)
    if "max_members" in options:
        params.integer("max_members", options["max_members"], minimum=1, maximum=MAX_RUNS)
    if "device" in options:
        run_mod.resolve_device(options["device"])
    return dict(options)


def with_options(spec: Spec, options: Mapping) -> Spec:
    """``spec`` with the runtime ``options`` (``OPTION_KEYS``: ``implicitbias sweep --threads``,
    ``--device``, ``--batched``) over its own, checked as a spec's own are."""
    return dataclasses.replace(spec, options={**spec.options, **_checked_options(options)})


def check_data(spec: Spec) -> Spec:
    """Check what ``spec``'s runs need of their data, before anything trains: the files are on
    this machine (``DataUnavailable`` says where they were looked for and how to get them), and
    what each run checks before it trains (``run.plan``, once per recipe) and the step cap hold
    (``ParameterError``); a model factory of the user's builds a model that keeps its contract
    (``validation.external.build_model``, once per factory, width and data set).  Returns ``spec``."""
    run_mod.require_data(spec.configs)
    data = {key: run_mod.dataset_for(c) for key, c in {_data_key(c): c for c in spec.configs}.items()}
    planned = set()
    for config in spec.configs:
        n = len(data[_data_key(config)].y_train)
        model = (config["arch"], config["width"], _data_key(config))
        if external.is_reference(config["arch"]) and model not in planned:
            planned.add(model)
            d = data[_data_key(config)]
            external.build_model(config["arch"], d.shape, d.num_classes, width=config["width"], seed=config["seed"])
        recipe = (_data_key(config), *(config[k] for k in _RECIPE))
        if recipe in planned:
            continue
        planned.add(recipe)
        steps = steps_per_epoch(n, min(config["batch_size"], n)) * config["epochs"]
        if steps > MAX_STEPS:
            raise params.ParameterError(f"epochs must give at most {MAX_STEPS:g} steps per run, got {steps}")
        run_mod.plan(config, data[_data_key(config)])
    return spec


_RECIPE = ("dataset", "optimizer", "lr", "schedule", "batch_size", "epochs", "weight_decay")  # what run_mod.plan reads


def _data_key(c: Mapping) -> tuple:
    return tuple(c[k] for k in ("dataset", "data_path", "data_seed", "data_size", "train_size", "val_size", "test_size"))


def sweep_status(spec: Spec, store) -> dict[str, int]:
    """How many runs of the spec are ``done``, ``partial`` (started, interrupted) or ``missing``."""
    counts = {"done": 0, "partial": 0, "missing": 0}
    code = run_mod.run_codes(store)
    for config in spec.configs:
        status = store.status(run_mod.KIND, config, code=code(config))
        counts["done" if status == "done" else "partial" if status == "running" else "missing"] += 1
    return counts


def _store_epochs(store, config, epoch, row):
    store.put_epoch(run_mod.KIND, config, epoch, row)


def run_sweep(spec: Spec, store, *, executor: Executor | None = None, progress: bool = True) -> list[dict]:
    """Run every missing run of ``spec`` through ``store.map`` and return all records, in spec order.

    In-process (``executor`` None) each run's epoch rows go to the store as they happen.  With
    ``options.batched`` the runs that can share a step train together as one vectorised model
    (``implicitbias.validation.batched``: every sigma_w x seed x optimiser setting of the same data,
    network, batch size and horizon is one ensemble), the ensemble is the unit of caching and
    resumption, and each member is stored as an ordinary run record.
    """
    options = {k: v for k, v in spec.options.items() if k != "batched"}
    run_mod.resolve_device(options.get("device"))  # a bad device fails before any run starts
    if spec.options.get("batched"):
        from implicitbias.validation import batched

        return batched.run_groups(spec, store, executor=executor, progress=progress, options=options)
    if executor is None:
        def fn(config):
            return run_mod.execute(config, options=options, on_epoch=functools.partial(_store_epochs, store, config))
    else:
        fn = functools.partial(run_mod.execute, options=options)
    return store.map(run_mod.KIND, fn, spec.configs, executor=executor, progress=progress, desc=f"sweep {spec.name}",
                     code=run_mod.run_codes(store))
