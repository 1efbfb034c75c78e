#!/usr/bin/env bash
# Build the ament_cmake interface package robot_dynamics_interfaces with plain cmake
# (no colcon) and install it into a Python venv that holds the ROS 2 wheels.
#
# Usage: scripts/build_interfaces.sh VENV_DIR
#
# VENV_DIR must already contain requirements/ros.txt and requirements/ros-build.txt:
#   python3 -m venv VENV_DIR
#   VENV_DIR/bin/pip install -r requirements/ros.txt -r requirements/ros-build.txt
#
# The venv prefix is used as an ament prefix (share/, lib/, include/), so the package
# ends up in VENV_DIR/share/robot_dynamics_interfaces, VENV_DIR/lib/lib*.so and
# VENV_DIR/lib/pythonX.Y/site-packages/robot_dynamics_interfaces.
#
# Environment (optional):
#   BUILD_DIR  build directory to use and keep (default: a fresh temp dir, deleted on exit)
#   JOBS       parallel build jobs (default: 2)
#   CMAKE      cmake executable (default: cmake from PATH; needs >= 3.20)
#
# Idempotent: re-running rebuilds and re-installs over the previous install.
set -Eeuo pipefail

die() { echo "build_interfaces.sh: ERROR: $*" >&2; exit 1; }
trap 'echo "build_interfaces.sh: FAILED at line $LINENO: $BASH_COMMAND" >&2' ERR

[[ $# -eq 1 ]] || die "usage: $0 VENV_DIR"
[[ -d "$1" ]] || die "venv directory not found: $1"
VENV="$(cd "$1" && pwd -P)"
PY="$VENV/bin/python"
[[ -x "$PY" ]] || die "no python in venv: $PY"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
PKG="$ROOT/robot_dynamics_interfaces"
[[ -f "$PKG/CMakeLists.txt" ]] || die "package not found: $PKG"

JOBS="${JOBS:-2}"
CMAKE="${CMAKE:-cmake}"
command -v "$CMAKE" >/dev/null || die "cmake not found (install Debian's cmake >= 3.20)"
cmake_ver="$("$CMAKE" --version | head -n1 | awk '{print $3}')"
"$PY" - "$cmake_ver" <<'EOF' || die "cmake >= 3.20 required, found $cmake_ver"
import sys
v = tuple(int(x) for x in sys.argv[1].split('-')[0].split('.')[:2])
sys.exit(0 if v >= (3, 20) else 1)
EOF
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler (apt-get install g++)"

# Check the build-time wheels are there, to fail early with a clear message.
[[ -f "$VENV/share/ament_cmake/cmake/ament_cmakeConfig.cmake" ]] \
  || die "ament_cmake not in $VENV: pip install -r requirements/ros-build.txt"
[[ -f "$VENV/share/rosidl_default_generators/cmake/rosidl_default_generatorsConfig.cmake" ]] \
  || die "rosidl_default_generators not in $VENV: pip install -r requirements/ros-build.txt"
[[ -f "$VENV/share/geometry_msgs/cmake/geometry_msgsConfig.cmake" ]] \
  || die "geometry_msgs not in $VENV: pip install -r requirements/ros.txt"

GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi

if [[ -n "${BUILD_DIR:-}" ]]; then
  mkdir -p "$BUILD_DIR"
  BUILD_DIR="$(cd "$BUILD_DIR" && pwd -P)"
  # A build dir configured for another venv/source would silently mix prefixes.
  if [[ -f "$BUILD_DIR/CMakeCache.txt" ]] && ! grep -qx "CMAKE_INSTALL_PREFIX:PATH=$VENV" "$BUILD_DIR/CMakeCache.txt"; then
    die "BUILD_DIR $BUILD_DIR was configured for another install prefix; remove it"
  fi
else
  BUILD_DIR="$(mktemp -d "${TMPDIR:-/tmp}/robot_dynamics_interfaces-build.XXXXXX")"
  trap 'rm -rf "$BUILD_DIR"' EXIT
fi

# Build environment: the venv's python first on PATH, the venv as ament prefix.
export PATH="$VENV/bin:$PATH"
export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export PYTHONDONTWRITEBYTECODE=1

start=$(date +%s)
echo "build_interfaces.sh: $PKG -> $VENV (build dir $BUILD_DIR, cmake $cmake_ver, -j$JOBS)"

"$CMAKE" -S "$PKG" -B "$BUILD_DIR" "${GENERATOR[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$VENV" \
  -DCMAKE_INSTALL_PREFIX="$VENV" \
  -DPython3_EXECUTABLE="$PY" \
  -DPython3_FIND_VIRTUALENV=ONLY \
  -DBUILD_TESTING=OFF
"$CMAKE" --build "$BUILD_DIR" --parallel "$JOBS"
"$CMAKE" --install "$BUILD_DIR"

# Smoke test of the installed package (the venv's .pth sets LD_LIBRARY_PATH).
env -u _ROS_WHEELS_BOOTSTRAP_COMPLETE "$PY" -c '
from robot_dynamics_interfaces.msg import LinkWrench
from robot_dynamics_interfaces.srv import (
    ForwardDynamics, HybridDynamics, InverseDynamics, WrenchToJointTorques)
for t in (LinkWrench, InverseDynamics.Request, ForwardDynamics.Response,
          HybridDynamics.Request, WrenchToJointTorques.Response):
    t()
' || die "installed package does not import in $PY"

echo "build_interfaces.sh: OK, installed robot_dynamics_interfaces into $VENV in $(( $(date +%s) - start )) s"
