"""Time-optimal path parameterization by reachability analysis: TOPP-RA (Pham and Pham, "A New
Approach to Time-Optimal Path Parameterization Based on Reachability Analysis", IEEE T-RO 2018).

Gridpoint i of the path (i = 0..N, collocation) constrains u = sdd, held on segment i, and
x = sd^2 by rows  lo <= A u + B x <= hi  (ROWS columns):

    effort        A = M q',  B = M q'' + C(q, q') q',  lo, hi = -+tau_max - g    (one per joint)
    acceleration  A = q',    B = q'',                  lo, hi = -+qdd_max

and x by x_min <= x <= x_max (the joint velocity limits, x <= (qd_max / |q'_j|)^2, and rows whose
A is zero); segment i joins them: x_{i+1} = x_i + 2 ds_i u_i. The paper's two passes:

    backward  K_N = {x_end};  K_i = {x: some u allowed at (i, x) with x + 2 ds_i u in K_{i+1}}
              (the controllable sets)
    forward   x_0 = x_start;  u_i = the largest u allowed at (i, x_i) with x_i + 2 ds_i u in
              K_{i+1} (greedy), x_{i+1} = x_i + 2 ds_i u_i

Each step is a linear program in (u, x), solved exactly here: at a fixed x every row
bounds u from one side, so the u allowed form an interval [L(x), U(x)], L the highest lower
bound (convex in x), U the lowest upper bound (concave); the segment to K_{i+1} adds the row
klo <= x + 2 ds u <= khi (row index R, after the stage's rows). The forward step is U(x_i).
The backward step wants the largest and the smallest x with L(x) <= U(x): U - L is concave and
piecewise linear, so Newton's method on it from an end of the x range moves monotonically onto
the answer, each step landing where the two rows active at the current x cross (one to three
steps here); an apparent dead end is confirmed over every vertex (`vertex_search`).
"""
import numpy as np

from .common import finite
from .jit import fast, released

#: first_bad_gridpoint's codes
GOOD, NOT_INCREASING, STILL, BAD_S, BAD_Q, BAD_DQ, BAD_DDQ = 0, 1, 2, 3, 4, 5, 6
#: a row: A, B, lo, hi
ROW_A, ROW_B, ROW_LO, ROW_HI, ROW_COLS = 0, 1, 2, 3, 4
OK, INFEASIBLE, UNBOUNDED, NOT_CONTROLLABLE = 0, 1, 2, 3
#: an interval [L, U] of u counts as non-empty while L - U is within this fraction of the scale of
#: the terms L and U come from (rounding where two rows cross)
EPS = 1e-12
#: values that tie within this fraction pick the piece of L or U on the side Newton moves to
TIE = 1e-14
INF = np.inf


@released
def first_bad_gridpoint(s, q, dq, ddq):
    """(code, gridpoint) of the first input that cannot be timed: NaN or inf, s not increasing, a
    gridpoint where q' is zero (the path does not move with s); (GOOD, -1) if none."""
    for i in range(s.shape[0]):
        if not np.isfinite(s[i]):
            return BAD_S, i
        if i and not s[i] > s[i - 1]:
            return NOT_INCREASING, i
        for code, x in ((BAD_Q, q), (BAD_DQ, dq), (BAD_DDQ, ddq)):
            if not finite(x[i]):
                return code, i
        moving = False
        for j in range(dq.shape[1]):
            moving = moving or dq[i, j] != 0.0
        if not moving:
            return STILL, i
    return GOOD, -1


@released
def stage_rows(a, b, c, dq, ddq, effort, accel, vmax, rows, xrange):
    """The rows of every gridpoint (rows: (N + 1, R, ROW_COLS), R = the finite limits of effort
    and accel) and its x range (xrange: (N + 1, 2)): x >= 0, x <= (vmax_j / |q'_j|)^2, and the
    bound a row whose A is zero puts on x. Returns the first gridpoint whose x range is empty
    (or whose zero-A row fails at every x), else -1."""
    n1, nv = a.shape
    for i in range(n1):
        r = 0
        for j in range(nv):
            if effort[j] < INF:
                rows[i, r, ROW_A], rows[i, r, ROW_B] = a[i, j], b[i, j]
                rows[i, r, ROW_LO], rows[i, r, ROW_HI] = -effort[j] - c[i, j], effort[j] - c[i, j]
                r += 1
        for j in range(nv):
            if accel[j] < INF:
                rows[i, r, ROW_A], rows[i, r, ROW_B] = dq[i, j], ddq[i, j]
                rows[i, r, ROW_LO], rows[i, r, ROW_HI] = -accel[j], accel[j]
                r += 1
        lo, hi = 0.0, INF
        for j in range(nv):
            if vmax[j] < INF and dq[i, j] != 0.0:
                hi = min(hi, (vmax[j] / dq[i, j]) ** 2)
        for k in range(r):
            if rows[i, k, ROW_A] == 0.0:
                B, rlo, rhi = rows[i, k, ROW_B], rows[i, k, ROW_LO], rows[i, k, ROW_HI]
                if B > 0.0:
                    lo, hi = max(lo, rlo / B), min(hi, rhi / B)
                elif B < 0.0:
                    lo, hi = max(lo, rhi / B), min(hi, rlo / B)
                elif rlo > 0.0 or rhi < 0.0:
                    lo = INF
        xrange[i, 0], xrange[i, 1] = lo, hi
        if not lo <= hi:
            return i
    return -1


