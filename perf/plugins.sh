#!/bin/bash
# Plug-in transports against the monolithic build: ping-pong latency (8 B,
# gv_am_send_now) and GUPS agg, over shm and ucx (UCX_TLS=sm,self), each
# linked two ways: to the shared library (where the plug-ins are loaded
# with dlopen) and to the static one. Two source trees, each built (make
# lib tools build/perf/pingpong build/perf/gups), take turns launch by
# launch (A then B in odd pairs, B then A in even ones), N pairs; prints,
# per row, each tree's median and the median of the paired ratios B/A.
# Usage: perf/plugins.sh TREE_A TREE_B [PAIRS]   (A: before, B: after)
# SPDX-License-Identifier: BSD-3-Clause
set -u
[ $# -ge 2 ] || { echo "usage: perf/plugins.sh TREE_A TREE_B [PAIRS]" >&2; exit 2; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) PAIRS=${3:-15}
case $PAIRS in '' | *[!0-9]* | 0) echo "plugins.sh: PAIRS wants a positive integer, got '$PAIRS'" >&2; exit 2 ;; esac
GUPS_ARGS=(--log2 20 --progress-interval 0)
PP_ARGS=(-s 8 -S 8 -r 7)

# The shared-library forms: the same sources, linked to the tree's
# libgrapevine.so (rpath), as an installed program would be.
for t in "$A" "$B"; do
    for p in pingpong gups; do
        [ -x "$t/build/perf/$p" ] || { echo "plugins.sh: $t/build/perf/$p not built" >&2; exit 1; }
        cc -std=gnu11 -O2 -g -pthread -I"$t/include" -I"$t/build/include" -I"$t" \
           -o "$t/build/perf/${p}_so" "$t/perf/$p.c" -L"$t/build/lib" -lgrapevine \
           -Wl,-rpath,"$t/build/lib" -lm || exit 1
    done
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# one launch: prints the figure (lat8_us or mups), or "fail"
one() { # tree transport prog
    local t=$1 tl=$2 p=$3 line
    case $p in pingpong*) args=("${PP_ARGS[@]}"); key=lat8_us ;; *) args=("${GUPS_ARGS[@]}"); key=mups ;; esac
    line=$(GV_TRANSPORT=$tl UCX_TLS=sm,self timeout 120 "$t/build/bin/gvrun" -n 2 \
           "$t/build/perf/$p" "${args[@]}" 2>/dev/null | grep -o "$key=[0-9.]*" | tail -1)
    echo "${line#*=}"
}
for ((i = 1; i <= PAIRS; i++)); do
    for tl in shm ucx; do
        for p in pingpong_so gups_so pingpong gups; do
            if ((i % 2)); then first=A; else first=B; fi
            for w in $first $([ $first = A ] && echo B || echo A); do
                t=$A; [ $w = B ] && t=$B
                v=$(one "$t" "$tl" "$p")
                echo "$tl $p $w $i ${v:-fail}" >> "$out"
            done
        done
    done
    echo "pair $i/$PAIRS done" >&2
done
printf '| transport | program (linked to) | figure | A median | B median | B/A (median of pairs) | pairs |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for tl in shm ucx; do
    for p in pingpong_so gups_so pingpong gups; do
        awk -v tl=$tl -v p=$p '
            function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
            $1 == tl && $2 == p && $5 != "fail" { v[$3, $4] = $5 }
            END { na = nb = nr = 0
                  for (k in v) { split(k, s, SUBSEP); if (s[1] == "A") xa[++na] = v[k]; else xb[++nb] = v[k]
                                 if (s[1] == "A" && (("B" SUBSEP s[2]) in v) && v[k] > 0) r[++nr] = v["B", s[2]] / v[k] }
                  kind = (p ~ /pingpong/) ? "8 B latency, us (lower is better)" : "GUPS agg, Mup/s (higher is better)"
                  link = (p ~ /_so$/) ? "shared" : "static"
                  name = p; sub(/_so$/, "", name)
                  printf "| %s | %s (%s) | %s | %.3f | %.3f | %.3f | %d |\n", tl, name, link, kind,
                         med(xa, na), med(xb, nb), med(r, nr), nr }' "$out"
    done
done
