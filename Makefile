# Everything is installed from scratch into .venv by the first target that needs it.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
REQS   := requirements/runtime.txt requirements/demo.txt requirements/test.txt requirements/ros.txt requirements/ros-build.txt
export OPENBLAS_NUM_THREADS := 1

.PHONY: venv test demo bench clean clean-cache

$(STAMP): $(REQS) setup.py scripts/build_interfaces.sh $(wildcard robot_dynamics_interfaces/*/*)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(addprefix -r ,$(REQS))
	$(PY) -m pip install -q --no-deps -e .
	bash scripts/build_interfaces.sh $(VENV)
	@echo "warming the numba cache (compiles every kernel once)"
	$(PY) -m robot_dynamics.warm
	touch $@

venv: $(STAMP)

test: $(STAMP)
	$(VENV)/bin/pytest -q test

demo: $(STAMP)   # the node in closed loop with a simulated arm (MuJoCo); table + out/closed_loop_demo.png
	$(PY) -m robot_dynamics.closed_loop_demo

bench: $(STAMP)
	$(PY) bench/bench_dynamics.py
	$(PY) bench/bench_node.py

clean-cache: $(STAMP)   # drop numba's compiled kernels and compile them again
	rm -f robot_dynamics/__pycache__/*.nbi robot_dynamics/__pycache__/*.nbc
	$(PY) -m robot_dynamics.warm

clean:
	rm -rf $(VENV) build *.egg-info
