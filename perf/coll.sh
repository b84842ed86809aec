#!/bin/bash
# Grapevine's team collectives (perf/coll, over shm under gvrun) against
# Open MPI's (perf/coll_mpi, over vader under mpirun) on 2, 4 and 8 ranks,
# in one run: the two take turns launch by launch (Grapevine first in odd
# pairs, Open MPI first in even ones), N pairs per rank count. Prints one
# Markdown table: per rank count and measurement, each side's median and
# the median of the paired ratios, against the targets (8-byte all-reduce
# and broadcast latency within 1.5x of Open MPI's; 1 MiB broadcast at
# least 0.8x of its bandwidth).
# Usage: perf/coll.sh [--pairs N] [--ranks "2 4 8"] [-- COLL_ARGS...]
#   BUILD (default build) is the build directory; COLL_ARGS go to both
#   programs (perf/coll.h: -i calls per sample, -r samples, -S bytes).
# SPDX-License-Identifier: BSD-3-Clause
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAIRS=5
RANKS="2 4 8"
ARGS=(-i 500 -r 7)
while [ $# -gt 0 ]; do
    case $1 in
    --pairs) [ $# -ge 2 ] || { echo "coll.sh: --pairs needs a value" >&2; exit 2; }; PAIRS=$2; shift 2 ;;
    --ranks) [ $# -ge 2 ] || { echo "coll.sh: --ranks needs a value" >&2; exit 2; }; RANKS=$2; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    *) echo "coll.sh: unknown option $1 (accepted: --pairs N, --ranks \"2 4 8\", -- COLL_ARGS)" >&2; exit 2 ;;
    esac
done
case $PAIRS in '' | *[!0-9]* | 0) echo "coll.sh: --pairs wants a positive integer, got '$PAIRS'" >&2; exit 2 ;; esac
for n in $RANKS; do
    case $n in '' | *[!0-9]* | 0 | 1) echo "coll.sh: --ranks wants counts of at least 2, got '$n'" >&2; exit 2 ;; esac
done
for p in "$BUILD/perf/coll" "$BUILD/perf/coll_mpi" "$BUILD/bin/gvrun"; do
    [ -x "$p" ] || { echo "coll.sh: $p not built (make $p)" >&2; exit 1; }
done
command -v mpirun >/dev/null || { echo "coll.sh: no mpirun (apt-get install openmpi-bin)" >&2; exit 77; }
# Open MPI refuses root unless told; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

out=$(mktemp) log=$(mktemp)
trap 'rm -f "$out" "$log"' EXIT
run() { # impl nranks pair
    local rc
    if [ "$1" = gv ]; then
        GV_TRANSPORT=shm timeout -k 5 600 "$BUILD/bin/gvrun" -n "$2" "$BUILD/perf/coll" "${ARGS[@]}" > "$log" 2>&1
    else
        timeout -k 5 600 mpirun --oversubscribe -np "$2" --mca btl self,vader \
            "$BUILD/perf/coll_mpi" "${ARGS[@]}" > "$log" 2>&1 < /dev/null
    fi
    rc=$?
    if [ $rc != 0 ]; then
        echo "coll.sh: $1 on $2 ranks (pair $3) failed with status $rc:" >&2
        tail -5 "$log" >&2
        return
    fi
    # "coll impl=gv ranks=4 op=bcast form=blocking bytes=8 us=3.2 [MBps=...]"
    awk -v p="$3" '/^coll / { f = ""; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         val = ("MBps" in v) ? v["MBps"] : v["us"]
         print v["impl"], v["ranks"], v["op"] "/" v["form"] "/" v["bytes"], p, val; delete v }' "$log" >> "$out"
}
for n in $RANKS; do
    for ((i = 1; i <= PAIRS; i++)); do
        if ((i % 2)); then run gv "$n" "$i"; run mpi "$n" "$i"
        else run mpi "$n" "$i"; run gv "$n" "$i"; fi
        echo "coll.sh: $n ranks, pair $i/$PAIRS done" >&2
    done
done
echo "| ranks | measurement | Grapevine (shm) | Open MPI (vader) | Grapevine/Open MPI | target | met |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
awk '
    function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { v[$1, $2, $3, $4] = $5; key[$2 " " $3] = 1; pairs[$4] = 1 }
    END {
        nk = 0
        for (k in key) keys[++nk] = k
        for (i = 1; i <= nk; i++) for (j = i + 1; j <= nk; j++) {
            split(keys[i], a, " "); split(keys[j], b, " ")
            if ((b[1] + 0 < a[1] + 0) || ((b[1] == a[1]) && (b[2] < a[2]))) { t = keys[i]; keys[i] = keys[j]; keys[j] = t } }
        for (i = 1; i <= nk; i++) {
            split(keys[i], a, " "); n = a[1]; m = a[2]; split(m, mm, "/")
            ng = nm = nr = 0; delete g; delete o; delete r
            for (p in pairs) {
                if (("gv" SUBSEP n SUBSEP m SUBSEP p) in v) g[++ng] = v["gv", n, m, p]
                if (("mpi" SUBSEP n SUBSEP m SUBSEP p) in v) o[++nm] = v["mpi", n, m, p]
                if ((("gv" SUBSEP n SUBSEP m SUBSEP p) in v) && (("mpi" SUBSEP n SUBSEP m SUBSEP p) in v) && v["mpi", n, m, p] > 0)
                    r[++nr] = v["gv", n, m, p] / v["mpi", n, m, p] }
            bw = (mm[3] + 0 > 8)
            unit = bw ? "MB/s" : "us"
            ratio = med(r, nr)
            if (bw) { target = ">= 0.8"; met = (ratio >= 0.8) ? "yes" : "no" }
            else    { target = "<= 1.5"; met = (ratio <= 1.5) ? "yes" : "no" }
            printf "| %d | %s %s %s B (%s) | %.2f | %.2f | %.2f (%d pairs) | %s | %s |\n", n, mm[1], mm[2], mm[3], unit,
                   med(g, ng), med(o, nm), ratio, nr, target, met } }' "$out"
