"""Kajita et al., Introduction to Humanoid Robotics (Humanoid Robots), ch. 6, with the library: the
free-spinning box of section 6.1.2 and the spinning top of section 6.3.4, with the book's numbers,
simulated by `rd.simulate`; beside them the book's own algorithms (its MATLAB figures 6.4-6.14 in
NumPy: explicit Euler on the world-frame angular / spatial velocity, `Rodrigues` and `SE3exp` for
the attitude), and the figures of docs/simulation.md.

    python -m robot_dynamics.demo.kajita [FOLDER]     # writes kajita_box.png and kajita_top.png (docs/)

The box: 0.1 x 0.4 x 0.9 m, 36 kg, no gravity, w0 = (1, 1, 1) rad/s, dt = 0.02 s, 5 s.
The top: an aluminium disk (r = 0.2 m, a = 0.05 m, 2.7e3 kg/m^3) at c = 0.2 m up a massless shaft
whose tip is the body origin; g = 9.8 m/s^2; the tip starts 0.3 m up, the axis tilted pi/50 about x,
spinning at 50 rad/s about the world z; dt = 0.002 s, 2 s. The floor (the tip below z = 0): a
spring-damper K = 1e4 N/m, D = 1e3 N s/m with viscous friction -D v horizontally (`TopForce`),
here `rd.spring_damper_floor(model, "top", 1e4, 1e3)`.
"""
import argparse
import math
import os

import numpy as np

from .. import dynamics as rd
from .. import lie
from ..urdf import load_urdf

BOX = dict(size=(0.1, 0.4, 0.9), mass=36.0, w0=(1.0, 1.0, 1.0), dt=0.02, end=5.0)
TOP = dict(radius=0.2, thickness=0.05, c=0.2, density=2.7e3, p0=(0.0, 0.0, 0.3), tilt=math.pi / 50,
           w0=(0.0, 0.0, 50.0), dt=0.002, end=2.0, g=9.8, K=1.0e4, D=1.0e3)


def _urdf(name, mass, com, inertia):
    (ixx, iyy, izz), com, mass = (float(x) for x in inertia), [float(x) for x in com], float(mass)
    return (f'<robot name="{name}"><link name="{name}"><inertial><origin xyz="{com[0]!r} {com[1]!r} {com[2]!r}"/>'
            f'<mass value="{mass!r}"/><inertia ixx="{ixx!r}" iyy="{iyy!r}" izz="{izz!r}" ixy="0" ixz="0" iyz="0"/>'
            f'</inertial></link></robot>')


def box_inertia():
    """(mass, inertia about the centre, body axes) of `MakeRigidBody`."""
    lx, ly, lz = BOX["size"]
    m = BOX["mass"]
    return m, m / 12.0 * np.diag([ly ** 2 + lz ** 2, lx ** 2 + lz ** 2, lx ** 2 + ly ** 2])


def top_inertia():
    """(mass, inertia about the COM, COM in the body frame) of `MakeTop`."""
    r, a = TOP["radius"], TOP["thickness"]
    m = math.pi * r ** 2 * a * TOP["density"]
    return m, m * np.diag([(a ** 2 + 3 * r ** 2) / 12, (a ** 2 + 3 * r ** 2) / 12, r ** 2 / 2]), np.array([0, 0, TOP["c"]])


def box_model():
    """(model, q0, v0): the box on a free-flying root, no gravity, at rest in the world axes."""
    m, inertia = box_inertia()
    model = load_urdf(_urdf("box", m, (0.0, 0.0, 0.0), np.diag(inertia)), floating_base=True)
    model.gravity = [0.0, 0.0, 0.0]
    return model, np.array([0, 0, 0, 0, 0, 0, 1.0]), np.concatenate((np.zeros(3), BOX["w0"]))


def top_model():
    """(model, q0, v0): the top, its tip the body origin. v0 in the body frame: the tip at rest
    (the book's vo + w x p = 0), the spin R^T w0."""
    m, inertia, c = top_inertia()
    model = load_urdf(_urdf("top", m, c, np.diag(inertia)), floating_base=True)
    model.gravity = [0.0, 0.0, -TOP["g"]]
    R = lie.exp3([TOP["tilt"], 0.0, 0.0])
    p, w = np.array(TOP["p0"]), np.array(TOP["w0"])
    q0 = np.concatenate((p, lie.matrix_to_quaternion(R)))
    return model, q0, np.concatenate((R.T @ (np.cross(w, p)), R.T @ w))