@fast
def row_ab(rows, i, r, d2):
    """A and B of row r of gridpoint i; r = R: the segment's row x + d2 u."""
    if r == rows.shape[1]:
        return d2, 1.0
    return rows[i, r, ROW_A], rows[i, r, ROW_B]


@fast
def u_interval(rows, i, x, d2, klo, khi, toward):
    """The u allowed at gridpoint i and x, with klo <= x + d2 u <= khi: (L, its row, the row's
    bound that gives it, U, its row, its bound, the rounding scale of U - L). Values that tie
    pick the piece valid on the side `toward` (-1: smaller x, +1: larger)."""
    R = rows.shape[1]
    U, ru, cu, su, eu = (khi - x) / d2, R, khi, -1.0 / d2, (abs(khi) + abs(x)) / d2
    L, rl, cl, sl, el = (klo - x) / d2, R, klo, -1.0 / d2, (abs(klo) + abs(x)) / d2
    for r in range(R):
        A = rows[i, r, ROW_A]
        if A == 0.0:
            continue
        B = rows[i, r, ROW_B]
        up, dn = (rows[i, r, ROW_HI], rows[i, r, ROW_LO]) if A > 0.0 else (rows[i, r, ROW_LO], rows[i, r, ROW_HI])
        slope, bx = -B / A, abs(B * x)
        high, low = (up - B * x) / A, (dn - B * x) / A
        tie = TIE * (abs(U) + abs(high)) if U < INF else 0.0
        if high < U - tie or (high <= U + tie and slope * toward < su * toward):
            U, ru, cu, su, eu = high, r, up, slope, (abs(up) + bx) / abs(A)
        tie = TIE * (abs(L) + abs(low)) if L > -INF else 0.0
        if low > L + tie or (low >= L - tie and slope * toward > sl * toward):
            L, rl, cl, sl, el = low, r, dn, slope, (abs(dn) + bx) / abs(A)
    return L, rl, cl, U, ru, cu, el + eu


@fast
def allowed(L, U, scale):
    """L <= U but for rounding: each bound (C - B x) / A is good to about 1e-16 of
    (|C| + |B x|) / |A| (its scale), however small the bound itself."""
    return L - U <= EPS * scale


@fast
def crossing(rows, i, rl, cl, ru, cu, d2):
    """The x where row rl's lower bound on u (A_l u + B_l x = cl) meets row ru's upper one."""
    al, bl = row_ab(rows, i, rl, d2)
    am, bm = row_ab(rows, i, ru, d2)
    return (cu * al - cl * am) / (bm * al - bl * am)


@fast
def extreme_x(rows, i, xlo, xhi, d2, klo, khi, toward):
    """The largest (toward = -1: Newton from xhi down) or smallest (+1: from xlo up) x in
    [xlo, xhi] with a u allowed at gridpoint i that reaches [klo, khi]: (status, x, the row of L
    there, the row of U there)."""
    x = xhi if toward < 0.0 else xlo
    if x == INF:    # no bound on x: start where the segment's upper row meets a lower row beyond it
        x = start_below_infinity(rows, i, d2, khi)
        if x == INF:
            return UNBOUNDED, x, -1, -1
    R = rows.shape[1]
    for _ in range(R + 4):
        L, rl, cl, U, ru, cu, e = u_interval(rows, i, x, d2, klo, khi, toward)
        if allowed(L, U, e):
            return OK, x, rl, ru
        xn = crossing(rows, i, rl, cl, ru, cu, d2)
        if not ((xn < x) if toward < 0.0 else (xn > x)):
            break
        if not (xlo <= xn <= xhi):
            break
        x = xn
    return vertex_search(rows, i, xlo, xhi, d2, klo, khi, toward)


