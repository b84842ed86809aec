#!/usr/bin/env bash
# The graph benchmark: PageRank, BFS, connected components, SSSP and the
# native Graph500 BFS (bfs500, against GraphBLAS's BFS) on a
# Graph500 Kronecker graph (scale 20, edge factor 16 by default), with
# SuiteSparse:GraphBLAS (build/perf/grb_graph) on 1 and 2 threads and, in
# the same run, Grapevine's gvgraph (build/bin/gvgraph) with each engine
# on 1 and 2 ranks over shm and tcp (and the vertex engine with
# GV_AMO=native over shm: transport "shm-native"), alternating within
# each round; then each engine on more ranks than cores (--over, over shm),
# which measure the overheads of tiling, teams and messages, not speed-ups.
# Writes OUT/graph.csv, OUT/graph.png (algorithm time per application, per
# system and rank or thread count) and prints a table with each time as a
# ratio to GraphBLAS at as many threads as ranks, a table of the
# oversubscribed runs apart (nanoseconds per input edge, and the ratio to
# the same engine on 2 ranks), and the linalg engine's breakdown (time in
# Broadcast, Combine, waiting for partial outputs, Apply; bytes sent by
# broadcasts and by partial outputs) from its --verbose total line.
# Checks that every run's check fields agree with GraphBLAS's at one
# thread. SPDX-License-Identifier: BSD-3-Clause
#
# usage: perf/graph.sh [--build DIR] [--out DIR] [--scale S] [--edgefactor E]
#                      [--graph FILE.el] [--reps N] [--apps "pagerank bfs cc sssp bfs500"]
#                      [--engines "vertex linalg"] [--iters N] [--timeout S]
#                      [--over "4 8"] [--no-native] [--plot-only]
#   --no-native  leave out the vertex engine's GV_AMO=native rows
#   --graph   use this edge list (and FILE.w beside it, for sssp) instead
#             of OUT/kron<S>.el, which is written by build/perf/kron when
#             absent and reused when present
#   --reps N  rounds (default 3); each configuration runs once a round and
#             the table and chart show the median algorithm time
#   --iters N PageRank sweeps (default 20, tolerance 0)
#   --over L  oversubscribed rank counts, each engine over shm, every round
#             (default "4 8"; "" for none)
#   --plot-only  redraw the chart and the table from an existing CSV
# Every run is under `timeout`; a run that fails or times out stays in the
# CSV with its status (its log in OUT/logs). Without build/bin/gvgraph the
# Grapevine rows are skipped with a message, and GraphBLAS runs alone.
#
# CSV columns: system,engine,app,procs,transport,rep,status,load_s,build_s,
#              run_s,run_cpu_s,iters,check_a,check_b,edges
#   system graphblas (procs = threads, transport "-") or grapevine (procs =
#   ranks); status ok | fail:<exit> | timeout | noline | mismatch; check_a
#   and check_b are the application's check fields: PageRank sum and max,
#   BFS and bfs500 reached and depth, CC components and largest, SSSP reached and
#   sumdist. run_cpu_s (the process CPU seconds of the algorithm, where
#   the program reports it) shows how much of a shared machine a run had.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=$root/build
OUT=$here/out
SCALE=20
EF=16
GRAPH=""
REPS=3
APPS="pagerank bfs cc sssp bfs500"
ENGINES="vertex linalg"
NATIVE=1
ITERS=20
TMO=900
PLOT_ONLY=0
OVER="4 8"

die() { echo "graph.sh: $*" >&2; exit 2; }
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 '$2': expected a positive integer"; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a directory"
             BUILD=$(cd "$2" 2>/dev/null && pwd) || die "--build '$2': no such directory"; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT=$2; shift ;;
    --scale) posint "$1" "${2:-}"; SCALE=$2; shift ;;
    --edgefactor) posint "$1" "${2:-}"; EF=$2; shift ;;
    --graph) [ $# -ge 2 ] || die "--graph needs a file"; GRAPH=$2; shift ;;
    --reps) posint "$1" "${2:-}"; REPS=$2; shift ;;
    --apps) [ $# -ge 2 ] || die "--apps needs a list"; APPS=$2; shift ;;
    --engines) [ $# -ge 2 ] || die "--engines needs a list"; ENGINES=$2; shift ;;
    --iters) posint "$1" "${2:-}"; ITERS=$2; shift ;;
    --timeout) posint "$1" "${2:-}"; TMO=$2; shift ;;
    --over) [ $# -ge 2 ] || die "--over needs a list (may be empty)"; OVER=$2; shift ;;
    --no-native) NATIVE=0 ;;
    --plot-only) PLOT_ONLY=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "option '$1' unknown (see --help)" ;;
    esac
    shift
