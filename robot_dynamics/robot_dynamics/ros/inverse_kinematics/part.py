"""~/inverse_kinematics (InverseKinematics.srv): rd.inverse_kinematics of one frame from the measured
state or a given seed (inverse_kinematics/__init__.py has the request's rules).

The solve is a heavy request: it runs in the node's heavy-request process (ros/work.py, ros/worker.py:
refused at once, naming the queue, when it is full; its restarts are a Python loop), the node's lock
released: an unreachable target tried from 30 random configurations takes milliseconds (tens on a
humanoid; the bounds, 1000 restarts of 10000 iterations, seconds), and neither joint_states
nor the other services wait for it (the lock is held to read the configuration and the measured state
only). Unlike the other services, a finite answer that did not converge goes back with
its configuration, error and reason, and success=false."""
import numpy as np
from geometry_msgs.msg import PoseStamped
from robot_dynamics_interfaces.srv import InverseKinematics

from ... import dynamics as rd
from ... import lie
from .. import inverse_kinematics as kinematics
from ..base import Part, moving_frame


class InverseKinematicsService(Part):

    def __init__(self, node):
        super().__init__(node)
        node.create_service(InverseKinematics, "~/inverse_kinematics", self.serve, callback_group=node.heavy_group)

    @staticmethod
    def heavy_warm(config):
        """A pose and a position target reached at once, one the kinematics cannot reach (the random
        restarts), a target in a world-fixed frame, the answer's base pose."""
        model, frame = config.model, moving_frame(config.model)
        if frame is None:
            return []
        q = rd.neutral(model)
        T = rd.frame_placement(model, q, frame)
        fixed = kinematics.world_fixed_frames(model)

        def request(position_only=False, far=False, frame_id=""):
            target = PoseStamped()
            target.header.frame_id = frame_id
            p = target.pose.position
            p.x, p.y, p.z = (T[:3, 3] + (1e3 if far else 0.0)).tolist()
            if fixed and frame_id:
                p.x, p.y, p.z = np.linalg.solve(rd.frame_placement(model, q, frame_id), T[:, 3])[:3].tolist()
            return InverseKinematics.Request(frame=frame, target=target, position_only=position_only,
                                             max_iterations=3 if far else 100, restarts=1 if far else 0)

        requests = [request(True), request(True, far=True)] + ([request(True, frame_id=fixed[0])] if fixed else [])
        pose = request()
        o = pose.target.pose.orientation
        o.x, o.y, o.z, o.w = lie.pose(T)[1].tolist()
        requests.append(pose)
        return [("inverse_kinematics", kinematics.answer, (model, q, "", r, InverseKinematics.Response))
                for r in requests]

    async def serve(self, request, response):
        """The service's callback (main executor): the answer, or success=false and why."""
        node = self.node
        try:
            with node.lock:
                config = node.config
                if config is None:
                    raise ValueError(node.no_model())
                measured, world = node.state.q.copy(), node.state.base_frame
            converged, response = await node.heavy("~/inverse_kinematics", kinematics.answer, config.model, measured,
                                                   world, request, type(response), process=True)
        except Exception as exc:
            return node.refuse(response, exc, "inverse_kinematics")
        response.success = converged
        return response
