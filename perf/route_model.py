#!/usr/bin/env python3
"""An analytic model of aggregation per GV_AGG_ROUTE (direct, node, node2).

Given nodes N, ranks per node R, the payload of a message, each rank's
injection rate (messages per second, destinations uniform over the ranks,
as in GUPS), the buffer (GV_AGG_BYTES, GV_AGG_CREDITS, GV_AGG_TIMEOUT_US)
and the network's latency and bandwidth, it predicts per route:

  dests     ranks a rank holds buffers to (as gvinfo -t -n -N counts them)
  bound     the bound on a rank's buffer memory: dests x (credits + 1) x
            GV_AGG_BYTES, plus, under node and node2, a window of 2 x
            GV_AGG_BYTES of envelopes per upstream link (a rank and a
            position on the way) that hands a relay some to forward
            (upstreams(); gv__am_route_upstreams counts them exactly)
  open      memory of the buffers open at once: one per destination
            whose batch is not shipped yet (fill / rate of that buffer,
            out of the time between ships), times GV_AGG_BYTES
  peak      open, plus the busiest relay's stash when it falls behind:
            the whole credit window (2 x GV_AGG_BYTES of envelopes) of
            every rank that hands it its own messages to forward (a
            sender outside handlers waits for credit only once its
            window is full); first_links() counts them
  fill      records in a batch of the buffer that leaves the node (direct:
            any; node, node2: the relay's buffer to another node) when it
            ships: full, or what arrived within the timeout, at most what
            the link's credit window lets a batch average (window_cap())
  t_fill    time to fill that buffer at its arrival rate
  hops      transport messages a message to another node takes at most
            (direct 1, node 3, node2 5, or 3 on 2 nodes)
  lat       a message's time to its handler when the job is not busy:
            per hop, the batch's wait (the lesser of t_fill and the
            timeout, halved: the average record waits half) plus the
            network latency, plus the batch's time on the wire

Records: 4 bytes of header plus the payload, padded to 4; under node and
node2 a message to another node carries a 12-byte envelope. The ways are
aggregator/am.c's (route_hop() is gv__am_route_hop line for line, node2's
grid included).

A batch's fill is what reaches its buffer within one timeout window, or
a full batch (window_fill): a rank's own records at its issuing rate for
the window's issuing time, a relay's forwarded ones at their rate over
the window's wall time. With a core to itself a rank's window is the
timeout of issuing (the table below). An oversubscribed rank issues in
bursts: windows() walks its measured timeline (issuing CPU time, pauses
in issuing counted by length) to the windows' number and their issuing
and wall time.

Calibration (--calibrate FILE): perf/route.sh's output, whose per-rank
lines (gups --per-rank) give each rank's updates, issuing CPU time, wall
time, pauses, batches by closing reason, records and batches on the
node-to-node hop and queued high-water mark. For each launch the model
walks every pair's messages along the route's hops, predicts each
buffer's fill from its rank's windows and its link's credit window, and
each rank's queued high-water mark (its open batches, and a window per
rank handing it its own messages to forward), and prints measured
against predicted fill (all batches, the node-to-node hop, the rest) and
the largest queued high-water mark, with the relative error, per launch
and as medians. perf/notes/route.md explains the formulas and where
they err.
--measure runs perf/route.sh --transport T --reps N first.

Usage: perf/route_model.py [--ranks-per-node 32] [--nodes 1,16,128,1024]
           [--payload 8] [--rate 2e6] [--agg-bytes 65536] [--credits 4]
           [--timeout-us 300] [--latency-us 2] [--bandwidth-gbs 10]
           [--poll 256] [--calibrate perf-route-output.txt]
           [--measure] [--transport tcp] [--reps 3]
SPDX-License-Identifier: BSD-3-Clause
"""
import argparse
import math
import re
import sys


# Envelope bytes a rank may have charged at one hop, in buffers
# (GV__AM_ROUTE_WINDOW_BATCHES in aggregator/am_internal.h).
WINDOW_BATCHES = 2
# A routed message's envelope header (route_hdr_t: source, destination,
# handler id, flags) and a stashed envelope's record in front of it
# (stash_rec_t: upstream link, length), aggregator/am.c.
ENV_HDR = 12
STASH_REC = 8


