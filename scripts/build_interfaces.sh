#!/usr/bin/env bash
# Build the interface packages kept in underlay/ (control_msgs: the FollowJointTrajectory action and
# its tolerance messages) into a venv of ROS 2 wheels, the underlay, where PyPI has no wheel of them.
# A ROS installation has the real control_msgs (rosdep key control_msgs): this never builds over one.
#
# Usage: scripts/build_interfaces.sh VENV_DIR [PREFIX]
#   VENV_DIR  a venv with the ROS 2 wheels of requirements/ros.txt and requirements/ros-build.txt
#   PREFIX    where to install (default VENV_DIR; another folder to try the build without touching it)
#
# Does nothing when a control_msgs is found in AMENT_PREFIX_PATH or PREFIX that this script did not
# build (its ament index entry without our marker), or when PREFIX holds one built from the same
# files (the marker holds their digest). Otherwise plain cmake configures, builds and installs
# underlay/control_msgs in a temporary folder (~30 s of CPU: C and Python type support, as the
# underlay has no rclcpp), under a lock on PREFIX.
set -euo pipefail
[[ $# -ge 1 && $# -le 2 && -x "$1/bin/python" ]] || { echo "usage: $0 VENV_DIR [PREFIX]" >&2; exit 2; }
VENV="$(cd "$1" && pwd -P)"
PREFIX="${2:-$VENV}"
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd -P)"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
SOURCE="$REPO/underlay/control_msgs"
MARKER="$PREFIX/share/control_msgs/BUILT_BY_ROBOT_DYNAMICS"
INDEX=share/ament_index/resource_index/packages/control_msgs

# what the build depends on: the definitions and the shared cmake workaround
digest="$(cd "$REPO" && find underlay/control_msgs robot_dynamics_interfaces/cmake -type f | LC_ALL=C sort \
          | xargs sha256sum | sha256sum | cut -d' ' -f1)"

exec 9>"$PREFIX/.build_interfaces.lock"
flock 9                                      # one build at a time into a shared venv

IFS=: read -r -a prefixes <<< "${AMENT_PREFIX_PATH:-}"
for prefix in "$PREFIX" "${prefixes[@]}"; do
  [[ -n "$prefix" && -e "$prefix/$INDEX" ]] || continue
  if [[ "$(cd "$prefix" && pwd -P)" == "$PREFIX" && -f "$MARKER" ]]; then
    if [[ "$(head -n 1 "$MARKER")" == "$digest" ]]; then
      echo "build_interfaces.sh: control_msgs in $PREFIX is up to date"
      exit 0
    fi
    continue                                 # ours, from other files: build again
  fi
  echo "build_interfaces.sh: control_msgs found in $prefix (not built here): using it, building nothing"
  exit 0
done

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
# the venv as the underlay: its ament packages, its python (the rosidl generators run in it)
. "$VENV/local_setup.sh"
start=$SECONDS
cmake -S "$SOURCE" -B "$build" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DPython3_EXECUTABLE="$VENV/bin/python" > "$build.log" 2>&1 \
  && cmake --build "$build" -j 2 >> "$build.log" 2>&1 \
  && cmake --install "$build" >> "$build.log" 2>&1 \
  || { tail -n 40 "$build.log" >&2; rm -f "$build.log"; echo "build_interfaces.sh: control_msgs failed to build" >&2; exit 1; }
rm -f "$build.log"
printf '%s\n%s\n' "$digest" "built from $SOURCE by scripts/build_interfaces.sh" > "$MARKER"
echo "build_interfaces.sh: control_msgs built into $PREFIX in $((SECONDS - start)) s"
