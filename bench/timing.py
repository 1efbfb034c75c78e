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


def alternate(fns, repeats, calls=1, warmup=3):
    """The functions timed in turn within each repeat (a slow spell of this shared VM hits all of
    them), after `warmup` calls each (caches, numba's dispatch, fresh memory): per function the
    median seconds per call, and the per-repeat ratios of the last one's time to each one's (the
    reference last, Pinocchio or toppra: its speed-ups)."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            times[k].append((time.perf_counter() - t) / calls)
    ratios = [[ref / t for ref, t in zip(times[-1], ts)] for ts in times]
    return [statistics.median(ts) for ts in times], ratios


def medians(fns, repeats, calls=1, warmup=3, inverse=False):
    """alternate() with each function's per-repeat ratios reduced to their median (inverse: of each
    one's time over the last one's, a cost relative to the reference instead of a speed-up)."""
    times, ratios = alternate(fns, repeats, calls, warmup)
    return times, [statistics.median(1.0 / x if inverse else x for x in r) for r in ratios]


def interleaved_minimum(fns, repeats, calls):
    """The functions timed in turn, `calls` calls each per repeat, in thread CPU time (what other
    processes on a shared machine take is not counted): per function the minimum seconds per call
    over the repeats, and the median of the per-repeat ratios of each one's time to the last one's."""
    for fn in fns:
        for _ in range(3):
            fn()
    times = [[] for _ in fns]
    for r in range(repeats):
        for k in (range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))):
            fn = fns[k]
            t = time.thread_time()
            for _ in range(calls):
                fn()
            times[k].append((time.thread_time() - t) / calls)
    return [min(ts) for ts in times], [statistics.median(t / ref for t, ref in zip(ts, times[-1])) for ts in times]


def lane_line():
    """The batch kernels' vector width on this machine (robot_dynamics/kernels/lanes.py)."""
    import llvmlite.binding as llvm
    from robot_dynamics import calling
    features = llvm.get_host_cpu_features().flatten()
    return (f"batches run {calling.LANES.count} states per instruction (<{calling.LANES.count} x double>; "
            f"CPU {llvm.get_host_cpu_name()}, AVX-512 {'yes' if '+avx512f' in features else 'no'}, "
            f"AVX2 {'yes' if '+avx2' in features else 'no'})")


def goal_table(goals, results):
    """Markdown of the batch goals (one thread, 10000 states) against this run: goals {(robot, algorithm): target
    speed-up}, results {(robot, algorithm): (1-thread ratios, 2-thread ratios, 1-thread µs, 2-thread µs)}
    with the per-repeat ratios of Pinocchio's loop to ours (median and spread)."""
    lines = ["| robot | algorithm | target (1 thread) | Pinocchio's loop / ours, 1 thread [spread] | 2 threads "
             "| two threads over one | met |", "|---|---|---:|---:|---:|---:|---|"]
    for (robot, alg), target in goals.items():
        if (robot, alg) not in results:
            continue
        r1, r2, t1, t2 = results[robot, alg]
        x1 = statistics.median(r1)
        x2 = "–" if r2 is None else f"{statistics.median(r2):.2f}x"
        scaling = "–" if t2 is None else f"{t1 / t2:.2f}"
        lines.append(f"| {robot} | {alg} | {target}x | {x1:.2f}x [{min(r1):.2f}-{max(r1):.2f}] | {x2} | {scaling} "
                     f"| {'yes' if x1 >= target else 'no'} |")
    return "\n".join(lines)
