# Everything is installed from scratch by the first target that needs it:
#   .venv     the underlay: Python, ROS 2 Kilted wheels, numpy/numba, colcon, test oracles (requirements/),
#             and the interface packages PyPI has no wheel of, built from underlay/ (control_msgs, where
#             none is found: scripts/build_interfaces.sh); nothing of this repository's two packages
#             is installed or registered in it
#   install/  the workspace overlay: colcon builds this repository's two packages, robot_dynamics
#             and robot_dynamics_interfaces, against the underlay (--symlink-install: edits to Python
#             files need no rebuild), and the numba cache is warmed
# `source install/setup.bash` then gives both (colcon chains the underlay in).
SHELL  := /bin/bash
.SHELLFLAGS := -o pipefail -c
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# the underlay's interface packages built here (the script skips what is up to date or found elsewhere)
INTERFACES := $(VENV)/.interfaces
BUILT  := install/.built
REQS   := requirements/runtime.txt requirements/demo.txt requirements/test.txt requirements/ros.txt \
          requirements/ros-build.txt requirements/colcon.txt
# what colcon builds: every file of the two packages but tests and caches (a new file needs a rebuild)
PACKAGE_FILES := $(shell find robot_dynamics robot_dynamics_interfaces -type f -not -path '*/__pycache__/*' \
                   -not -path 'robot_dynamics/test/*' -not -name '*.nb[ic]' -not -name '*.so' -not -path '*/.*' 2>/dev/null)
# the package's C extension (kernels/_entry.c) built in the source tree, where the warm-up runs the kernels from
# before colcon builds (its `develop` builds the same file again, in place: nothing to do then)
ENTRY  = cd robot_dynamics && $(abspath $(PY)) setup.py -q build_ext --inplace --build-temp ../build/entry > /dev/null
OVERLAY = source install/setup.bash &&
# SOAK=600: `make bench` also runs the node at 1 kHz for that many seconds (drops, p99 per minute, memory)
SOAK   ?=
export OPENBLAS_NUM_THREADS := 1

.PHONY: venv test test-quick demo demo-legged demo-five-bar demo-timing demo-moveit demo-identify bench clean clean-cache

$(STAMP): $(REQS) scripts/write_underlay.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/runtime.txt
	$(ENTRY)
	bash scripts/warm.sh start $(PY)
	$(PY) -m pip install -q $(addprefix -r ,$(REQS)) || { bash scripts/warm.sh stop; false; }
	bash scripts/write_underlay.sh $(VENV)
	touch $@

$(INTERFACES): $(STAMP) scripts/build_interfaces.sh $(shell find underlay robot_dynamics_interfaces/cmake -type f)
	bash scripts/build_interfaces.sh $(VENV) || { bash scripts/warm.sh stop; false; }
	touch $@

# the numba cache is warmed from the source tree (scripts/warm.sh), started as soon as the runtime
# requirements are in the venv: it compiles while pip installs the rest, the interfaces and the overlay
# build (the overlay's symlinks reach the same kernels/__pycache__). The sources are byte-compiled too: an
# environment with PYTHONDONTWRITEBYTECODE=1 (container images set it) otherwise compiles the package's
# modules again in every process the tests start, ~0.3 s of CPU each (a node and its heavy-request child:
# ~0.5 s); an edited file's bytecode is stale and Python compiles it afresh, as without these files
$(BUILT): $(INTERFACES) $(PACKAGE_FILES)
	$(ENTRY)
	bash scripts/warm.sh start $(PY)
	source $(VENV)/setup.bash && colcon build --symlink-install --base-paths robot_dynamics robot_dynamics_interfaces \
	    --event-handlers console_cohesion- summary+ 2>&1 | tail -n 4 || { bash scripts/warm.sh stop; false; }
	$(PY) -m compileall -q robot_dynamics/robot_dynamics robot_dynamics/test > /dev/null
	bash scripts/warm.sh wait
	test -f install/robot_dynamics/share/robot_dynamics/package.xml
	touch $@

venv: $(BUILT)

# `make test`: every test, spread over TEST_JOBS processes (pytest-xdist; a ROS module's tests stay in
# one process, so that its node processes start once; conftest.py gives each process its own
# ROS_DOMAIN_ID). `make test-quick`: the library without DDS and without the whole-package checks, for
# the edit loop (DEVELOPERS.md, "Tests").
TEST_JOBS ?= 2
PYTEST    = pytest -q -n $(TEST_JOBS) --dist loadgroup
test: $(BUILT)
	$(OVERLAY) $(PYTEST) robot_dynamics/test

test-quick: $(BUILT)
	$(OVERLAY) $(PYTEST) -m "not ros and not slow" robot_dynamics/test

demo: $(BUILT)   # the node in closed loop with a simulated arm (MuJoCo); table + out/closed_loop_demo.png
	$(OVERLAY) install/robot_dynamics/lib/robot_dynamics/closed_loop_demo

demo-timing: $(BUILT)   # PUMA + 3 kg: MoveIt-style limits vs ~/time_parameterize vs slowed down; out/timing_demo.png
	$(OVERLAY) python -m robot_dynamics.demo.timing_demo

demo-moveit: $(BUILT)   # PUMA + 3 kg: a MoveIt goal to a JTC stand-in, directly and through ~/follow_joint_trajectory; out/moveit_demo.png
	$(OVERLAY) python -m robot_dynamics.demo.moveit_demo
demo-identify: $(BUILT)   # the PUMA as it really is (heavier, a tool, friction, armature) identified by the node; out/identify_demo.png
	$(OVERLAY) python -m robot_dynamics.demo.identify_demo

demo-legged: $(BUILT)   # solo12 standing in MuJoCo on the node's contact-consistent gravity torques; out/legged_demo.png
	$(OVERLAY) install/robot_dynamics/lib/robot_dynamics/legged_demo

demo-five-bar: $(BUILT)   # a five-bar parallel robot (closed loop) held and driven round a circle by the node; out/five_bar_demo.png
	$(OVERLAY) install/robot_dynamics/lib/robot_dynamics/five_bar_demo

bench: $(BUILT)
	$(OVERLAY) python bench/bench_dynamics.py
	$(OVERLAY) python bench/bench_identification.py
	$(OVERLAY) python bench/bench_derivatives.py
	$(OVERLAY) python bench/bench_constrained.py
	$(OVERLAY) python bench/bench_trajectory.py
	$(OVERLAY) python bench/bench_kinematics.py
	$(OVERLAY) python bench/bench_centroidal.py
	$(OVERLAY) python bench/bench_node.py
	$(if $(SOAK),$(OVERLAY) python bench/bench_node.py --soak $(SOAK))

clean-cache: $(BUILT)   # drop numba's compiled kernels and compile them again (an edit does it by itself)
	rm -f robot_dynamics/robot_dynamics/kernels/__pycache__/*.nb[ic]
	$(OVERLAY) python -m robot_dynamics.warm

clean:
	bash scripts/warm.sh stop
	rm -rf $(VENV) build install log
