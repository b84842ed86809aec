#!/bin/bash
# GUPS agg per GV_AGG_ROUTE (direct, node, node2) on pretend nodes
# (GV_TEST_NODES), the routes taking turns in one run: updates/s, messages
# per transport message (the batches' average fill; relayed hops
# included), the largest send-queue
# high-water mark of any rank (measured), and gvinfo's bound per rank.
# Prints one line per launch, each rank's issuing and counters (gups
# --per-rank: perf/route_model.py --calibrate reads them), and the medians
# per transport, shape and route. --transport takes one or more
# transports ("tcp shm+tcp"), which take turns too.
# Usage: perf/route.sh [--reps N] [--ranks R] [--nodes "2 4"]
#                      [--transport "T..."] [-- GUPS_ARGS...]
set -u
BUILD=${BUILD:-build}
REPS=3 RANKS=8 NODES="2 4" TL=tcp
ARGS=(--mode agg --log2 18)
while [ $# -gt 0 ]; do
    case $1 in
    --reps) REPS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --transport) TL=$2; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    *) echo "usage: perf/route.sh [--reps N] [--ranks R] [--nodes \"2 4\"] [--transport \"T...\"] [-- GUPS_ARGS...]" >&2; exit 2 ;;
    esac
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for rep in $(seq "$REPS"); do
  for tl in $TL; do
    for k in $NODES; do
        for route in direct node node2; do
            f=$OUT/$tl.$k.$route.$rep
            if ! env GV_TRANSPORT="$tl" GV_AGG_ROUTE=$route GV_TEST_NODES="$k" \
                GV_STATS=1 timeout 300 "$BUILD/bin/gvrun" -n "$RANKS" \
                "$BUILD/perf/gups" "${ARGS[@]}" --per-rank > "$f" 2>&1 ||
                ! grep -q "errors=0" "$f"; then
                echo "perf/route.sh: gups failed ($tl, $route, $k nodes):" >&2
                cat "$f" >&2
                exit 1
            fi
            mups=$(grep -o "mups=[0-9.]*" "$f" | cut -d= -f2)
            fill=$(awk '/STATS am:/ { for (i = 1; i <= NF; i++) {
                         if ($i == "sent" && s == 0) { m += $(i + 1); s = 1 }
                         if ($i == "tl" && $(i + 1) == "sent") t += $(i + 2) }
                         s = 0 }
                       END { printf "%.1f", t ? m / t : 0 }' "$f")
            q=$(grep -o "queued bytes max over ranks: [0-9]*" "$f" | awk '{print $NF}')
            bound=$(env GV_AGG_ROUTE=$route "$BUILD/bin/gvinfo" -t -n "$RANKS" -N "$k" |
                    grep "(chosen)" | grep -o "at most [0-9]* bytes" | awk '{print $3}')
            echo "launch $rep tl=$tl nodes=$k route=$route mups=$mups msgs_per_tl_msg=$fill queued_max_B=$q bound_B=$bound"
            grep "^# rank [0-9]* node" "$f" | sed "s/^# /launch $rep tl=$tl nodes=$k route=$route /"
        done
    done
  done
done | tee "$OUT/all"
echo "# medians over $REPS launches: $RANKS ranks over $TL, gups ${ARGS[*]}"
med() { # the median of the numbers on stdin
    sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for tl in $TL; do
  for k in $NODES; do
    for route in direct node node2; do
        line=$(grep "tl=$tl nodes=$k route=$route " "$OUT/all")
        echo -n "tl=$tl nodes=$k route=$route "
        for f in mups msgs_per_tl_msg queued_max_B bound_B; do
            echo -n " $f=$(echo "$line" | grep -o "$f=[0-9.]*" | cut -d= -f2 | med)"
        done
        echo
    done
  done
done
