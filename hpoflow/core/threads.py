"""Thread limits for the small, many-call numerical loops (scipy's L-BFGS-B on a few dozen variables)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # scans the loaded BLAS/OpenMP libraries once (~20 ms)


def one_blas_thread() -> AbstractContextManager:
    """Run the block with one BLAS thread (torch's own thread count is left alone).

    scipy's L-BFGS-B calls BLAS on d-vectors hundreds of times per optimisation, where a thread pool only
    adds contention: on a busy 2-core machine its ``setulb`` ran ~30x slower with OpenBLAS' default threads.
    """
    return _controller().limit(limits=1, user_api="blas")
