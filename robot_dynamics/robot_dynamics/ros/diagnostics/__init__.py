"""/diagnostics (no rclpy): every diagnostics_period, one status per part that has one (part.py:
Diagnostics); the counters of one period, which every part adds to, and the status "dynamics" they
make (the joint_states part's: rate, latency, rejected inputs, missing and stale input)."""
from ..parameters import ParameterSpec, floats


def _period(value):
    x = floats(value, scalar=True)
    if not 0.01 <= x <= 3600.0:
        raise ValueError
    return x


PARAMETERS = {
    "diagnostics_period": ParameterSpec(1.0, "seconds between /diagnostics messages (read at start-up)",
                                        "a number of seconds in [0.01, 3600]", _period, read_only=True),
}


def parts():
    from .part import Diagnostics
    return (Diagnostics,)


def period_stats():
    """Counters of one diagnostics period."""
    return dict(messages=0, rejected=0, latency_sum=0.0, latency_max=0.0, computed=0)


def record(stats, seconds):
    """One joint_states message computed and published in `seconds`."""
    stats["computed"] += 1
    stats["latency_sum"] += seconds
    stats["latency_max"] = max(stats["latency_max"], seconds)


def summary(stats, period, model_name, missing, last_error, no_model, stale="", foreign=()):
    """(level: 'OK', 'WARN' or 'ERROR', message, {key: value}) of one period of `period` seconds.
    model_name None: no model (no_model says why). stale: what input is stale ('' if none); foreign:
    the names of the last joint_states message that named none of the model's joints."""
    computed = max(stats["computed"], 1)
    values = {
        "model": model_name or "none",
        "joint_states rate [Hz]": f"{stats['messages'] / period:.1f}",
        "compute latency mean [us]": f"{1e6 * stats['latency_sum'] / computed:.1f}",
        "compute latency max [us]": f"{1e6 * stats['latency_max']:.1f}",
        "rejected inputs": str(stats["rejected"]),
        "missing joints": " ".join(missing) if model_name else "",
        "stale input": stale,
        "joint_states names not in the model": " ".join(foreign),
        "last error": last_error,
    }
    if model_name is None:
        return "ERROR", no_model, values
    if missing:
        came = f"; joint_states came naming none of them: {list(foreign)}" if foreign else ""
        return "WARN", f"waiting for joint_states of {missing}{came}", values
    if stale:
        return "WARN", f"stale input: {stale}", values
    if stats["rejected"]:
        return "WARN", f"{stats['rejected']} inputs rejected", values
    return "OK", "serving", values