done
for a in $APPS; do
    case $a in pagerank | bfs | cc | sssp | bfs500) ;; *) die "--apps: '$a' unknown (accepted: pagerank bfs cc sssp bfs500)" ;; esac
done
for p in $OVER; do
    [[ $p =~ ^[1-9][0-9]*$ ]] && [ "$p" -gt 2 ] || die "--over: '$p': expected rank counts above 2"
done
for e in $ENGINES; do
    case $e in vertex | linalg) ;; *) die "--engines: '$e' unknown (accepted: vertex linalg)" ;; esac
done

CSV=$OUT/graph.csv
mkdir -p "$OUT/logs" || die "cannot create $OUT/logs"

# field KEY LINE -> the value of KEY=value in LINE
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
checks() { # APP -> the names of its two check fields
    case $1 in
    pagerank) echo "sum max" ;;
    bfs | bfs500) echo "reached depth" ;;
    cc) echo "components largest" ;;
    sssp) echo "reached sumdist" ;;
    esac
}

# run SYSTEM ENGINE APP PROCS TRANSPORT REP CMD...: one run, one CSV row.
run() {
    local sys=$1 eng=$2 app=$3 procs=$4 tl=$5 rep=$6 log line rc status a b
    shift 6
    log=$OUT/logs/graph-$sys-$eng-$app-$procs-$tl-$rep.log
    if [ "$sys" = graphblas ]; then
        echo "  round $rep: $app graphblas threads=$procs"
    else
        echo "  round $rep: $app grapevine engine=$eng ranks=$procs transport=$tl"
    fi
    timeout "$TMO" "$@" >"$log" 2>&1
    rc=$?
    line=$(grep '^graph ' "$log" | tail -n 1)
    if [ $rc -eq 124 ]; then
        status=timeout
    elif [ $rc -ne 0 ]; then
        status=fail:$rc
    elif [ -z "$line" ]; then
        status=noline
    else
        status=ok
    fi
    read -r a b <<<"$(checks "$app")"
    echo "$sys,$eng,$app,$procs,$tl,$rep,$status,$(field load_s "$line"),$(field build_s "$line"),$(field run_s "$line"),$(field run_cpu_s "$line"),$(field iters "$line"),$(field "$a" "$line"),$(field "$b" "$line"),$(field edges "$line")" >>"$CSV"
    [ "$status" = ok ] || echo "    $status: see $log" >&2
}

