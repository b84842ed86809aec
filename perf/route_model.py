#!/usr/bin/env python3
"""An analytic model of aggregation per GV_AGG_ROUTE (direct, node).

Given nodes N, ranks per node R, the payload of a message, each rank's
injection rate (messages per second, destinations uniform over the ranks,
as in GUPS), the buffer (GV_AGG_BYTES, GV_AGG_CREDITS, GV_AGG_TIMEOUT_US)
and the network's latency and bandwidth, it predicts per route:

  dests     ranks a rank holds buffers to (as gvinfo -t -n -N counts them)
  bound     the bound on a rank's buffer memory: dests x (credits + 1) x
            GV_AGG_BYTES, plus, under node, a window of 2 x GV_AGG_BYTES
            of envelopes per rank that hands a relay some to forward
            (gv__am_route_upstreams: as many as dests for a relay)
  open      memory of the buffers open at once: one per destination
            whose batch is not shipped yet (fill / rate of that buffer,
            out of the time between ships), times GV_AGG_BYTES
  fill      records in a batch of the buffer that leaves the node (direct:
            any; node: the relay's buffer to another node) when it ships:
            full, or what arrived within the timeout
  t_fill    time to fill that buffer at its arrival rate
  hops      transport messages a message to another node takes (1 or 3)
  lat       a message's time to its handler when the job is not busy:
            per hop, the batch's wait (the lesser of t_fill and the
            timeout, halved: the average record waits half) plus the
            network latency, plus the batch's time on the wire

Records: 4 bytes of header plus the payload, padded to 4; under node a
message to another node carries a 12-byte envelope.

Calibration (--calibrate FILE): perf/route.sh's median lines give, for
each shape and route, the measured updates/s (the injection rate of a rank
is updates/s / ranks) and messages per transport message. The model then
predicts the fill for the measured rate and prints it beside the
measurement. GUPS makes a fixed number of updates and stops: its batches
are cut short by the idle and final flushes, so its measured fill is a
lower bound of the steady state the model describes.

Usage: perf/route_model.py [--ranks-per-node 32] [--nodes 1,16,128,1024]
           [--payload 8] [--rate 2e6] [--agg-bytes 65536] [--credits 4]
           [--timeout-us 300] [--latency-us 2] [--bandwidth-gbs 10]
           [--calibrate perf-route-output.txt]
SPDX-License-Identifier: BSD-3-Clause
"""
import argparse
import math
import re
import sys


# Envelope bytes a rank may have charged at one hop, in buffers
# (GV__AM_ROUTE_WINDOW_BATCHES in aggregator/am_internal.h).
WINDOW_BATCHES = 2


def pad4(n):
    return (n + 3) & ~3


def dests(route, nodes, rpn):
    """Largest number of ranks a rank buffers to (gv__am_route_peers)."""
    if route == "direct" or nodes <= 1:
        return nodes * rpn - 1
    return rpn - 1 + math.ceil((nodes - 1) / rpn)


def model(route, nodes, rpn, a):
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
    # A batch ships with at least the record that opened it.
    fill = max(1.0, min(cap, rate * timeout)) if t_fill > timeout else cap
    d = dests(route, nodes, rpn)
    bound = d * (a.credits + 1) * a.agg_bytes
    if route == "node" and nodes > 1:
        bound += d * WINDOW_BATCHES * a.agg_bytes
    # A destination's buffer is open from its first record until it ships
    # (full, or the timeout): always, once a record comes within each
    # timeout; else about rate x timeout of the time.
    open_mem = d * a.agg_bytes * min(1.0, rate * timeout)
    if route == "node" and nodes > 1:
        # the local hops: buffers to the other ranks of the node, busy
        open_mem = (rpn - 1) * a.agg_bytes + (d - rpn + 1) * a.agg_bytes * \
            min(1.0, rate * timeout)
    wait = min(t_fill, timeout) / 2
    wire = fill * rec / (a.bandwidth_gbs * 1e9)
    lat = hops * (wait + a.latency_us * 1e-6) + wire
    return dict(route=route, nodes=nodes, dests=d, bound=bound,
                open=open_mem, fill=fill, cap=cap, t_fill=t_fill,
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
          f"{'open/rank':>10} {'fill':>13} {'t_fill':>10} {'hops':>4} "
          f"{'latency':>9}")
    for n in a.nodes:
        for route in ("direct", "node"):
            m = model(route, n, a.ranks_per_node, a)
            print(f"{n:>6} {route:>6} {m['dests']:>6} "
                  f"{human(m['bound']):>11} {human(m['open']):>10} "
                  f"{m['fill']:>6.0f}/{m['cap']:<6} "
                  f"{m['t_fill'] * 1e3:>8.2f}ms {m['hops']:>4} "
                  f"{m['lat'] * 1e6:>7.0f}us")


