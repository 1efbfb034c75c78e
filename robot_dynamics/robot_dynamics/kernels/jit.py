"""The numba decorators every kernel module uses, and the threading setting they need.

The kernels allocate nothing, so they are compiled without numba's reference counting
(_nrt=False): the atomic increments and decrements around every helper call and array view
cost single calls 10-25 %. Only the `workspace` functions and the parallel drivers allocate.
"""
import os

# numba's OpenMP pool spins actively by default; on 2 cores that stalled every batch call ~16 ms
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from numba import njit, prange  # noqa: E402,F401

fast = njit(cache=True, error_model="numpy", fastmath={"contract"}, _nrt=False)
inline = njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always", _nrt=False)
allocating = njit(cache=True, error_model="numpy", fastmath={"contract"})
parallel = njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