if [ $PLOT_ONLY = 0 ]; then
    grb=$BUILD/perf/grb_graph
    gvg=$BUILD/bin/gvgraph
    gvrun=$BUILD/bin/gvrun
    [ -x "$grb" ] || die "$grb not built (make perf; needs libgraphblas-dev)"
    if [ -z "$GRAPH" ]; then
        GRAPH=$OUT/kron$SCALE.el
        if [ ! -s "$GRAPH" ] || [ ! -s "${GRAPH%.el}.w" ]; then
            [ -x "$BUILD/perf/kron" ] || die "$BUILD/perf/kron not built (make perf)"
            echo "== writing the scale-$SCALE Kronecker graph to $GRAPH"
            "$BUILD/perf/kron" --scale "$SCALE" --edgefactor "$EF" --output "$GRAPH" \
                --weights "${GRAPH%.el}.w" || die "kron failed"
        else
            echo "== reusing $GRAPH"
        fi
    fi
    [ -r "$GRAPH" ] || die "--graph '$GRAPH': cannot read it"
    WFILE=${GRAPH%.el}.w
    [ -r "$WFILE" ] || WFILE=""
    HAVE_GV=1
    if [ ! -x "$gvg" ]; then
        echo "== $gvg is not built yet: the Grapevine rows are skipped; GraphBLAS runs alone"
        HAVE_GV=0
    elif [ ! -x "$gvrun" ]; then
        echo "== $gvrun is not built: the Grapevine rows are skipped"
        HAVE_GV=0
    fi
    echo "system,engine,app,procs,transport,rep,status,load_s,build_s,run_s,run_cpu_s,iters,check_a,check_b,edges" >"$CSV"
    echo "== $REPS round(s), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    for rep in $(seq 1 "$REPS"); do
        for app in $APPS; do
            extra=(--iters "$ITERS")
            [ "$app" = sssp ] && [ -n "$WFILE" ] && extra+=(--weights "$WFILE")
            [ "$app" = pagerank ] && extra+=(--tol 0)
            # The Graph500 BFS is written natively on the graph (no engine):
            # its peer is GraphBLAS's BFS, already in the bfs rows.
            [ "$app" = bfs500 ] && extra=()
            for t in 1 2; do
                [ "$app" = bfs500 ] ||
                    run graphblas - "$app" "$t" - "$rep" "$grb" "$app" --input "$GRAPH" \
                        --nthreads "$t" "${extra[@]}"
                [ $HAVE_GV = 1 ] || continue
                for eng in $ENGINES; do
                    [ "$app" = bfs500 ] && [ "$eng" != vertex ] && continue
                    verb=()
                    [ "$eng" = linalg ] && verb=(--verbose)
                    for tl in shm tcp; do
                        run grapevine "$eng" "$app" "$t" "$tl" "$rep" env GV_TRANSPORT="$tl" \
                            "$gvrun" -n "$t" "$gvg" "$app" --input "$GRAPH" --engine "$eng" \
                            "${extra[@]}" "${verb[@]}"
                    done
                    # The Figure 6 question of a real application: the
                    # vertex engine's word updates as the transport's
                    # remote atomics (shm has them; tcp does not).
                    [ "$eng" = vertex ] && [ "$NATIVE" = 1 ] &&
                        run grapevine "$eng" "$app" "$t" shm-native "$rep" \
                            env GV_TRANSPORT=shm GV_AMO=native \
                            "$gvrun" -n "$t" "$gvg" "$app" --input "$GRAPH" --engine "$eng" \
                            "${extra[@]}"
                done
            done
            [ $HAVE_GV = 1 ] || continue
            for t in $OVER; do
                for eng in $ENGINES; do
                    verb=()
                    [ "$eng" = linalg ] && verb=(--verbose)
                    run grapevine "$eng" "$app" "$t" shm "$rep" env GV_TRANSPORT=shm \
                        "$gvrun" -n "$t" "$gvg" "$app" --input "$GRAPH" --engine "$eng" \
                        "${extra[@]}" "${verb[@]}"
                done
            done
        done
    done
    echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
[ -s "$CSV" ] || die "no $CSV (run without --plot-only first)"

# Agreement: every ok row's check fields against GraphBLAS at one thread
# (integers exactly; PageRank within 1e-9 and SSSP within 1e-6, relative).
awk -F, -v out="$CSV.tmp" '
    NR == 1 { print > out; next }
    { row[NR] = $0; app[NR] = $3; a[NR] = $13; b[NR] = $14; st[NR] = $7
      if ($1 == "graphblas" && $4 == 1 && $7 == "ok" && !($3 in ra)) { ra[$3] = $13; rb[$3] = $14 } }
    # bfs500 answers the BFS question: its reference is the bfs row.
    function ref(x) { return (x == "bfs500") ? "bfs" : x }
    function close_(x, y, tol) { d = x - y; if (d < 0) d = -d; m = (y < 0) ? -y : y; return d <= tol * m }
    END {
        bad = 0
        for (i = 2; i <= NR; i++) {
            r = ref(app[i])
            if (st[i] != "ok" || !(r in ra)) { print row[i] > out; continue }
            tol = (app[i] == "pagerank") ? 1e-9 : 1e-6
            if (app[i] == "pagerank") ok = close_(a[i], ra[r], tol) && close_(b[i], rb[r], tol)
            else if (app[i] == "sssp") ok = (a[i] == ra[r]) && close_(b[i], rb[r], tol)
            else ok = (a[i] == ra[r]) && (b[i] == rb[r])
            if (!ok) { sub(/,ok,/, ",mismatch,", row[i]); bad++
                       printf "MISMATCH %s: %s,%s against graphblas/1: %s,%s\n", app[i], a[i], b[i], ra[r], rb[r] > "/dev/stderr" }
            print row[i] > out
        }
        exit (bad > 0) ? 1 : 0
    }' "$CSV"