def calibrate(a):
    pat = re.compile(r"nodes=(\d+) route=(\w+)\s+mups=([\d.]+) "
                     r"msgs_per_tl_msg=([\d.]+) queued_max_B=(\d+) "
                     r"bound_B=(\d+)")
    ranks = None
    rows = []
    with open(a.calibrate) as f:
        for line in f:
            m = re.search(r"medians over \d+ launches: (\d+) ranks", line)
            if m:
                ranks = int(m.group(1))
            m = pat.search(line)
            if m and line.startswith("nodes="):
                rows.append(m.groups())
    if ranks is None or not rows:
        sys.exit(f"route_model: {a.calibrate} holds no perf/route.sh "
                 "median lines")
    # The injection rate that matters is the rate while a rank issues, not
    # the average over the run: fit it on direct's measured fill (records
    # per batch = rate / (P - 1) x timeout, below a full batch), then
    # predict node's with it.
    timeout = a.timeout_us * 1e-6
    fitted = {}
    for nodes, route, mups, fill, qmax, bound in rows:
        if route == "direct":
            fitted[int(nodes)] = float(fill) * (ranks - 1) / timeout
    print(f"# calibration against {a.calibrate} ({ranks} ranks); 'fit': "
          f"node's fill predicted at the issuing rate fitted on direct's")
    print(f"{'nodes':>6} {'route':>6} {'rate/rank':>10} {'fill meas':>10} "
          f"{'fill model':>10} {'fill fit':>9} {'gvinfo':>11} "
          f"{'bound model':>11} {'queued max':>11}")
    for nodes, route, mups, fill, qmax, bound in rows:
        nodes = int(nodes)
        b = argparse.Namespace(**vars(a))
        b.rate = float(mups) * 1e6 / ranks
        m = model(route, nodes, ranks // nodes, b)
        # Measured messages per transport message counts the relays'
        # hops and the local hops too: under node it averages the three.
        fit = "-"
        if nodes in fitted:
            b.rate = fitted[nodes]
            fit = f"{model(route, nodes, ranks // nodes, b)['fill']:.1f}"
        print(f"{nodes:>6} {route:>6} {float(mups) * 1e6 / ranks:>10.3g} "
              f"{float(fill):>10.1f} {m['fill']:>10.1f} {fit:>9} "
              f"{human(int(bound)):>11} "
              f"{human(m['bound']):>11} {human(int(qmax)):>11}")


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
    ap.add_argument("--calibrate")
    a = ap.parse_args()
    try:
        a.nodes = [int(x) for x in a.nodes.split(",")]
    except ValueError:
        ap.error(f"--nodes takes numbers separated by commas, not "
                 f"'{a.nodes}'")
    if (a.ranks_per_node < 1 or min(a.nodes) < 1 or a.rate <= 0 or
            a.agg_bytes < 256 or a.payload < 0):
        ap.error("ranks per node and nodes must be at least 1, the rate "
                 "positive, --agg-bytes at least 256")
    if a.calibrate:
        calibrate(a)
        print()
    table(a)


if __name__ == "__main__":
    main()
