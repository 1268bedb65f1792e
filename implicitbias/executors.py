"""Executors that run sweep cells: in-process, a local process pool, Dask distributed, or SLURM.

Every executor here is a ``concurrent.futures.Executor``, so a sweep is written once against
that interface (``Store.map``) and runs unchanged on one core, on all local cores (one worker
per GPU where GPUs exist), on a Dask cluster (``distributed.Client.get_executor``) or on a SLURM
cluster through dask-jobqueue.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor

from implicitbias.theory import params

__all__ = ["InlineExecutor", "open_executor", "EXECUTORS"]

EXECUTORS = ("inline", "process", "dask", "slurm")


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


@contextlib.contextmanager
def open_executor(
    kind: str = "inline", workers: int | None = None, address: str | None = None
) -> Iterator[Executor]:
    """Open an executor by name and close it (and any cluster it started) afterwards.

    ``inline``: this process.  ``process``: a spawn-context process pool with ``workers``
    processes (default: one per visible GPU, each pinned to its GPU through
    ``CUDA_VISIBLE_DEVICES``; without GPUs the CPU count).  ``dask``:
    ``distributed.Client(address)`` when an address is given, else a fresh ``LocalCluster`` with
    ``workers`` single-threaded worker processes; yields ``client.get_executor()``.  ``slurm``:
    a ``dask_jobqueue.SLURMCluster`` configured by the dask config (``jobqueue.slurm``: queue,
    cores, memory, walltime, job_extra_directives...) scaled to ``workers`` jobs (default 1);
    needs ``pip install implicitbias[slurm]``.
    """
    params.choice("executor", kind, EXECUTORS)
    if workers is not None:
        workers = params.integer("workers", workers, minimum=1, maximum=4096)
    if kind == "inline":
        yield InlineExecutor()
    elif kind == "process":
        ctx = multiprocessing.get_context("spawn")
        gpus = _gpu_count()
        pin = {}
        if gpus:
            queue = ctx.Queue()
            for i in range(workers or gpus):
                queue.put(i % gpus)
            pin = {"initializer": _pin_gpu, "initargs": (queue,)}
        with ProcessPoolExecutor(max_workers=workers or gpus or os.cpu_count(), mp_context=ctx, **pin) as pool:
            yield pool
    elif kind == "slurm":
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise params.ParameterError("executor slurm needs dask-jobqueue: pip install 'implicitbias[slurm]'") from None
        from distributed import Client

        with SLURMCluster() as cluster, Client(cluster) as client:
            cluster.scale(jobs=workers or 1)
            yield client.get_executor()
    else:
        from distributed import Client, LocalCluster

        if address:
            with Client(address) as client:
                yield client.get_executor()
        else:
            with (
                LocalCluster(
                    n_workers=workers or os.cpu_count(),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                ) as cluster,
                Client(cluster) as client,
            ):
                yield client.get_executor()


def _gpu_count() -> int:
    """Visible CUDA devices (torch counts them through NVML, without initialising CUDA here)."""
    import torch

    return torch.cuda.device_count()


def _pin_gpu(queue) -> None:
    """Process-pool initializer: this worker sees only the GPU it takes from ``queue``."""
    os.environ["CUDA_VISIBLE_DEVICES"] = str(queue.get())
