"""control_msgs as the node's FollowJointTrajectory action uses it: the definitions kept in underlay/
(`make` builds them into the venv where no control_msgs exists) against control_msgs' published
form (ros-controls/control_msgs 6.x, the Kilted and Rolling line), field by field and by RIHS01 type
hash, and the built types (Python classes and the compiled C type support) against the same.

The published hashes come from a public colcon build of control_msgs 5.x for Jazzy
(github.com/Brainiac11/ros2-coding: build/control_msgs/rosidl_generator_c/control_msgs/action/detail/
follow_joint_trajectory__description.c), whose referenced types (trajectory_msgs, std_msgs, ...) hash
as in Kilted. 5.x and 6.x differ only in the feedback's two index fields (6.3.0), which change the
hashes of the Feedback, the FeedbackMessage and the action: those three are computed here by rosidl's
own tool (rosidl_generator_type_description, `rosidl hash`) from the 6.x definition, and the same tool
reproduces the Jazzy build's three published hashes from the definition without the two fields. No DDS.
"""
import ctypes
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "underlay" / "control_msgs"
NOT_BUILT = "control_msgs is not installed: `make` builds it into the venv (scripts/build_interfaces.sh)"

parser = pytest.importorskip("rosidl_adapter.parser", reason="ROS 2 interface tools not installed")

# control_msgs 6.x as published: per type, (type, name) of each field in order, and the constants.
# No field has a default value.
PUBLISHED = {
    "msg/JointTolerance": ([("string", "name"), ("float64", "position"), ("float64", "velocity"),
                            ("float64", "acceleration")], {}),
    "msg/JointComponentTolerance": ([("string", "joint_name"), ("uint16", "component"), ("float64", "position"),
                                     ("float64", "velocity"), ("float64", "acceleration")],
                                    {"X_AXIS": 1, "Y_AXIS": 2, "Z_AXIS": 3, "TRANSLATION": 4, "ROTATION": 5}),
    "action/FollowJointTrajectory_Goal": ([
        ("trajectory_msgs/JointTrajectory", "trajectory"),
        ("trajectory_msgs/MultiDOFJointTrajectory", "multi_dof_trajectory"),
        ("control_msgs/JointTolerance[]", "path_tolerance"),
        ("control_msgs/JointComponentTolerance[]", "component_path_tolerance"),
        ("control_msgs/JointTolerance[]", "goal_tolerance"),
        ("control_msgs/JointComponentTolerance[]", "component_goal_tolerance"),
        ("builtin_interfaces/Duration", "goal_time_tolerance")], {}),
    "action/FollowJointTrajectory_Result": ([("int32", "error_code"), ("string", "error_string")],
                                            {"SUCCESSFUL": 0, "INVALID_GOAL": -1, "INVALID_JOINTS": -2,
                                             "OLD_HEADER_TIMESTAMP": -3, "PATH_TOLERANCE_VIOLATED": -4,
                                             "GOAL_TOLERANCE_VIOLATED": -5}),
    "action/FollowJointTrajectory_Feedback": ([
        ("std_msgs/Header", "header"), ("string[]", "joint_names"),
        ("trajectory_msgs/JointTrajectoryPoint", "desired"), ("trajectory_msgs/JointTrajectoryPoint", "actual"),
        ("trajectory_msgs/JointTrajectoryPoint", "error"), ("int32", "index"),
        ("string[]", "multi_dof_joint_names"),
        ("trajectory_msgs/MultiDOFJointTrajectoryPoint", "multi_dof_desired"),
        ("trajectory_msgs/MultiDOFJointTrajectoryPoint", "multi_dof_actual"),
        ("trajectory_msgs/MultiDOFJointTrajectoryPoint", "multi_dof_error"), ("int32", "multi_dof_index")], {}),
}
INDEX_FIELDS = {"index", "multi_dof_index"}       # added in control_msgs 6.3.0

