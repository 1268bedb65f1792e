"""Executors that run sweep cells: in-process, a local process pool, Dask distributed, or SLURM.

Every executor here is a ``concurrent.futures.Executor``, so a sweep is written once against
that interface (``Store.map``) and runs unchanged on one core, on all local cores (one worker
per GPU where GPUs exist), on a Dask cluster (``distributed.Client.get_executor``) or on a SLURM
cluster through dask-jobqueue.

No orphans: the workers of the process pool end with their client, SIGKILL of the client
included.  Each worker asks the Linux kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` through ctypes), then checks that its parent is still the client, which
closes the race of a client killed before the call.  Chosen over a watchdog thread polling the
parent pid because the kernel delivers it at once and whatever the worker is doing, even inside a
long C call that holds the GIL (a solver, a BLAS call), where a Python thread would not run;
where prctl does not exist (macOS) the watchdog thread is the fallback.  Interrupted (SIGINT,
SIGTERM, or any error), the pool's queued calls are cancelled and its workers killed at once
rather than waited for.  The multiprocessing
resource tracker then sees its pipe close and exits by itself.  Dask's LocalCluster workers
already end with their nanny, which lives in the client process (tests/test_orphans.py checks
both).  A Dask scheduler given by address is reached with a short connect timeout, so a bad or
unreachable address fails in seconds with one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor

from implicitbias.theory import params

__all__ = ["InlineExecutor", "open_executor", "check_executor", "dask_setup", "EXECUTORS"]

EXECUTORS = ("inline", "process", "dask", "slurm")
CONNECT_TIMEOUT_S = 5  # to a Dask scheduler given by address
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class InlineExecutor(Executor):
    """Runs each submitted call at once in this process (no concurrency, easiest to debug).

    Written by hand because the standard library has no synchronous ``Executor``.
    """

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the future carries the error to the caller
            future.set_exception(exc)
        return future


def check_executor(kind: str, workers: int | None = None, address: str | None = None) -> int | None:
    """Check the options of ``open_executor`` (before anything starts); return ``workers``."""
    params.choice("executor", kind, EXECUTORS)
    if address is not None and kind != "dask":
        raise params.ParameterError(f"address names a Dask scheduler: it needs executor dask, got executor {kind}")
    if kind == "slurm":
        _check_slurm()
    return None if workers is None else params.integer("workers", workers, minimum=1, maximum=4096)


@contextlib.contextmanager
def open_executor(
    kind: str = "inline", workers: int | None = None, address: str | None = None, *, nice: int = 0
) -> Iterator[Executor]:
    """Open an executor by name and close it (and any cluster it started) afterwards.

    ``inline``: this process.  ``process``: a spawn-context process pool with ``workers``
    processes (default: one per visible GPU, each pinned to its GPU through
    ``CUDA_VISIBLE_DEVICES``; without GPUs the CPU count).  ``dask``:
    ``distributed.Client(address)`` when an address is given, else a fresh ``LocalCluster`` with
    ``workers`` single-threaded worker processes; yields ``client.get_executor()``.  ``slurm``:
    a ``dask_jobqueue.SLURMCluster`` configured by the dask config (``jobqueue.slurm``: queue,
    cores, memory, walltime, job_extra_directives...) scaled to ``workers`` jobs (default 1);
    needs ``pip install implicitbias[slurm]``.  ``nice``: the process pool's workers lower their
    priority by this much (``os.nice``; 19: they run only on cores nothing else wants, as the report's
    prefetch does).
    """
    workers = check_executor(kind, workers, address)
    if kind == "inline":
        yield InlineExecutor()
    elif kind == "process":
        ctx = multiprocessing.get_context("spawn")
        gpus = _gpu_count()
        queue = None
        if gpus:
            queue = ctx.Queue()
            for i in range(workers or gpus):
                queue.put(i % gpus)
        pool = ProcessPoolExecutor(
            max_workers=workers or gpus or os.cpu_count(),
            mp_context=ctx,
            initializer=_start_worker,
            initargs=(os.getpid(), queue, nice),
        )
        try:
            yield pool
        except BaseException:
            _stop_now(pool)
            raise
        pool.shutdown(wait=True)
    elif kind == "slurm":
        with _slurm_cluster() as cluster:
            from distributed import Client

            with Client(cluster) as client:
                cluster.scale(jobs=workers or 1)
                yield client.get_executor()
    else:
        from distributed import Client, LocalCluster

        if address:
            with _dask_client(address) as client:
                yield client.get_executor()
        else:
            with (
                LocalCluster(
                    n_workers=workers or os.cpu_count(),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # a failed cell reaches the client as its exception (one line there); the
                    # workers' own warnings about it would print after that line
                    silence_logs=logging.ERROR,
                    preload=[__name__],  # dask_setup: the workers leave Ctrl-C to the client
                ) as cluster,
                Client(cluster) as client,
            ):
                yield client.get_executor()


_SLURM_CONFIG = ("set jobqueue.slurm cores and memory (and queue, walltime...) in ~/.config/dask/jobqueue.yaml or as "
                 "DASK_JOBQUEUE__SLURM__CORES=... variables (README: the Slurm executor)")


def _check_slurm() -> None:
    """What ``executor slurm`` needs before anything starts: dask-jobqueue, Slurm's ``sbatch``, and
    the cores and memory of a job in the dask config; one ParameterError otherwise."""
    try:
        import dask
        import dask_jobqueue  # noqa: F401
    except ImportError:
        raise params.ParameterError("executor slurm needs dask-jobqueue: pip install 'implicitbias[slurm]'") from None
    if shutil.which("sbatch") is None:
        raise params.ParameterError("executor slurm needs Slurm's sbatch on PATH: run the sweep on a node that submits "
                                    "jobs (a login node), or use executor process or dask")
    missing = [k for k in ("cores", "memory") if dask.config.get(f"jobqueue.slurm.{k}", None) is None]
    if missing:
        raise params.ParameterError(f"executor slurm needs the {' and '.join(missing)} of a job: {_SLURM_CONFIG}")


@contextlib.contextmanager
def _slurm_cluster():
    """A ``dask_jobqueue.SLURMCluster`` configured by the dask config (``jobqueue.slurm``), closed
    afterwards (its jobs cancelled); a config that dask-jobqueue refuses is one ParameterError."""
    from dask_jobqueue import SLURMCluster

    try:
        cluster = SLURMCluster()
    except ValueError as exc:
        raise params.ParameterError(
            f"executor slurm: dask-jobqueue refuses its config ({' '.join(str(exc).split())[:200]}); {_SLURM_CONFIG}"
        ) from None
    with cluster:
        yield cluster


def _gpu_count() -> int:
    """Visible CUDA devices (torch counts them through NVML, without initialising CUDA here).  Without an
    NVIDIA device node (``/dev/nvidia0``, ...; ``/dev/dxg`` under WSL) there is none, and torch, whose
    import took 1.8 of the 10.5 s of a phase atlas read back from its store, is not imported."""
    if not (glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/dxg")):
        return 0
    import torch

    return torch.cuda.device_count()


@contextlib.contextmanager
def _dask_client(address: str):
    """A client of the scheduler at ``address``, or one ParameterError within the connect timeout."""
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except Exception as exc:  # refused, timed out, malformed, or something else answered
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise params.ParameterError(
            f"address {address!r}: cannot reach a Dask scheduler there (within {CONNECT_TIMEOUT_S} s: {why}); "
            "give tcp://HOST:PORT of a running scheduler, or leave --address out for a local cluster"
        ) from None
    with client:
        yield client


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """End a process pool at once: cancel its queued calls and SIGKILL its workers, whose calls are
    then unfinished (``Store.map`` has released them to a rerun), instead of waiting for them.

    Reads the pool's private ``_processes``: the standard library ends running workers only from
    Python 3.14 (``terminate_workers``)."""
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.kill()
    for process in processes:
        process.join(timeout=10)
    pool.shutdown(wait=True)


def _start_worker(client_pid: int, gpu_queue, nice: int = 0) -> None:
    """Process-pool initializer: end with the client (see the module docstring), leave SIGINT and
    SIGTERM to the client (a Ctrl-C reaches the whole process group; the client decides what
    finishes, and ends its workers), lower its priority by ``nice``, and, where GPUs exist, see only
    the GPU taken from ``gpu_queue``."""
    _die_with(client_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if nice:
        os.nice(nice)
    if gpu_queue is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_queue.get())


def dask_setup(worker) -> None:
    """Dask preload hook, run in each LocalCluster worker process as it starts: leave SIGINT to the
    client, as the process pool's workers do (a Ctrl-C reaches the whole process group; a worker
    would print a traceback and stop mid-cell, the client then closes the cluster)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _die_with(parent_pid: int) -> None:
    """SIGKILL this process when ``parent_pid`` (its parent) dies: the kernel's parent-death
    signal on Linux, else a thread polling the parent pid every half second."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent_pid:  # the client died before prctl took effect
                os.kill(os.getpid(), signal.SIGKILL)
            return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="orphan-watchdog", daemon=True).start()
