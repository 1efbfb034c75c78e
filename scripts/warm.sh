#!/usr/bin/env bash
# numba's on-disk cache warmed in the background while the rest installs and builds (the Makefile):
#   scripts/warm.sh start PYTHON   start `python -m robot_dynamics.warm` from the source tree, unless one
#                                  is running or one that finished well is newer than every source file
#   scripts/warm.sh wait           wait for it, print its log, and exit with its status
#   scripts/warm.sh stop           end it (and its helpers) if it runs: a step after its start failed
# It needs only the runtime requirements (numpy, numba): the Makefile starts it as soon as those are in
# the venv, so it compiles while pip installs the ROS wheels and test oracles and colcon builds. Its log
# is log/warm.log, its pid log/warm.pid and its exit status log/warm.rc.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p log
running() { [ -f log/warm.pid ] && [ ! -f log/warm.rc ] && kill -0 "$(cat log/warm.pid)" 2>/dev/null; }
case "${1:-}" in
start)
    py="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"     # absolute, not resolved: the venv's python
    if running; then exit 0; fi
    if [ -f log/warm.rc ] && [ "$(cat log/warm.rc)" = 0 ] &&
       [ -z "$(find robot_dynamics/robot_dynamics -name '*.py' -newer log/warm.rc -print -quit)" ]; then
        exit 0      # warmed since the last edit
    fi
    rm -f log/warm.rc
    # a session of its own (the warm-up's helper processes with it): `stop` ends them all
    setsid bash -c 'cd robot_dynamics && "$0" -m robot_dynamics.warm > ../log/warm.log 2>&1; echo $? > ../log/warm.rc' \
        "$py" < /dev/null > /dev/null 2>&1 &
    echo $! > log/warm.pid
    echo "warming the numba cache in the background (compiles every kernel once; log/warm.log)" ;;
wait)
    while running; do sleep 1; done
    [ -f log/warm.rc ] || { echo "warm.sh: no warm-up running nor finished (killed? scripts/warm.sh start PYTHON)" >&2; exit 1; }
    cat log/warm.log
    exit "$(cat log/warm.rc)" ;;
stop)
    if running; then kill -- "-$(cat log/warm.pid)" 2>/dev/null || true; fi ;;
*)
    echo "usage: scripts/warm.sh start PYTHON | wait | stop" >&2; exit 2 ;;
esac
