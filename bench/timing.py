"""Timing helper shared by the benches (run as scripts: `python bench/<bench>.py` puts bench/ on the path)."""
import statistics
import time


def median_time(fn, repeats, calls=1):
    """Median over `repeats` of the seconds per call of fn(), after three warm-up calls."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times)
