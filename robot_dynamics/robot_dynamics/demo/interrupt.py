"""Ctrl-C and SIGTERM in the demo programs (closed_loop_demo, legged_demo): one request to stop,
never lost, taken where the program can stop its children.

Python's default handler raises KeyboardInterrupt wherever the main thread happens to be, and a
library can swallow it there: `import mujoco` wraps its renderer's import in `except ImportError`,
and a KeyboardInterrupt inside an extension module's initialisation turns into ImportError
("initialization failed"); a Ctrl-C in that moment was lost and the demo ran on to the end
(test_demo's Ctrl-C test failed that way under load). Here the handler only records the signal,
from main()'s first lines on (before them, robot_dynamics/executables.py ends the process at
once with the same code), and the demos' loops call `check()` between steps (at least every 50 ms), which raises KeyboardInterrupt
there; the `running` context managers then stop every process the demo started."""
import signal

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received = []


def _record(signum, frame):
    _received.append(signum)


def catch():
    """From now on SIGINT and SIGTERM are recorded, not raised where they land."""
    for signum in SIGNALS:
        signal.signal(signum, _record)


def check():
    """Raise KeyboardInterrupt if a signal came (nothing happens before `catch`)."""
    if _received:
        raise KeyboardInterrupt


def exit_code():
    """The shell's code for the first signal: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + _received[0] if _received else 130
