"""Thread limits for the metrics that train models.

HistGradientBoosting (and BLAS under the linear models) starts one OpenMP
thread per core by default; on a small machine shared by several processes,
or on a small table, these threads mostly wait on each other.  The metrics
that train models therefore run them under a thread limit, one thread by
default.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from threadpoolctl import threadpool_limits

__all__ = ["check_n_jobs", "thread_limit"]


def check_n_jobs(n_jobs: Any) -> int | None:
    """Validate ``n_jobs``: a positive int, -1 (every core) or None (no limit).

    Returns
    -------
    int or None
        The number of threads, or None for the libraries' own defaults.
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer, -1 (every core) or None, "
                         f"got {n_jobs!r}.")
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


@contextlib.contextmanager
def thread_limit(n_jobs: Any) -> Iterator[None]:
    """Limit OpenMP and BLAS thread pools to ``n_jobs`` threads inside the block.

    Parameters
    ----------
    n_jobs : int or None
        As accepted by :func:`check_n_jobs`; None leaves the pools alone.
    """
    threads = check_n_jobs(n_jobs)
    if threads is None:
        yield
        return
    with threadpool_limits(limits=threads):
        yield