agree=$?
mv "$CSV.tmp" "$CSV"

# The table: median algorithm time per configuration, and the ratio to
# GraphBLAS at as many threads as ranks; then the median CPU seconds of the
# algorithm (summed over ranks or threads) and its ratio, which a machine
# shared with other jobs distorts less than elapsed time.
TABLE=$OUT/graph.dat
awk -F, 'NR > 1 && $7 == "ok" && $4 <= 2 {
        key = $3 SUBSEP $1 SUBSEP $2 SUBSEP $4 SUBSEP $5; n[key]++; v[key, n[key]] = $10; c[key, n[key]] = $11 }
    function median(k, arr,    m, i, j, x, s) {
        m = n[k]; for (i = 1; i <= m; i++) s[i] = arr[k, i] + 0
        for (i = 2; i <= m; i++) { x = s[i]; j = i - 1; while (j > 0 && s[j] > x) { s[j + 1] = s[j]; j-- } s[j + 1] = x }
        return s[int((m + 1) / 2)]
    }
    END {
        for (k in n) {
            med[k] = median(k, v); cmed[k] = median(k, c)
            split(k, f, SUBSEP); if (f[2] == "graphblas") { g[f[1], f[4]] = med[k]; gc[f[1], f[4]] = cmed[k] }
        }
        printf "%-9s %-22s %10s %8s %10s %8s\n", "app", "configuration", "run_s", "x grb", "cpu_s", "x grb"
        for (k in n) {
            split(k, f, SUBSEP)
            label = (f[2] == "graphblas") ? "graphblas " f[4] "t" : f[3] " " f[5] " " f[4] "r"
            p = (f[1] == "bfs500") ? "bfs" : f[1]
            r = ((p, f[4]) in g && g[p, f[4]] > 0) ? sprintf("%.2f", med[k] / g[p, f[4]]) : "-"
            rc = ((p, f[4]) in gc && gc[p, f[4]] > 0) ? sprintf("%.2f", cmed[k] / gc[p, f[4]]) : "-"
            printf "%-9s %-22s %10.4f %8s %10.4f %8s\n", f[1], label, med[k], r, cmed[k], rc
        }
    }' "$CSV" | { read -r hdr; echo "$hdr"; sort; } | tee "$TABLE.txt"

# The chart: one cluster per application, one bar per configuration.
awk 'NR > 1 { label = $2; for (i = 3; i < NF - 3; i++) label = label "_" $i
              app[$1] = 1; cfg[label] = 1; t[$1, label] = $(NF - 3) }
     END {
        nc = 0; for (c in cfg) cols[++nc] = c
        for (i = 2; i <= nc; i++) { x = cols[i]; j = i - 1; while (j > 0 && cols[j] > x) { cols[j + 1] = cols[j]; j-- } cols[j + 1] = x }
        printf "app"; for (i = 1; i <= nc; i++) printf " %s", cols[i]; printf "\n"
        na = split("pagerank bfs bfs500 cc sssp", order, " ")
        for (k = 1; k <= na; k++) { a = order[k]; if (!(a in app)) continue; printf "%s", a; for (i = 1; i <= nc; i++) printf " %s", ((a, cols[i]) in t) ? t[a, cols[i]] : "-"; printf "\n" }
     }' "$TABLE.txt" >"$TABLE"
if command -v gnuplot >/dev/null 2>&1; then
    ncol=$(head -n 1 "$TABLE" | wc -w)
    nreps=$(awk -F, 'NR > 1 && $6 > m { m = $6 } END { print m + 0 }' "$CSV")
    gnuplot <<EOF || echo "graph.sh: gnuplot failed; the data is in $TABLE" >&2
