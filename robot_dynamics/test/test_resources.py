"""Bundled robots by short name: `load_urdf("puma560")` loads the bundled file from any directory, as
the command line does; an unknown name is an error listing the bundled ones; a file of that name wins."""
import shutil

import pytest

from robot_dynamics import load_urdf
from robot_dynamics.resources import MODELS, bundled_urdf, urdf_file
from robot_dynamics.urdf import URDFError


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_bundled_robot_loads_by_short_name_from_any_directory(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    by_name, by_path = load_urdf(name), load_urdf(bundled_urdf(name))
    assert by_name.name == by_path.name
    assert (by_name.nq, by_name.nv, by_name.joint_names) == (by_path.nq, by_path.nv, by_path.joint_names)
    assert urdf_file(name) == bundled_urdf(name)


def test_every_bundled_file_has_its_short_name():
    """The four robots the documents use by name."""
    assert {"puma560", "planar_2link", "floating_base_biped", "five_bar"} <= set(MODELS)


def test_an_unknown_short_name_lists_the_bundled_robots(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(URDFError, match="no such URDF file: 'puma561'") as error:
        load_urdf("puma561")
    for name in MODELS:
        assert name in str(error.value)
    assert urdf_file("puma561") is None


def test_a_file_named_like_a_bundled_robot_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(bundled_urdf("planar_2link"), tmp_path / "puma560")
    assert urdf_file("puma560") == "puma560"
    assert load_urdf("puma560").nv == load_urdf(bundled_urdf("planar_2link")).nv == 2
