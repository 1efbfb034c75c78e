"""`python -m robot_dynamics.ros [--ros-args ...]`: the node, as the dynamics_node executable runs it."""
import signal
import sys

# A Ctrl-C or SIGTERM while the modules load (about half a second) is kept for main(), which then
# stops cleanly; Python's default would raise KeyboardInterrupt inside an import.
received = []
for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, lambda signum, frame: received.append(signum))

from .main import main  # noqa: E402

sys.exit(main(signals_received=received))