def floor(model):
    return rd.spring_damper_floor(model, "top", stiffness=TOP["K"], damping=TOP["D"])


# --- the library's runs ----------------------------------------------------------------------------
def simulate_box(integrator="rk4", dt=BOX["dt"], end=BOX["end"]):
    """(times, R, w in the world, L in the world) of the box by rd.simulate."""
    model, q0, v0 = box_model()
    traj = rd.simulate(model, q0, v0, dt, round(end / dt), integrator=integrator)
    _, inertia = box_inertia()
    R = lie.quaternion_to_matrix(traj.q[:, 3:7])
    wb = traj.v[:, 3:]
    return traj.times, R, np.einsum("nij,nj->ni", R, wb), np.einsum("nij,jk,nk->ni", R, inertia, wb)


def simulate_top(integrator="rk4", dt=TOP["dt"], end=TOP["end"]):
    """(times, tip position p, R) of the top by rd.simulate on the book's floor."""
    model, q0, v0 = top_model()
    traj = rd.simulate(model, q0, v0, dt, round(end / dt), external_wrenches=floor(model), integrator=integrator)
    return traj.times, traj.q[:, :3], lie.quaternion_to_matrix(traj.q[:, 3:7])


# --- the book's algorithms -------------------------------------------------------------------------
def book_box(dt=BOX["dt"], end=BOX["end"]):
    """Fig. 6.5 with `EulerDynamics` (Fig. 6.4): (times, R, w, L), explicit Euler on w in the world."""
    _, inertia = box_inertia()
    R, w = np.eye(3), np.array(BOX["w0"], dtype=float)
    out = []
    for _ in range(round(end / dt) + 1):
        Iw = R @ inertia @ R.T
        L = Iw @ w
        out.append((R, w, L))
        dw = np.linalg.solve(Iw, -np.cross(w, L))       # Euler's equation (6.4)
        R = lie.exp3(w * dt) @ R                          # Rodrigues(w, Dtime) * R
        w = w + dt * dw                                   # the Euler method
    R, w, L = (np.array(x) for x in zip(*out))
    return dt * np.arange(len(R)), R, w, L


def book_se3exp(p, R, vo, w, dt):
    """`SE3exp` (Fig. 6.7): the pose after dt of constant spatial velocity (vo, w)."""
    nw = np.linalg.norm(w)
    if nw < np.finfo(float).eps:
        return p + dt * vo, R
    wn, von = w / nw, vo / nw
    rot = lie.exp3(wn * nw * dt)
    return rot @ p + (np.eye(3) - rot) @ np.cross(wn, von) + wn * (wn @ von) * nw * dt, rot @ R


def book_top_force(p, R, vo, w):
    """`TopForce` (Fig. 6.12): gravity and the floor, as force and moment about the world origin."""
    m, _, c = top_inertia()
    wc = R @ c + p
    f = np.array([0.0, 0.0, -m * TOP["g"]])
    t = np.cross(wc, f)
    if p[2] < 0.0:
        v = vo + np.cross(w, p)
        fc = np.array([-TOP["D"] * v[0], -TOP["D"] * v[1], -TOP["K"] * p[2] - TOP["D"] * v[2]])
        f, t = f + fc, t + np.cross(p, fc)
    return f, t


def book_se3dynamics(p, R, vo, w, f, t):
    """`SE3dynamics` (Fig. 6.11 with the external force of section 6.3.4): the spatial acceleration
    (dvo, dw) from (6.23): [[m 1, m [c]^T], [m [c], I_ww]] a0 = [f; t] - [w x P; vo x P + w x L]."""
    m, inertia, c = top_inertia()
    wc = R @ c + p
    chat = lie.hat(wc)
    Iww = R @ inertia @ R.T + m * chat @ chat.T
    P = m * (vo + np.cross(w, wc))
    L = m * np.cross(wc, vo) + Iww @ w
    pp = np.concatenate((np.cross(w, P), np.cross(vo, P) + np.cross(w, L)))
    A = np.block([[m * np.eye(3), (m * chat).T], [m * chat, Iww]])
    a0 = np.linalg.solve(A, np.concatenate((f, t)) - pp)
    return a0[:3], a0[3:]


