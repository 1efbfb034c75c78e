# Everything is installed from scratch into .venv by the first target that needs it.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
AMENT  := $(VENV)/.ament-prefix
REQS   := requirements/runtime.txt requirements/demo.txt requirements/test.txt requirements/ros.txt \
          requirements/ros-build.txt requirements/colcon.txt
# SOAK=600: `make bench` also runs the node at 1 kHz for that many seconds (drops, p99 per minute, memory)
SOAK   ?=
export OPENBLAS_NUM_THREADS := 1

.PHONY: venv test demo demo-legged bench clean clean-cache

$(STAMP): $(REQS) pyproject.toml scripts/build_interfaces.sh $(wildcard robot_dynamics_interfaces/*/*)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(addprefix -r ,$(REQS))
	$(PY) -m pip install -q --no-deps -e .
	bash scripts/build_interfaces.sh $(VENV)
	@echo "warming the numba cache (compiles every kernel once)"
	$(PY) -m robot_dynamics.warm
	touch $@

# the venv as an ament prefix of the ROS 2 package robot_dynamics (ros2 run / ros2 launch find it)
$(AMENT): $(STAMP) scripts/install_ament_prefix.sh ros/robot_dynamics/package.xml \
          $(wildcard ros/robot_dynamics/resource/* ros/robot_dynamics/scripts/*) \
          $(wildcard launch/* config/* urdf/*)
	bash scripts/install_ament_prefix.sh $(VENV)
	touch $@

venv: $(AMENT)

test: $(AMENT)
	$(VENV)/bin/pytest -q test

demo: $(AMENT)   # the node in closed loop with a simulated arm (MuJoCo); table + out/closed_loop_demo.png
	$(VENV)/lib/robot_dynamics/closed_loop_demo

demo-legged: $(AMENT)   # solo12 standing in MuJoCo on the node's contact-consistent gravity torques; out/legged_demo.png
	$(VENV)/lib/robot_dynamics/legged_demo

bench: $(AMENT)
	$(PY) bench/bench_dynamics.py
	$(PY) bench/bench_identification.py
	$(PY) bench/bench_derivatives.py
	$(PY) bench/bench_node.py
	$(if $(SOAK),$(PY) bench/bench_node.py --soak $(SOAK))

clean-cache: $(STAMP)   # drop numba's compiled kernels and compile them again (an edit does it by itself)
	rm -f robot_dynamics/kernels/__pycache__/*.nbi robot_dynamics/kernels/__pycache__/*.nbc
	$(PY) -m robot_dynamics.warm

clean:
	rm -rf $(VENV) build install log *.egg-info