def pad4(n):
    return (n + 3) & ~3


def charge(env_len):
    """What an envelope of env_len bytes is charged to a link's window,
    and takes in a stash (aggregator/am.c charge())."""
    return STASH_REC + ((env_len + 7) & ~7)


def window_envelopes(a):
    """Envelopes of a.payload bytes a link's window holds."""
    return WINDOW_BATCHES * a.agg_bytes // charge(ENV_HDR + a.payload)


def window_cap(env_frac, rec_bytes, a):
    """The most records a batch carrying envelopes averages when its
    link's window binds: the window W (in envelopes) goes out as
    ceil(W / e) batches, e the envelopes of a full batch, the last one
    shipped partly full (a sender that waits for credit ships its open
    batch; a relay's closes at the timeout) while the credit of the
    earlier ones comes back: W / ceil(W / e) envelopes a batch, and the
    records that come with them (env_frac of the batch's are envelopes)."""
    if env_frac <= 0:
        return math.inf
    w = window_envelopes(a)
    full = a.agg_bytes / rec_bytes * env_frac
    return w / math.ceil(w / full) / env_frac


def served(nodes, rpn):
    """node: the most other nodes a rank serves (those whose number is
    its local index mod rpn): every other node with one rank per node,
    else the largest class, node numbers 0 mod rpn, from a rank of a node
    outside it."""
    return nodes - 1 if rpn == 1 else math.ceil(nodes / rpn)


def dests(route, nodes, rpn):
    """Largest number of ranks a rank buffers to (gv__am_route_peers)."""
    if route == "direct" or nodes <= 1:
        return nodes * rpn - 1
    return rpn - 1 + served(nodes, rpn)


def first_links(route, nodes, rpn):
    """Upstream links at position 0 of the busiest relay: the ranks that
    hand it their own messages to forward (a sender outside handlers,
    which waits for credit on that link). node: the node's other ranks,
    and the serving rank of each node it serves; node2: the node's other
    ranks, and the serving rank across each link it serves."""
    if route == "direct" or nodes <= 1 or rpn <= 1:
        return 0
    if route == "node":
        return rpn - 1 + served(nodes, rpn)
    cols, rows = grid(nodes)
    return rpn - 1 + math.ceil((cols - 1 + rows - 1) / rpn)


def upstreams(route, nodes, rpn):
    """Upstream links of the busiest relay (gv__am_route_upstreams, as
    gvinfo -t prints it; exact for node, and for node2 on 2 nodes and
    at 32 ranks per node on 16 and 128 nodes; at some small shapes (3, 9
    and 10 nodes of 2-4 ranks) above it). node: the node's other
    ranks (position 0) and, per node the relay serves, that node's
    serving rank at positions 0 and 1. node2: the node's other ranks at
    position 0; as the intermediate node C, the other ranks serving a
    link of C at positions 1 and 2; per link it serves, the serving rank
    across at positions 0 to 3."""
    if route == "direct" or nodes <= 1 or rpn <= 1:
        return 0
    if route == "node":
        return rpn - 1 + 2 * served(nodes, rpn)
    cols, rows = grid(nodes)
    links = cols - 1 + rows - 1
    if rows == 1:
        # every node linked to every other: node's ways, one link a node
        return rpn - 1 + 2 * math.ceil(links / rpn)
    return (rpn - 1 + 2 * min(rpn - 1, max(cols, rows) - 1) +
            4 * math.ceil(links / rpn))


