"""The dynamics services (services/__init__.py): ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics,
~/wrench_to_joint_torques, each run under the node's lock by node.serve."""
from robot_dynamics_interfaces import srv
from robot_dynamics_interfaces.msg import LinkWrench

from .. import services
from ..base import Part, moving_frame

SERVICES = (("inverse_dynamics", srv.InverseDynamics, services.inverse_dynamics),
            ("forward_dynamics", srv.ForwardDynamics, services.forward_dynamics),
            ("hybrid_dynamics", srv.HybridDynamics, services.hybrid_dynamics),
            ("wrench_to_joint_torques", srv.WrenchToJointTorques, services.wrench_to_joint_torques))


class DynamicsServices(Part):

    def __init__(self, node):
        super().__init__(node)
        for name, kind, handler in SERVICES:
            node.serve(kind, name, handler)

    @staticmethod
    def warm(config):
        """Each service answered once, with and without what takes another path (external wrenches,
        a base pose and twist, each wrench reference)."""
        model, frame = config.model, moving_frame(config.model)
        zeros = [0.0] * len(model.joint_names)
        state = dict(positions=zeros, velocities=zeros)
        wrenches = [dict()] + ([dict(external_wrenches=[LinkWrench(link=frame)])] if frame else [])
        requests = [srv.InverseDynamics.Request(accelerations=zeros, **state, **w) for w in wrenches]
        requests += [srv.ForwardDynamics.Request(efforts=zeros, **state, **w) for w in wrenches]
        requests.append(srv.HybridDynamics.Request(acceleration_known=[k % 2 == 0 for k in range(len(zeros))],
                                                   accelerations=zeros, efforts=zeros, **state))
        if model.root_joint is not None:
            for request in requests[:1] + requests[len(wrenches):len(wrenches) + 1]:
                request.base_pose.orientation.w, request.base_twist.linear.x = 1.0, 0.1
                request.base_pose.position.z = 0.5
        if frame:
            requests += [srv.WrenchToJointTorques.Request(positions=zeros, frame=frame, reference=reference)
                         for reference in ("", "world", "local")]
        kinds = {kind.Request: (name, kind, handler) for name, kind, handler in SERVICES}
        calls = []
        for request in requests:
            name, kind, handler = kinds[type(request)]
            calls.append((name, lambda r=request, k=kind, h=handler: h(model, r, k.Response())))
        return calls
