"""The demo, apart from the core: a MuJoCo simulated arm (`sim_arm`) and the closed-loop demo that
runs it next to the dynamics node (`closed_loop_demo`, `make demo`). Needs the `demo` extra
(mujoco, matplotlib) and ROS 2's Python packages; the library never imports it."""