def grid(nodes):
    """node2's grid: ceil(sqrt(nodes)) columns, rows to hold the nodes."""
    cols = math.isqrt(nodes - 1) + 1 if nodes > 1 else 1
    return cols, -(-nodes // cols)


def model_node2(nodes, rpn, a):
    """node2 (gv__am_route_hop): the nodes in a grid, a message to a node
    neither in the sender's row nor column going through the node in the
    sender's row and the destination's column; each node's links (row and
    column, rows + cols - 2 at most) served by its ranks in turn."""
    cols, rows = grid(nodes)
    links = cols - 1 + rows - 1
    rec = pad4(4 + 12 + a.payload)
    # A node sends lam x R / N to each other node: over one link to the
    # `links` it is linked to, over two to the others. The link-uses of a
    # node's traffic, spread over its links, give the messages per second
    # into one relay's buffer to another node.
    pair = a.rate * rpn / nodes
    rate = pair * (links + 2 * (nodes - 1 - links)) / links
    cap = a.agg_bytes // rec
    t_fill = cap / rate if rate > 0 else math.inf
    timeout = a.timeout_us * 1e-6
    fill = max(1.0, min(cap, rate * timeout)) if t_fill > timeout else cap
    fill = min(fill, window_cap(1.0, rec, a))
    d = rpn - 1 + math.ceil(links / rpn)
    bound = d * (a.credits + 1) * a.agg_bytes + \
        upstreams("node2", nodes, rpn) * WINDOW_BATCHES * a.agg_bytes
    open_mem = (rpn - 1) * a.agg_bytes + (d - rpn + 1) * a.agg_bytes * \
        min(1.0, rate * timeout)
    peak = open_mem + first_links("node2", nodes, rpn) * WINDOW_BATCHES * \
        a.agg_bytes
    # within A, to C, within C, to B, within B; on one row of nodes
    # (2 nodes) every node is linked to every other: as node's
    hops = 5 if rows > 1 else 3
    wait = min(t_fill, timeout) / 2
    wire = fill * rec / (a.bandwidth_gbs * 1e9)
    lat = hops * (wait + a.latency_us * 1e-6) + wire
    return dict(route="node2", nodes=nodes, dests=d, bound=bound,
                open=open_mem, peak=peak, fill=fill, cap=cap, t_fill=t_fill,
                hops=hops, lat=lat)


def model(route, nodes, rpn, a):
    if route == "node2" and nodes > 1:
        return model_node2(nodes, rpn, a)
    if route == "node2":
        route = "node"
    p = nodes * rpn
    lam = a.rate
    rec_local = pad4(4 + a.payload)
    if route == "direct" or nodes <= 1:
        rec = rec_local
        rate = lam / max(p - 1, 1)            # into one destination's batch
        hops = 1
    else:
        rec = pad4(4 + 12 + a.payload)
        # Everything node A sends to node B (R ranks x lam x R / P) goes
        # through one relay's one buffer.
        rate = lam * rpn * rpn / p
        hops = 3
    cap = a.agg_bytes // rec
    t_fill = cap / rate if rate > 0 else math.inf
    timeout = a.timeout_us * 1e-6
    # A rank with a core to itself issues without pauses: a timeout
    # window is the timeout, of issuing (windows() with no pauses). A
    # batch ships with at least the record that opened it.
    fill = max(1.0, window_fill(rate, 0, timeout, timeout, a.agg_bytes, rec))
    if route == "node" and nodes > 1:
        fill = min(fill, window_cap(1.0, rec, a))
    d = dests(route, nodes, rpn)
    bound = d * (a.credits + 1) * a.agg_bytes
    bound += upstreams(route, nodes, rpn) * WINDOW_BATCHES * a.agg_bytes
    # A destination's buffer is open from its first record until it ships
    # (full, or the timeout): always, once a record comes within each
    # timeout; else about rate x timeout of the time.
    open_mem = d * a.agg_bytes * min(1.0, rate * timeout)
    if route == "node" and nodes > 1:
        # the local hops: buffers to the other ranks of the node, busy
        open_mem = (rpn - 1) * a.agg_bytes + (d - rpn + 1) * a.agg_bytes * \
            min(1.0, rate * timeout)
    peak = open_mem + first_links(route, nodes, rpn) * WINDOW_BATCHES * \
        a.agg_bytes
    wait = min(t_fill, timeout) / 2
    wire = fill * rec / (a.bandwidth_gbs * 1e9)
    lat = hops * (wait + a.latency_us * 1e-6) + wire
    return dict(route=route, nodes=nodes, dests=d, bound=bound,
                open=open_mem, peak=peak, fill=fill, cap=cap, t_fill=t_fill,
                hops=hops, lat=lat)


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def table(a):
    print(f"# {a.ranks_per_node} ranks per node, {a.payload}-byte messages "
          f"at {a.rate:.3g}/s per rank, GV_AGG_BYTES {a.agg_bytes}, credits "
          f"{a.credits}, timeout {a.timeout_us} us, latency {a.latency_us} "
          f"us, {a.bandwidth_gbs} GB/s")
    print(f"{'nodes':>6} {'route':>6} {'dests':>6} {'bound/rank':>11} "
          f"{'open/rank':>10} {'peak/rank':>10} {'fill':>13} {'t_fill':>10} {'hops':>4} "
          f"{'latency':>9}")
    for n in a.nodes:
        for route in ("direct", "node", "node2"):
            m = model(route, n, a.ranks_per_node, a)
            print(f"{n:>6} {route:>6} {m['dests']:>6} "
                  f"{human(m['bound']):>11} {human(m['open']):>10} "
                  f"{human(m['peak']):>10} "
                  f"{m['fill']:>6.0f}/{m['cap']:<6} "
                  f"{m['t_fill'] * 1e3:>8.2f}ms {m['hops']:>4} "
                  f"{m['lat'] * 1e6:>7.0f}us")


# ---- what a batch sees: windows, fill, calibration ----------------------

GAP_US = (50, 100, 200, 300, 500, 1000, 2000, 5000)


def windows(issue_s, wall_s, polls, gaps_ge, timeout, seed=1):
    """A rank's timeout windows, from its measured timeline.

    The rank issues for issue_s seconds of CPU in `polls` equal stretches
    (one per gv_progress call), separated by pauses in issuing (time off
    the CPU, or handling what arrived): gaps_ge[k] of them last at least
    GAP_US[k] us; each count band is given its geometric middle, the
    pauses of 5 ms or more share what is left of wall_s, shorter ones
    than 50 us count as none. The pauses are put in a random order. A
    batch opens when the last one closed and closes at the end of the
    first gv_progress call (a pause's end) at which it is timeout old (the
    aggregator looks at the clock there). Returns (windows, issuing
    seconds per window, wall seconds per window). With no pauses (a rank
    that has a core to itself) a window is the timeout, of issuing."""
    import random
    if polls < 1 or issue_s <= 0:
        return 1, issue_s, wall_s
    counts = [gaps_ge[k] - (gaps_ge[k + 1] if k + 1 < len(gaps_ge) else 0)
              for k in range(len(gaps_ge))]
    lens = []
    for k, c in enumerate(counts[:-1]):
        lens += [math.sqrt(GAP_US[k] * GAP_US[k + 1]) * 1e-6] * max(c, 0)
    if counts[-1] > 0:
        rest = wall_s - issue_s - sum(lens)
        lens += [max(rest / counts[-1], GAP_US[-1] * 1e-6)] * counts[-1]
    lens = lens[:polls]
    lens += [0.0] * (polls - len(lens))
    random.Random(seed).shuffle(lens)
    seg = issue_s / polls
    n = 0
    age = run = 0.0
    for pause in lens:
        age += seg + pause
        run += seg
        if age >= timeout:
            n += 1
            age = 0.0
    if n == 0:
        return 1, issue_s, wall_s
    return n, issue_s / n, (issue_s + sum(lens)) / n


def window_fill(own_rate, fwd_rate, w_issue, w_wall, cap_bytes, rec_bytes):
    """Records in a batch: what arrives in a timeout window, the rank's
    own at its issuing rate while it issues, forwarded ones (a relay's)
    at their rate over the wall time, or a full batch."""
    recs = own_rate * w_issue + fwd_rate * w_wall
    return min(recs, cap_bytes / rec_bytes) if rec_bytes else recs


def grid_link(a, n, nnodes, cols):
    """node2: the link from node a to node n (in its row or column),
    numbered over the row's nodes, then the column's, a left out
    (aggregator/am.c grid_link)."""
    ca, cn, ra, rn = a % cols, n % cols, a // cols, n // cols
    if rn == ra:
        return cn - (cn > ca)
    first = a - ca
    row_len = nnodes - first if nnodes - first < cols else cols
    return row_len - 1 + rn - (rn > ra)


def grid_next(a, b, nnodes, cols):
    """node2: the next node after a on the way to b: b if linked, else
    the node in a's row and b's column, or, if the short last row lacks
    it, the one in b's row and a's column (aggregator/am.c grid_next)."""
    if a // cols == b // cols or a % cols == b % cols:
        return b
    c = a - a % cols + b % cols
    return c if c < nnodes else b - b % cols + a % cols


def route_hop(route, node_of, members, me, dst):
    """The next rank from me toward dst under GV_AGG_ROUTE=node or node2
    (aggregator/am.c gv__am_route_hop, line for line)."""
    a, b = node_of[me], node_of[dst]
    if a == b:
        return dst
    if route == "node2":
        cols = grid(len(members))[0]
        n = grid_next(a, b, len(members), cols)
        out = grid_link(a, n, len(members), cols)
        inn = grid_link(n, a, len(members), cols)
    else:
        n, out, inn = b, b, a
    r = members[a][out % len(members[a])]
    if r != me:
        return r
    return members[n][inn % len(members[n])]


def predict_launch(route, ranks, a):
    """Per rank of one measured launch: predicted and measured records
    and batches, all and to other nodes, and queued bytes: the rank's
    open batches, and a window per upstream link at position 0 (a rank
    that hands it its own messages to forward) in its stash."""
    p = len(ranks)
    node_of = [r["node"] for r in ranks]
    members = {}
    for i, n in enumerate(node_of):
        members.setdefault(n, []).append(i)
    timeout = a.timeout_us * 1e-6
    rec_local = pad4(4 + a.payload)
    rec_env = pad4(4 + ENV_HDR + a.payload)
    # buf[a][b] = [own records, forwarded records, bytes, envelopes]
    buf = [dict() for _ in range(p)]
    # first[x]: the ranks that hand x their own messages to forward
    first = [set() for _ in range(p)]
    for s in range(p):
        per = ranks[s]["issued"] / p   # GUPS: uniform destinations
        for d in range(p):
            if d == s:
                continue
            if route == "direct" or node_of[d] == node_of[s]:
                e = buf[s].setdefault(d, [0.0, 0.0, 0.0, 0.0])
                e[0] += per
                e[2] += per * rec_local
                continue
            at = s
            while at != d:
                nxt = route_hop(route, node_of, members, at, d)
                e = buf[at].setdefault(nxt, [0.0, 0.0, 0.0, 0.0])
                e[0 if at == s else 1] += per
                if at == s and nxt == d:
                    # to the rank it relays to: into the open batch to
                    # it, without an envelope (not in internode_msgs)
                    e[2] += per * rec_local
                else:
                    e[2] += per * rec_env
                    e[3] += per
                if at == s and nxt != d:
                    first[nxt].add(s)
                at = nxt
    out = []
    for i, r in enumerate(ranks):
        issue_s = r["issue_cpu_ns"] * 1e-9
        wall_s = r["wall_ns"] * 1e-9
        polls = max(1, r["issued"] // a.poll)
        gaps = [r[f"gaps_{g}us"] for g in GAP_US]
        nwin, w_issue, w_wall = windows(issue_s, wall_s, polls, gaps,
                                        timeout)
        pr = dict(recs=0.0, batches=0.0, irecs=0.0, ibatches=0.0, open=0)
        for b, (own, fwd, nbytes, envs) in buf[i].items():
            recs = own + fwd
            rec_b = nbytes / recs
            per_win = window_fill(own / issue_s if issue_s else 0,
                                  fwd / wall_s, w_issue, w_wall,
                                  a.agg_bytes, rec_b)
            per_win = min(per_win, window_cap(envs / recs, rec_b, a))
            batches = max(recs / per_win if per_win >= 1 else recs, 1) + 1
            pr["recs"] += recs
            pr["batches"] += batches
            if node_of[b] != node_of[i]:
                pr["irecs"] += envs
                pr["ibatches"] += batches
            pr["open"] += 1 if per_win >= 1 else per_win
        pr["queued"] = (math.ceil(pr["open"]) * a.agg_bytes +
                        len(first[i]) * WINDOW_BATCHES * a.agg_bytes)
        ms = dict(recs=r["sent"] - r["self"] + r["relayed"],
                  batches=r["full"] + r["timeout"] + r["idle"] +
                  r["explicit"], irecs=r["internode_msgs"],
                  ibatches=r["internode_batches"], queued=r["queued_max"])
        out.append((pr, ms))
    return out


def read_launches(path, want_tl=None):
    """perf/route.sh's output: per launch (rep, nodes, route), its ranks'
    lines (gups --per-rank), in rank order, for one transport: @want_tl, or
    the only one the file holds."""
    pat = re.compile(r"^launch (\d+) (?:tl=(\S+) )?nodes=(\d+) "
                     r"route=(\w+) rank (\d+) node (\d+): (.*)$")
    launches = {}
    ranks_of = None
    tls = set()
    try:
        f = open(path)
    except OSError as e:
        sys.exit(f"route_model: cannot read {path}: {e.strerror}")
    with f:
        rows = []
        for line in f:
            m = re.search(r"medians over \d+ launches: (\d+) ranks over "
                          r"(\S+)", line)
            if m:
                ranks_of = int(m.group(1))
                if not tls:
                    tls.add(m.group(2))
            m = pat.match(line.strip())
            if m:
                rows.append(m)
    named = {m.group(2) for m in rows if m.group(2)}
    if named:
        tls = named
    if want_tl is None:
        if len(tls) > 1:
            sys.exit(f"route_model: {path} holds runs over {' '.join(sorted(tls))}: "
                     "name one with --transport")
        want_tl = next(iter(tls), None)
    elif tls and want_tl not in tls:
        sys.exit(f"route_model: {path} was measured over "
                 f"{' '.join(sorted(tls))}, not --transport {want_tl}")
    for m in rows:
        if m.group(2) and m.group(2) != want_tl:
            continue
        key = (int(m.group(3)), m.group(4), int(m.group(1)))
        row = dict(node=int(m.group(6)))
        for kv in m.group(7).split():
            k, v = kv.split("=")
            row[k] = int(v)
        launches.setdefault(key, {})[int(m.group(5))] = row
    return launches, ranks_of, want_tl


def rel(pred, meas):
    return (pred - meas) / meas if meas else float("nan")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return float("nan")
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def calibrate(a):
    launches, nranks, tl = read_launches(a.calibrate, a.transport)
    if not launches:
        sys.exit(f"route_model: {a.calibrate} holds no per-rank lines of "
                 "perf/route.sh (gups --per-rank)")
    print(f"# calibration against {a.calibrate}: {nranks} ranks over {tl}; "
          f"timeout {a.timeout_us} us, GV_AGG_BYTES {a.agg_bytes}, "
          f"{a.payload}-byte messages; err = (model - measured) / measured")
    print(f"{'nodes':>5} {'route':>6} {'launch':>6} | {'fill meas':>9} "
          f"{'model':>7} {'err':>5} | {'n2n meas':>8} {'model':>7} "
          f"{'err':>5} | {'local meas':>10} {'model':>7} {'err':>5} | "
          f"{'queued meas':>11} {'model':>9} {'err':>5}")
    summary = {}
    for (nodes, route, rep) in sorted(launches):
        ranks = launches[(nodes, route, rep)]
        if sorted(ranks) != list(range(len(ranks))):
            sys.exit(f"route_model: launch {rep} ({nodes} nodes, {route}) "
                     "lacks some ranks' lines")
        res = predict_launch(route, [ranks[i] for i in sorted(ranks)], a)
        tot = {k: 0.0 for k in ("pr", "pb", "mr", "mb", "pir", "pib",
                                "mir", "mib")}
        qm = qp = 0
        for pr, ms in res:
            tot["pr"] += pr["recs"]
            tot["pb"] += pr["batches"]
            tot["mr"] += ms["recs"]
            tot["mb"] += ms["batches"]
            tot["pir"] += pr["irecs"]
            tot["pib"] += pr["ibatches"]
            tot["mir"] += ms["irecs"]
            tot["mib"] += ms["ibatches"]
            qm = max(qm, ms["queued"])
            qp = max(qp, pr["queued"])
        fm, fp = tot["mr"] / tot["mb"], tot["pr"] / tot["pb"]
        row = dict(fill=(fm, fp), queued=(qm, qp))
        if route != "direct" and tot["mib"] > 0:
            row["n2n"] = (tot["mir"] / tot["mib"], tot["pir"] / tot["pib"])
            row["local"] = ((tot["mr"] - tot["mir"]) / (tot["mb"] - tot["mib"]),
                            (tot["pr"] - tot["pir"]) / (tot["pb"] - tot["pib"]))
        summary.setdefault((nodes, route), []).append(row)
        print_row(nodes, route, str(rep), row)
    print("# medians over the launches")
    for (nodes, route), rows in sorted(summary.items()):
        med = {}
        for k in ("fill", "n2n", "local", "queued"):
            if all(k in r for r in rows):
                med[k] = (median([r[k][0] for r in rows]),
                          median([r[k][1] for r in rows]))
        print_row(nodes, route, "median", med)


def print_row(nodes, route, label, row):
    def cell(k, w):
        if k not in row:
            return f"{'-':>{w}} {'-':>7} {'-':>5}"
        m, p = row[k]
        return f"{m:>{w}.0f} {p:>7.0f} {rel(p, m) * 100:>+4.0f}%"

    q = row["queued"]
    print(f"{nodes:>5} {route:>6} {label:>6} | {cell('fill', 9)} | "
          f"{cell('n2n', 8)} | {cell('local', 10)} | {human(q[0]):>11} "
          f"{human(q[1]):>9} {rel(q[1], q[0]) * 100:>+4.0f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks-per-node", type=int, default=32)
    ap.add_argument("--nodes", default="1,16,128,1024")
    ap.add_argument("--payload", type=int, default=8)
    ap.add_argument("--rate", type=float, default=2e6)
    ap.add_argument("--agg-bytes", type=int, default=65536)
    ap.add_argument("--credits", type=int, default=4)
    ap.add_argument("--timeout-us", type=float, default=300)
    ap.add_argument("--latency-us", type=float, default=2)
    ap.add_argument("--bandwidth-gbs", type=float, default=10)
    ap.add_argument("--poll", type=int, default=256)
    ap.add_argument("--calibrate")
    ap.add_argument("--transport")
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    try:
        a.nodes = [int(x) for x in a.nodes.split(",")]
    except ValueError:
        ap.error(f"--nodes takes numbers separated by commas, not "
                 f"'{a.nodes}'")
    if (a.ranks_per_node < 1 or min(a.nodes) < 1 or a.rate <= 0 or
            a.agg_bytes < 256 or a.payload < 0 or a.poll < 1 or
            a.reps < 1 or a.timeout_us <= 0):
        ap.error("ranks per node, nodes, --poll and --reps must be at "
                 "least 1, the rate and --timeout-us positive, --agg-bytes "
                 "at least 256")
    if a.measure:
        # Measure now: perf/route.sh over --transport, its output kept.
        import os
        import subprocess
        import tempfile
        here = os.path.dirname(os.path.abspath(__file__))
        fd, a.calibrate = tempfile.mkstemp(prefix="route_cal.", suffix=".txt")
        cmd = [os.path.join(here, "route.sh"), "--reps", str(a.reps),
               "--transport", a.transport or "tcp"]
        print(f"# {' '.join(cmd)} > {a.calibrate}", flush=True)
        with os.fdopen(fd, "w") as f:
            if subprocess.run(cmd, stdout=f).returncode != 0:
                sys.exit(f"route_model: perf/route.sh failed (its output: "
                         f"{a.calibrate})")
    if a.calibrate:
        calibrate(a)
        print()
    table(a)


if __name__ == "__main__":
    main()