@fast
def start_below_infinity(rows, i, d2, khi):
    """A start for Newton from above when nothing bounds x: the least x where the segment's
    upper bound (khi - x) / d2 meets a lower bound that falls more slowly; INF if none does."""
    best = INF
    for r in range(rows.shape[1]):
        A = rows[i, r, ROW_A]
        if A == 0.0:
            continue
        B = rows[i, r, ROW_B]
        if -B / A > -1.0 / d2:
            dn = rows[i, r, ROW_LO] if A > 0.0 else rows[i, r, ROW_HI]
            best = min(best, crossing(rows, i, r, dn, rows.shape[1], khi, d2))
    return max(best, 0.0)


@fast
def vertex_search(rows, i, xlo, xhi, d2, klo, khi, toward):
    """The extreme x over every candidate: the ends of [xlo, xhi] and each crossing of two rows'
    bounds (the feasible x form an interval whose ends are among them). O(R^3): only where
    Newton stalls (a tie it misread, or no feasible x at all)."""
    R = rows.shape[1]
    best, found, brl, bru = 0.0, False, -1, -1
    for k in range(-2, 4 * (R + 1) * (R + 1)):
        if k == -2:
            x = xlo
        elif k == -1:
            x = xhi
        else:
            l, m, sides = k // (4 * (R + 1)), (k // 4) % (R + 1), k % 4
            if l >= m:
                continue
            al, bl = row_ab(rows, i, l, d2)
            am, bm = row_ab(rows, i, m, d2)
            det = bm * al - bl * am
            if det == 0.0:
                continue
            x = (side(rows, i, m, klo, khi, sides % 2) * al - side(rows, i, l, klo, khi, sides // 2) * am) / det
        if not (xlo <= x <= xhi and x < INF) or (found and (x <= best if toward < 0.0 else x >= best)):
            continue
        L, rl, _, U, ru, _, e = u_interval(rows, i, x, d2, klo, khi, toward)
        if allowed(L, U, e):
            best, found, brl, bru = x, True, rl, ru
    if found:
        return OK, best, brl, bru
    x = xhi if xhi < INF else xlo
    L, rl, _, U, ru, _, e = u_interval(rows, i, x, d2, klo, khi, toward)
    return INFEASIBLE, x, rl, ru


@fast
def side(rows, i, r, klo, khi, which):
    """Bound `which` (0: lo, 1: hi) of row r (R: the segment's [klo, khi])."""
    if r == rows.shape[1]:
        return khi if which else klo
    return rows[i, r, ROW_HI] if which else rows[i, r, ROW_LO]


@fast
def backward(rows, xrange, ds, K, brake, info):
    """The controllable sets K_i = [K[i, 0], K[i, 1]] from K[N] (set by the caller) down to K[0];
    brake[i]: the row whose lower bound on u ends K_i above (the limit that braking for what
    follows meets; -1 where the x range ends it). Returns a status; info: (gridpoint, L's row,
    U's row) of a failure."""
    N = ds.shape[0]
    for i in range(N - 1, -1, -1):
        d2, klo, khi = 2.0 * ds[i], K[i + 1, 0], K[i + 1, 1]
        status, xh, rl, ru = extreme_x(rows, i, xrange[i, 0], xrange[i, 1], d2, klo, khi, -1.0)
        if status != OK:
            info[0], info[1], info[2] = i, rl, ru
            return status
        status, xl, _, _ = extreme_x(rows, i, xrange[i, 0], xh, d2, klo, khi, 1.0)
        K[i, 0], K[i, 1] = min(xl, xh), xh
        if rl == rows.shape[1]:     # K_i+1's bottom ties with the top: name the stage's row there
            L, rl, _, _, _, _, e = u_interval(rows, i, xh, d2, -INF, INF, -1.0)
            rl = rl if allowed((klo - xh) / d2, L, e) else -1
        brake[i] = rl if xh < xrange[i, 1] else -1
    return OK


@fast
def forward(rows, ds, K, x, u, active, info):
    """The greedy pass from x[0] (set by the caller): u_i the largest allowed with x_{i+1} in
    K_{i+1}; active[i]: the row of that bound (R: K_{i+1}'s top). Returns a status."""
    N = ds.shape[0]
    for i in range(N):
        d2 = 2.0 * ds[i]
        L, rl, _, U, ru, _, e = u_interval(rows, i, x[i], d2, K[i + 1, 0], K[i + 1, 1], 1.0)
        if not allowed(L, U, e):
            info[0], info[1], info[2] = i, rl, ru
            return NOT_CONTROLLABLE
        xn = min(max(x[i] + d2 * U, K[i + 1, 0], 0.0), K[i + 1, 1])
        x[i + 1] = xn
        u[i] = (xn - x[i]) / d2
        active[i] = ru
    return OK


@released
def last_acceleration(rows, i, x, u_before):
    """The u at the last gridpoint: u_before (the last segment's) where it is allowed there, else
    the nearest allowed one."""
    L, _, _, U, _, _, _ = u_interval(rows, i, x, 1.0, -INF, INF, 1.0)
    return min(max(u_before, L), U)


@released
def time_optimal(rows, xrange, ds, x_start, x_end, K, x, u, brake, active, info):
    """Both passes: K[N] = {x_end} (which gridpoint N must allow), the controllable sets, then
    x_start checked against K_0 and the greedy profile. Returns a status; info: (gridpoint,
    L's row, U's row) of a failure (a start outside K_0: gridpoint 0, rows -1)."""
    N = ds.shape[0]
    L, rl, _, U, ru, _, e = u_interval(rows, N, x_end, 1.0, -INF, INF, 1.0)
    if not (allowed(L, U, e) and xrange[N, 0] <= x_end <= xrange[N, 1] * (1.0 + EPS)):
        info[0], info[1], info[2] = N, rl, ru
        return INFEASIBLE
    K[N, 0], K[N, 1] = x_end, x_end
    status = backward(rows, xrange, ds, K, brake, info)
    if status != OK:
        return status
    if not (K[0, 0] * (1.0 - EPS) <= x_start <= K[0, 1] * (1.0 + EPS)):
        info[0], info[1], info[2] = 0, -1, -1
        return NOT_CONTROLLABLE
    x[0] = min(max(x_start, K[0, 0]), K[0, 1])
    return forward(rows, ds, K, x, u, active, info)


#: what limits a gridpoint (TimedPath.limit_kind): nothing named, a joint's effort, acceleration, velocity
NO_LIMIT, EFFORT, ACCELERATION, VELOCITY = 0, 1, 2, 3


@released
def assemble(ds, x, u, u_end, K, a, b, c, dq, ddq, vmax, row_kind, row_joint, brake, active,
             sd, t, v, acc, tau, kind, joint):
    """The timed path from the profile: sd = sqrt(x), t from dt_i = 2 ds_i / (sd_i + sd_i+1)
    (constant u on each segment), v = q' sd, qdd = q' u + q'' x and tau = (M q') u +
    (M q'' + C q') x + g with gridpoint i's u_i (u_end at the last), and what limits each
    gridpoint: a joint at its velocity limit, else the row that bounds u_i; where that is
    K_{i+1}'s top, the row that braking meets on K_i's top if x_i is there, else gridpoint i+1's
    limit. Returns the first segment with no speed at either end, or -1."""
    N, nv = ds.shape[0], a.shape[1]
    for i in range(N + 1):
        sd[i] = np.sqrt(x[i])
    t[0] = 0.0
    for i in range(N):
        if not sd[i] + sd[i + 1] > 0.0:
            return i
        t[i + 1] = t[i] + 2.0 * ds[i] / (sd[i] + sd[i + 1])
    R = row_kind.shape[0]
    for i in range(N, -1, -1):
        ui = u[i] if i < N else u_end
        kind[i], joint[i] = NO_LIMIT, -1
        for j in range(nv):
            v[i, j] = dq[i, j] * sd[i]
            acc[i, j] = dq[i, j] * ui + ddq[i, j] * x[i]
            tau[i, j] = a[i, j] * ui + b[i, j] * x[i] + c[i, j]
            if abs(v[i, j]) >= vmax[j] * (1.0 - 1e-9):
                kind[i], joint[i] = VELOCITY, j
        if kind[i] == NO_LIMIT and i < N:
            if active[i] < R:
                kind[i], joint[i] = row_kind[active[i]], row_joint[active[i]]
            elif x[i] >= K[i, 1] * (1.0 - 1e-9) and 0 <= brake[i] < R:
                kind[i], joint[i] = row_kind[brake[i]], row_joint[brake[i]]
            else:
                kind[i], joint[i] = kind[i + 1], joint[i + 1]
    return -1