def book_top(dt=TOP["dt"], end=TOP["end"]):
    """Fig. 6.14: (times, p, R, vo, w) by the book's explicit Euler on the spatial velocity."""
    R = lie.exp3([TOP["tilt"], 0.0, 0.0])
    p, vo, w = np.array(TOP["p0"]), np.zeros(3), np.array(TOP["w0"])
    out = []
    for _ in range(round(end / dt) + 1):
        out.append((p, R, vo, w))
        f, t = book_top_force(p, R, vo, w)
        dvo, dw = book_se3dynamics(p, R, vo, w, f, t)
        p, R = book_se3exp(p, R, vo, w, dt)
        w, vo = w + dt * dw, vo + dt * dvo
    p, R, vo, w = (np.array(x) for x in zip(*out))
    return dt * np.arange(len(p)), p, R, vo, w


# --- the figures -----------------------------------------------------------------------------------
def figures(folder):
    """kajita_box.png and kajita_top.png in folder; returns their paths."""
    import matplotlib    # noqa: PLC0415 (the demo extra)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt    # noqa: PLC0415

    os.makedirs(folder, exist_ok=True)
    t, _, w, L = simulate_box("rk4")
    tb, _, wb, Lb = book_box()
    _, _, _, Le = simulate_box("euler")
    _, _, _, Ls = simulate_box("semi_implicit_euler")
    fig, ax = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for k, name in enumerate("xyz"):
        ax[0].plot(t, w[:, k], label=f"$\\omega_{name}$ rd.simulate RK4")
        ax[0].plot(tb, wb[:, k], "--", color=f"C{k}", alpha=0.7, label=f"$\\omega_{name}$ book's Euler")
    ax[0].set_ylabel("angular velocity, world [rad/s]")
    ax[0].set_title("Kajita's free-spinning box (section 6.1.2): 0.1 x 0.4 x 0.9 m, 36 kg, dt = 0.02 s")
    ax[0].legend(ncol=2, fontsize=7)
    n0 = np.linalg.norm(L[0])
    for x, label in ((L, "RK4 (rd.simulate)"), (Ls, "semi-implicit Euler (rd.simulate)"),
                     (Le, "explicit Euler (rd.simulate)"), (Lb, "explicit Euler (the book's code)")):
        ax[1].plot(t if len(x) == len(t) else tb, 100 * np.linalg.norm(x - x[0], axis=1) / n0, label=label)
    ax[1].set_ylabel("|L(t) - L(0)| / |L(0)| [%]")
    ax[1].set_xlabel("time [s]")
    box = save(plt, fig, ax[1], os.path.join(folder, "kajita_box.png"))

    t, p, R = simulate_top("rk4")
    tb, pb, Rb, _, _ = book_top()
    _, pf, Rf, _, _ = book_top(dt=TOP["dt"] / 10)
    _, _, c = top_inertia()
    head, headb, headf = p + R @ (2 * c), pb + Rb @ (2 * c), pf + Rf @ (2 * c)      # the shaft's upper end
    fig, ax = plt.subplots(1, 2, figsize=(10, 4.5))
    ax[0].plot(t, head[:, 2], label="shaft's upper end, RK4 (rd.simulate)")
    ax[0].plot(tb, headb[:, 2], "--", label="the book's code (explicit Euler)")
    ax[0].plot(t, p[:, 2], label="tip, RK4 (rd.simulate)")
    ax[0].plot(tb, pb[:, 2], "--", label="tip, the book's code")
    ax[0].set_xlabel("time [s]")
    ax[0].set_ylabel("height [m]")
    ax[0].set_title("Kajita's spinning top (section 6.3.4), dt = 0.002 s")
    ax[0].legend(fontsize=8)
    ax[1].plot(head[:, 0], head[:, 1], label="RK4 (rd.simulate)")
    ax[1].plot(headb[:, 0], headb[:, 1], "--", label="the book's code")
    ax[1].plot(headf[:, 0], headf[:, 1], ":", color="C3", label="the book's code, dt / 10")
    ax[1].plot(p[:, 0], p[:, 1], color="C2", label="tip, RK4")
    ax[1].set_aspect("equal")
    ax[1].set_xlabel("x [m]")
    ax[1].set_ylabel("y [m]")
    ax[1].set_title("the shaft's upper end precesses (top view)")
    return box, save(plt, fig, ax[1], os.path.join(folder, "kajita_top.png"))


def save(plt, fig, legend_axis, path):
    """The figure with the last axis' legend, laid out, written to path and closed; returns path."""
    legend_axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m robot_dynamics.demo.kajita", description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default="docs", help="where to write the PNGs (default: docs)")
    for path in figures(parser.parse_args(argv).folder):
        print("wrote", path)


if __name__ == "__main__":
    main()
