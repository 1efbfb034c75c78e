#!/usr/bin/env bash
# Make a venv holding the ROS 2 wheels a ROS 2 underlay, as /opt/ros/<distro> is for a ROS install:
# write VENV_DIR/setup.bash (and setup.sh, local_setup.*). Source it before `colcon build` or `ros2`.
#
# Usage: scripts/write_underlay.sh VENV_DIR
#
# The underlay holds third-party packages only (ROS 2 core, numpy, numba, the test oracles): nothing
# of this repository is installed or registered in it. The repository's two packages are built by
# colcon into a workspace overlay (`make` builds ./install), so that no order of sourcing can make an
# underlay's copy shadow the workspace's: there is no such copy.
# colcon chains an underlay's local_setup.* into a workspace's install/setup.bash (it looks for
# them in AMENT_PREFIX_PATH): sourcing install/setup.bash alone sets up both.
set -euo pipefail
[[ $# -eq 1 && -x "$1/bin/python" ]] || { echo "usage: $0 VENV_DIR (a venv with python)" >&2; exit 2; }
VENV="$(cd "$1" && pwd -P)"
cat > "$VENV/local_setup.sh" <<ENV
# The venv $VENV as a ROS 2 underlay (written by scripts/write_underlay.sh):
# source it as you would /opt/ros/<distro>/setup.bash, e.g. before colcon build or ros2.
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin\${PATH:+:\$PATH}"
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
ENV
for script in setup.sh setup.bash local_setup.bash; do
  echo ". \"$VENV/local_setup.sh\"" > "$VENV/$script"
done
echo "write_underlay.sh: source $VENV/setup.bash to use the venv as a ROS 2 underlay"