# RIHS01 type hashes of a control_msgs build (the Jazzy build above; unchanged in 6.x)
BUILT = {
    "msg/JointTolerance": "c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "msg/JointComponentTolerance": "739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
    "action/FollowJointTrajectory_Goal": "8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "action/FollowJointTrajectory_Result": "8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "action/FollowJointTrajectory_SendGoal": "b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
    "action/FollowJointTrajectory_SendGoal_Request":
        "179c93691f1f6d1d115881ff88c3917b7cc6eac2ba4bf56766cc7c4389e19ef1",
    "action/FollowJointTrajectory_SendGoal_Response":
        "e6a48ba740ae254500129a877f0b071be8663a115da1a539b74599cc97921fbf",
    "action/FollowJointTrajectory_SendGoal_Event": "906dd566308db02673c73c654f69bdd84738589629c1bc2841ddb49059ed1c6f",
    "action/FollowJointTrajectory_GetResult": "e3ceb38e3e1867c8dc0f46014df26e90eb93422f27e9e97f936e07f94be4bc8b",
    "action/FollowJointTrajectory_GetResult_Request":
        "ecf7ea8463d3beec7084bca75216d0b01b87b6e1e4e09679bb26093041efcbe9",
    "action/FollowJointTrajectory_GetResult_Response":
        "08eefbaa146ce02ba45898d5e99160afd6c4c54a30d159aee0f2ca6035b1580f",
    "action/FollowJointTrajectory_GetResult_Event":
        "43161a489e52daaa5bbc2fa74f73f1804d099574fcf8f819170807d75472662a",
}
# the Jazzy build's hashes of what the feedback's index fields change
JAZZY = {
    "action/FollowJointTrajectory": "738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
    "action/FollowJointTrajectory_Feedback": "3fd0aaecf71725121ae1ff7f01098a5e0da581e672be18a6b2c286cb43d96b49",
    "action/FollowJointTrajectory_FeedbackMessage":
        "80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71",
}
# the same three for the 6.x definition, by rosidl_generator_type_description 4.9.5 (Kilted)
SIX = {
    "action/FollowJointTrajectory": "ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    "action/FollowJointTrajectory_Feedback": "0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
    "action/FollowJointTrajectory_FeedbackMessage":
        "95618cc73912d99b9acaa17d2da5e832cb0bfdeede7534fa8ec600feca2a6c4b",
}
HASHES = {**BUILT, **SIX}
DEPENDENCIES = ("action_msgs", "builtin_interfaces", "geometry_msgs", "service_msgs", "std_msgs", "trajectory_msgs",
                "unique_identifier_msgs")


def parsed_definitions(folder):
    """The definition files of `folder` as rosidl_adapter reads them: type -> (fields, constants)."""
    specs = {f"msg/{path.stem}": parser.parse_message_file("control_msgs", str(path))
             for path in sorted((folder / "msg").glob("*.msg"))}
    action = parser.parse_action_file("control_msgs", str(folder / "action" / "FollowJointTrajectory.action"))
    for part in ("goal", "result", "feedback"):
        specs[f"action/FollowJointTrajectory_{part.capitalize()}"] = getattr(action, part)
    return {name: ([(str(f.type), f.name) for f in spec.fields], {c.name: c.value for c in spec.constants},
                   [f.name for f in spec.fields if f.default_value is not None])
            for name, spec in specs.items()}


