"""The node's warm-ups: every answer compiled or loaded before the node says it is ready.

`warm` runs each part's warm-up calls in the node (numba compiles or loads each kernel on its first
call), before any service or topic exists at start-up, and before a new configuration is swapped in;
`warm_heavy` queues the heavy parts' calls to the heavy-request process (work.py, worker.py) without
the ready line waiting for them, and logs "heavy requests ready" when they are done."""
import time

from .. import dynamics as rd
from .messages import error_text
from .work import warm_up


def warm(node, parts, config, interrupted=None):
    """Every part's warm-up calls on config (`parts`: the node's part classes); seconds taken. A call
    that fails has compiled what it reached: the real call will say why. interrupted: a callable, true
    once the process was asked to stop (KeyboardInterrupt between calls)."""
    t0 = time.perf_counter()
    rd.load_fast_paths()
    for part in parts:
        for name, call in part.warm(config):
            if interrupted is not None and interrupted():
                raise KeyboardInterrupt
            t = time.perf_counter()
            try:
                call()
            except Exception as exc:
                node.get_logger().debug(f"warm-up of {name}: {error_text(exc) or type(exc).__name__}")
            node.get_logger().debug(f"warm-up: {name} {time.perf_counter() - t:.3f} s")
    return time.perf_counter() - t0


def warm_heavy(node, parts, config, first):
    """The parts' heavy_warm calls queued in node.work's process (not counted as a request: none is
    refused for it); "heavy requests ready" logged when they are done if `first` (the node's first
    configuration)."""
    calls, t0 = [c for part in parts for c in part.heavy_warm(config)], time.perf_counter()
    calls = [("the fast paths", rd.load_fast_paths, ())] + calls if calls else calls

    def announce(error):
        if node._destroyed:
            return
        if error is not None:
            node.get_logger().warning(f"warm-up of the heavy requests: {error_text(error) or type(error).__name__}")
        elif first:
            node.get_logger().info(f"heavy requests ready: every heavy answer for {config.model.name!r} compiled "
                                   f"or loaded in their process ({time.perf_counter() - t0:.2f} s)")
    if not calls:       # nothing to warm: the process starts at the first heavy request
        return announce(None)
    try:
        node.work.submit("warm-up", warm_up, calls, counted=False, process=True).add_done_callback(
            lambda future: future.cancelled() or announce(future.exception()))
    except RuntimeError as exc:         # shutting down
        node.get_logger().debug(f"warm-up of the heavy requests skipped: {exc}")