set terminal pngcairo size 1100,600 noenhanced
set output "$OUT/graph.png"
set title "Graph applications${GRAPH:+ on $(basename "$GRAPH")}: algorithm time, median of $nreps round(s)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "seconds (log scale)"
set key outside right top
set datafile missing "-"
plot for [i=2:$ncol] "$TABLE" using i:xtic(1) title columnheader(i)
EOF
    [ -s "$OUT/graph.png" ] && echo "== chart: $OUT/graph.png"
else
    echo "graph.sh: gnuplot not found: no chart (the data is in $TABLE)" >&2
fi
# The oversubscribed runs apart: median time, nanoseconds per input edge,
# and the ratio to the same engine on 2 ranks over shm.
awk -F, 'NR > 1 && $7 == "ok" && $1 == "grapevine" && $5 == "shm" && ($4 == 2 || $4 > 2) {
        key = $3 SUBSEP $2 SUBSEP $4; n[key]++; v[key, n[key]] = $10; e[key] = $15 }
    END {
        for (k in n) {
            m = n[k]; for (i = 1; i <= m; i++) s[i] = v[k, i]
            for (i = 2; i <= m; i++) { x = s[i]; j = i - 1; while (j > 0 && s[j] > x) { s[j + 1] = s[j]; j-- } s[j + 1] = x }
            med[k] = s[int((m + 1) / 2)]
        }
        printf "%-9s %-8s %6s %10s %10s %8s\n", "app", "engine", "ranks", "run_s", "ns/edge", "x 2r"
        for (k in n) {
            split(k, f, SUBSEP); if (f[3] <= 2) continue
            two = (f[1], f[2], 2) in med ? med[f[1], f[2], 2] : 0
            printf "%-9s %-8s %6d %10.4f %10.2f %8s\n", f[1], f[2], f[3], med[k],
                (e[k] > 0) ? 1e9 * med[k] / e[k] : 0, (two > 0) ? sprintf("%.2f", med[k] / two) : "-"
        }
    }' "$CSV" | { read -r hdr; echo "== oversubscribed (more ranks than cores: overheads, not speed-ups)"; echo "$hdr"; sort; } | tee "$OUT/graph-over.txt"

# The linalg engine's breakdown, from the 'linalg total' line of each run's
# log (the last round's): seconds in Broadcast (waiting for inputs),
# Combine (tile products), reduce (waiting for partial outputs), Apply (with
# the iteration's vote), and the bytes the broadcasts and partial outputs
# carried.
{
    printf "%-9s %-5s %-4s %5s %9s %9s %9s %9s %12s %12s\n" app ranks tl pushes bcast_s combine_s reduce_s apply_s bcast_bytes comb_bytes
    for f in "$OUT"/logs/graph-grapevine-linalg-*-"$REPS".log; do
        [ -r "$f" ] || continue
        t=$(grep '^linalg total' "$f" | tail -n 1)
        [ -n "$t" ] || continue
        b=$(basename "$f" .log); b=${b#graph-grapevine-linalg-}
        IFS=- read -r app procs tl _ <<<"$b"
        printf "%-9s %-5s %-4s %5s %9s %9s %9s %9s %12s %12s\n" "$app" "$procs" "$tl" \
            "$(field push "$t")/$(field pull "$t")" "$(field bcast_s "$t")" "$(field combine_s "$t")" \
            "$(field reduce_s "$t")" "$(field apply_s "$t")" "$(field bcast_bytes "$t")" "$(field combine_bytes "$t")"
    done
} | tee "$OUT/graph-linalg.txt"
echo "== CSV: $CSV"
if [ $agree -ne 0 ]; then
    echo "graph.sh: the check fields disagree (rows marked mismatch in $CSV)" >&2
    exit 1
fi
grep -q ',ok,' "$CSV" || { echo "graph.sh: no run succeeded" >&2; exit 1; }
if grep -qE ',(fail:[0-9]+|timeout|noline),' "$CSV"; then
    echo "graph.sh: some runs failed (status column of $CSV)" >&2
    exit 1
fi
