#!/usr/bin/env bash
# Install the ROS 2 package robot_dynamics into a venv that serves as an ament prefix, as
# `colcon build --symlink-install` installs an ament_python package: then `ros2 run robot_dynamics
# dynamics_node`, `ros2 launch robot_dynamics dynamics.launch.py` and ament_index find it.
#
# Usage: scripts/install_ament_prefix.sh VENV_DIR
#
# The Python package itself is the venv's editable install (pip install -e .). Launch, config and
# URDF files are symbolic links to this checkout (edits need no reinstall; a new file does: re-run
# this, which `make` does). The executables are the package's scripts with the venv's Python.
# Also writes VENV_DIR/setup.bash (and setup.sh, local_setup.*), which make the venv an underlay as
# /opt/ros/<distro>/setup.bash does for a ROS install: source it before `colcon build` or `ros2 ...`.
set -euo pipefail
[[ $# -eq 1 && -x "$1/bin/python" ]] || { echo "usage: $0 VENV_DIR (a venv with python)" >&2; exit 2; }
VENV="$(cd "$1" && pwd -P)"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
PKG="$ROOT/ros/robot_dynamics"
NAME=robot_dynamics
SHARE="$VENV/share/$NAME"
LIB="$VENV/lib/$NAME"

rm -rf "$SHARE" "$LIB"
mkdir -p "$VENV/share/ament_index/resource_index/packages" "$SHARE/launch" "$SHARE/config" "$SHARE/urdf" "$LIB"
cp "$PKG/resource/$NAME" "$VENV/share/ament_index/resource_index/packages/$NAME"
ln -s "$PKG/package.xml" "$SHARE/package.xml"
# one link per file, as colcon --symlink-install does: ros2 launch looks for launch files with a walk
# that does not follow a linked folder
for dir in launch config urdf; do
  for file in "$ROOT/$dir"/*; do
    case "$file" in *.launch.py|*.yaml|*.urdf) ln -s "$file" "$SHARE/$dir/" ;; esac
  done
done
for script in "$PKG"/scripts/*; do
  { echo "#!$VENV/bin/python"; tail -n +2 "$script"; } > "$LIB/$(basename "$script")"
  chmod +x "$LIB/$(basename "$script")"
done

# the venv as an underlay, like /opt/ros/<distro>: local_setup.sh sets its variables, and colcon
# chains it into a workspace's install/setup.bash (it looks for local_setup.* in AMENT_PREFIX_PATH)
cat > "$VENV/local_setup.sh" <<ENV
# The venv $VENV as a ROS 2 underlay (written by scripts/install_ament_prefix.sh):
# source it as you would /opt/ros/<distro>/setup.bash, e.g. before colcon build or ros2.
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin\${PATH:+:\$PATH}"
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
ENV
for script in setup.sh setup.bash local_setup.bash; do
  echo ". \"$VENV/local_setup.sh\"" > "$VENV/$script"
done
echo "install_ament_prefix.sh: $NAME registered in the ament prefix $VENV (source $VENV/setup.bash)"
