"""~/time_parameterize and ~/check_trajectory (ros/trajectories.py): waypoints -> the torque-limited
time-optimal trajectory, and a timed trajectory -> the torques it needs against the limits.

Unlike the other services, these run outside the node's lock: a request takes the lock only to read
the configuration and the measured state, then computes with buffers of its own (an rd.Data made
once per configuration), so that a long request (1000 gridpoints, thousands of points) never holds up
the joint_states path beyond what the GIL does. Errors, and results that are not
finite, become success=false with the message, as node.serve does."""
from robot_dynamics_interfaces import srv
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ... import dynamics as rd
from .. import trajectories
from ..messages import error_text
from .base import Part

SERVICES = (("time_parameterize", srv.TimeParameterize, trajectories.time_parameterize),
            ("check_trajectory", srv.CheckTrajectory, trajectories.check_trajectory))


class TrajectoryServices(Part):

    def __init__(self, node):
        super().__init__(node)
        self.config = self.data = None      # the configuration and the services' buffers for its model
        for name, kind, handler in SERVICES:
            node.create_service(kind, f"~/{name}", self._service(handler))

    def configure(self, config, keep):
        self.config, self.data = config, rd.Data(config.model)

    @staticmethod
    def warm(config):
        """Each service once on a two-waypoint path of the model's joints (every limit given, so that a
        URDF without limits compiles them too), and a check along its interpolation; both with batches
        of PARALLEL_MIN_BATCH states or more (the inverse dynamics' parallel kernel)."""
        model = config.model
        if not model.joint_names:
            return []
        names, held = list(model.joint_names), rd.neutral(model)
        q = held[model.joint_offset[0]:]
        points = [JointTrajectoryPoint(positions=(q + k * 0.1).tolist(), velocities=[0.1] * len(names),
                                       accelerations=[0.0] * len(names)) for k in range(2)]
        points[1].time_from_start.sec = 1
        ones, large = [1.0] * len(names), [1e6] * len(names)
        trajectory = JointTrajectory(joint_names=names, points=points)
        calls = [("check_trajectory", lambda: trajectories.check_trajectory(
            config, model, held, srv.CheckTrajectory.Request(trajectory=trajectory, effort_limits=large,
                                                             sample_period=0.01),
            srv.CheckTrajectory.Response(), rd.Data(model)))]
        if model.joint_offset == (0, 0):        # time_parameterize times one-coordinate joints only
            request = srv.TimeParameterize.Request(waypoints=trajectory, velocity_limits=ones, acceleration_limits=ones,
                                                   effort_limits=large, gridpoints=rd.PARALLEL_MIN_BATCH)
            calls.append(("time_parameterize", lambda: trajectories.time_parameterize(
                config, model, held, request, srv.TimeParameterize.Response(), rd.Data(model))))
        return calls

    def _service(self, handler):
        node = self.node

        def serve(request, response):
            try:
                with node.lock:
                    config, data = self.config, self.data
                    if config is None or node.config is None:
                        raise ValueError(node.no_model())
                    held = node.state.q.copy()
                handler(config, config.model, held, request, response, data)
                response.success, response.message = True, "ok"
            except Exception as exc:
                response = type(response)()      # nothing half-computed goes back with a refusal
                response.success, response.message = False, error_text(exc) or type(exc).__name__
                with node.lock:
                    node.stats["rejected"] += 1
                node.get_logger().warning(f"{handler.__name__}: {response.message}", throttle_duration_sec=1.0)
            return response
        serve.__name__ = handler.__name__
        return serve


