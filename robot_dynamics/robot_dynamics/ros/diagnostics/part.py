"""/diagnostics: every diagnostics_period, one DiagnosticStatus per part that has a status
("<node>: dynamics", "<node>: external torques", ...), hardware_id the model's name."""
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ..base import Part, publisher
from ..parameters import check_parameter
from . import PARAMETERS


class Diagnostics(Part):

    def __init__(self, node):
        super().__init__(node)
        self.pub = publisher(node, DiagnosticArray, "/diagnostics")
        period = check_parameter("diagnostics_period", node.get_parameter("diagnostics_period").value, PARAMETERS)
        node.create_timer(period, self.publish)

    def publish(self):
        node = self.node
        with node.lock:
            statuses = [status for part in node.parts if (status := part.status()) is not None]
            model = node.config.model.name if node.config is not None else "none"
        diag = DiagnosticArray()
        for name, level, message, values in statuses:
            status = DiagnosticStatus(name=f"{node.get_name()}: {name}", level=getattr(DiagnosticStatus, level),
                                      message=message, hardware_id=model)
            status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
            diag.status.append(status)
        diag.header.stamp = node.get_clock().now().to_msg()
        self.pub.publish(diag)