def test_the_definitions_have_the_published_fields_and_constants():
    parsed = parsed_definitions(SOURCE)
    assert sorted(parsed) == sorted(PUBLISHED)
    for name, (fields, constants) in PUBLISHED.items():
        got_fields, got_constants, with_defaults = parsed[name]
        assert got_fields == fields, name
        assert got_constants == constants, name
        assert with_defaults == [], name
    # the package holds these three definitions and nothing else
    files = sorted(str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*") if p.is_file())
    assert files == ["CMakeLists.txt", "action/FollowJointTrajectory.action", "msg/JointComponentTolerance.msg",
                     "msg/JointTolerance.msg", "package.xml"]
    assert (REPO / "underlay" / "COLCON_IGNORE").is_file()     # colcon and rosdep do not take it for ours


def type_hashes(folder, tmp_path):
    """RIHS01 hashes of the definitions in `folder` by rosidl's own tool, type -> hex digest."""
    api = pytest.importorskip("rosidl_cli.command.hash.api")
    from ament_index_python.packages import get_package_share_directory
    files = [f"{folder}:{p.relative_to(folder)}" for p in sorted(folder.rglob("*.msg")) + sorted(folder.rglob("*.action"))]
    includes = [get_package_share_directory(p) for p in DEPENDENCIES]
    api.generate_type_hashes(package_name="control_msgs", interface_files=files, include_paths=includes,
                             output_path=tmp_path / "out")
    hashes = {}
    for path in (tmp_path / "out").glob("*/*.json"):
        for entry in json.loads(path.read_text())["type_hashes"]:
            if entry["type_name"].startswith("control_msgs/"):
                hashes[entry["type_name"].removeprefix("control_msgs/")] = entry["hash_string"].removeprefix("RIHS01_")
    return hashes


def test_the_definitions_hash_as_a_control_msgs_build(tmp_path):
    assert type_hashes(SOURCE, tmp_path / "six") == HASHES
    # without the feedback's index fields (control_msgs 5.x) the tool gives the Jazzy build's hashes
    five = tmp_path / "five"
    for path in SOURCE.rglob("*.*"):
        target = five / path.relative_to(SOURCE)
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().splitlines()
        if path.suffix == ".action":
            lines = [line for line in lines if line not in {f"int32 {name}" for name in INDEX_FIELDS}]
        target.write_text("\n".join(lines) + "\n")
    assert type_hashes(five, tmp_path / "five_out") == {**BUILT, **JAZZY}


# the built types: Python classes (rosidl_generator_py) and the C type support
PYTHON_TYPES = {"float64": "double", "string[]": "sequence<string>"}


def python_type(published):
    if published in PYTHON_TYPES:
        return PYTHON_TYPES[published]
    return f"sequence<{published[:-2]}>" if published.endswith("[]") else published


@pytest.fixture(scope="module")
def built():
    try:
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointComponentTolerance, JointTolerance
    except ImportError:
        pytest.fail(NOT_BUILT)
    return {"msg/JointTolerance": JointTolerance, "msg/JointComponentTolerance": JointComponentTolerance,
            "action/FollowJointTrajectory_Goal": FollowJointTrajectory.Goal,
            "action/FollowJointTrajectory_Result": FollowJointTrajectory.Result,
            "action/FollowJointTrajectory_Feedback": FollowJointTrajectory.Feedback}


def test_the_built_python_types_have_the_published_fields(built):
    for name, (fields, constants) in PUBLISHED.items():
        cls = built[name]
        assert cls.get_fields_and_field_types() == {n: python_type(t) for t, n in fields}, name
        assert {c: getattr(cls, c) for c in constants} == constants, name


def c_type_support():
    """The installed control_msgs' C generator library (where rmw gets the type hashes from)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        prefix = get_package_prefix("control_msgs")
    except PackageNotFoundError:
        pytest.fail(NOT_BUILT)
    return prefix, ctypes.CDLL(os.path.join(prefix, "lib", "libcontrol_msgs__rosidl_generator_c.so"))


class TypeHash(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint8), ("value", ctypes.c_uint8 * 32)]


def test_the_built_type_support_carries_the_hashes(built):
    prefix, lib = c_type_support()
    for name, expected in HASHES.items():
        function = getattr(lib, f"control_msgs__{name.replace('/', '__')}__get_type_hash")
        function.restype, function.argtypes = ctypes.POINTER(TypeHash), [ctypes.c_void_p]
        digest = function(None).contents
        assert (digest.version, bytes(digest.value).hex()) == (1, expected), name


def test_a_control_msgs_built_here_is_built_from_the_repositorys_definitions():
    """The installed interface files are the repository's (a ROS installation's own control_msgs: skipped)."""
    prefix, _ = c_type_support()
    share = Path(prefix) / "share" / "control_msgs"
    if not (share / "BUILT_BY_ROBOT_DYNAMICS").is_file():
        pytest.skip(f"the control_msgs in {prefix} is not built from underlay/ (a ROS installation's)")
    for name in ("action/FollowJointTrajectory.action", "msg/JointTolerance.msg", "msg/JointComponentTolerance.msg"):
        assert (share / name).read_text() == (SOURCE / name).read_text(), f"{share / name} is stale: run make"
