#!/usr/bin/env bash
# Join benchmark: triangle counting on Kronecker graphs and the generated
# hash join (NR x NS tuples, uniform and Zipf keys) with gvjoin on 1 and 2
# ranks over shm and tcp, against PostgreSQL 15 on the same data in the
# same run, and the GUPS agg rate (build/perf/gups --mode agg, 2 ranks)
# as the messaging bound beside the join's build and probe rates.
#
# PostgreSQL is started by this script: initdb into a temporary directory,
# a private socket directory and port, max_parallel_workers_per_gather 2,
# the tables loaded with COPY (psql \copy; load time reported apart) and
# analyzed; each query is run once to warm up, then timed by EXPLAIN
# ANALYZE's execution time (median of the repetitions). As root, the
# server runs as the unprivileged user nobody (runuser). The queries:
#   join:      SELECT count(*) FROM r JOIN s ON r.k = s.k
#   triangles: SELECT count(*) FROM e e1 JOIN e e2 ON e1.b = e2.a
#              JOIN e e3 ON e3.a = e1.a AND e3.b = e2.b
# with e the distinct edges (least, greatest) without self-loops, made
# at load time (gvjoin's time includes making them).
#
# Usage: perf/join.sh [--scales "16 17 18"] [--rows N] [--reps R]
#                     [--out DIR] [--no-pg]
#   --scales LIST  Kronecker scales (edge factor 16; default "16 17 18";
#                  "" runs the generated join only)
#   --rows N       NR = NS = N tuples of the generated join (default 10m;
#                  k, m suffixes are powers of 1000)
#   --reps R       repetitions (default 3)
#   --out DIR      inputs, CSV and chart (default build/perf/join)
#   --no-pg        skip PostgreSQL
# Output: DIR/join.csv (bench,system,config,median_s,vs_pg,build_rate,
# probe_rate,check) and DIR/join.png.
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
SCALES="16 17 18" ROWS=10m REPS=3 OUT=$B/perf/join PG=1
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
usage() { sed -n '2,/^# SPDX/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --no-pg) PG=0; shift; continue ;;
    esac
    [ $# -ge 2 ] || { echo "join.sh: $1 needs a value" >&2; usage; }
    case $1 in
    --scales) SCALES=$2 ;;
    --rows) ROWS=$2 ;;
    --reps) REPS=$2 ;;
    --out) OUT=$2 ;;
    *) echo "join.sh: unknown option '$1'" >&2; usage ;;
    esac
    shift 2
done
for s in $SCALES; do
    if ! [[ $s =~ ^[0-9]+$ ]] || [ "$s" -lt 1 ] || [ "$s" -gt 26 ]; then
        echo "join.sh: bad scale '$s' (1..26)" >&2
        exit 2
    fi
done
[[ $ROWS =~ ^[1-9][0-9]*[kKmM]?$ ]] || { echo "join.sh: bad --rows '$ROWS'" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "join.sh: bad --reps '$REPS'" >&2; exit 2; }
make -s -j2 lib "$B/bin/gvrun" "$B/bin/gvjoin" "$B/perf/gups" >/dev/null
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=perf/common.sh
. perf/common.sh

# ---- PostgreSQL -------------------------------------------------------------
PGDIR='' PGPORT='' PGUSER_RUN=()
pg_stop() {
    if [ -n "$PGDIR" ] && [ -d "$PGDIR/data" ]; then
        "${PGUSER_RUN[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    [ -n "$PGDIR" ] && rm -rf "$PGDIR"
}
trap pg_stop EXIT
pg_start() {
    [ -x "$PGBIN/postgres" ] || { echo "join.sh: no PostgreSQL in $PGBIN (apt-get install postgresql-15, or --no-pg)" >&2; exit 1; }
    PGDIR=$(mktemp -d /tmp/gv-pg-XXXXXX)
    mkdir -p "$PGDIR/sock"
    if [ "$(id -u)" = 0 ]; then
        echo "== running as root: PostgreSQL runs as the user nobody" >&2
        chown -R nobody "$PGDIR"
        chmod 755 "$PGDIR"
        PGUSER_RUN=(runuser -u nobody --)
    else
        PGUSER_RUN=(env)
    fi
    PGPORT=$((40000 + $$ % 20000))
    "${PGUSER_RUN[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -A trust >"$PGDIR/initdb.log" 2>&1 ||
        { echo "join.sh: initdb failed:" >&2; cat "$PGDIR/initdb.log" >&2; exit 1; }
    "${PGUSER_RUN[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
        -o "-k $PGDIR/sock -p $PGPORT -c listen_addresses='' -c max_parallel_workers_per_gather=2 -c shared_buffers=2GB -c work_mem=1GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null ||
        { echo "join.sh: the server did not start:" >&2; cat "$PGDIR/server.log" >&2; exit 1; }
}
psql_q() { psql -X -q -t -A -h "$PGDIR/sock" -p "$PGPORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
# pg_time QUERY -> "execution_ms count" (EXPLAIN ANALYZE's execution time;
# the count from the warm-up run)
pg_time() {
    local q=$1 cnt t
    cnt=$(psql_q -c "$q")
    t=$(psql_q -c "EXPLAIN ANALYZE $q" | sed -n 's/.*Execution Time: \([0-9.]*\) ms.*/\1/p')
    echo "$t $cnt"
}

# ---- gvjoin ------------------------------------------------------------------
# The global heap of each rank holds both relations (16-byte tuples) and
# the edges of the largest graph on 1 rank.
NROWS=$(sed 's/[kK]$/000/; s/[mM]$/000000/' <<<"$ROWS")
MAXS=0
for s in $SCALES; do [ "$s" -gt "$MAXS" ] && MAXS=$s; done
HEAP=$(( 2 * NROWS * 16 + (16 << MAXS) * 16 + (256 << 20) ))
run_gv() { # TRANSPORT RANKS ARGS... -> the key=value line
    local tl=$1 n=$2 out
    shift 2
    if ! out=$(env GV_TRANSPORT="$tl" GV_HEAP="$HEAP" GV_WARN_UNUSED_ENV=0 timeout 3600 "$B/bin/gvrun" -n "$n" "$B/bin/gvjoin" "$@" 2>&1); then
        echo "join.sh: gvjoin $* over $tl -n $n failed:" >&2; echo "$out" >&2; exit 1
    fi
    grep '=' <<<"$out" | tail -1
}
CONFIGS=(shm:1 shm:2 tcp:1 tcp:2)
declare -A T CHK BR PR PGT PGL

[ "$PG" = 1 ] && pg_start
declare -A GUPS
echo "== GUPS agg (the messaging bound), 2 ranks; mups is the job's, per rank half" >&2
for tl in shm tcp; do
    l=$(env GV_TRANSPORT=$tl GV_WARN_UNUSED_ENV=0 timeout 600 "$B/bin/gvrun" -n 2 "$B/perf/gups" --mode agg --progress-interval 0 2>/dev/null | tail -1)
    GUPS[$tl]=$(field mups "$l")
    echo "   gups agg $tl: $l" >&2
done

BENCHES=()
for s in $SCALES; do
    b=tri$s
    BENCHES+=("$b")
    echo "== triangles, Kronecker scale $s" >&2
    line=$(run_gv shm 2 triangles --kron "$s" --csv "$OUT/kron$s.csv")
    CHK[$b]=$(field triangles "$line")
    if [ "$PG" = 1 ]; then
        t0=$(date +%s.%N)
        psql_q -c "DROP TABLE IF EXISTS raw, e; CREATE UNLOGGED TABLE raw (u bigint, v bigint);"
        psql_q -c "\\copy raw FROM '$OUT/kron$s.csv' WITH (FORMAT csv)"
        psql_q -c "CREATE UNLOGGED TABLE e AS SELECT DISTINCT least(u, v) AS a, greatest(u, v) AS b FROM raw WHERE u <> v; DROP TABLE raw; ANALYZE e;"
        PGL[$b]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
        echo "   postgres load ${PGL[$b]}s" >&2
    fi
    for _ in $(seq "$REPS"); do
        for cfg in "${CONFIGS[@]}"; do
            line=$(run_gv "${cfg%:*}" "${cfg#*:}" triangles --kron "$s")
            [ "$(field triangles "$line")" = "${CHK[$b]}" ] ||
                { echo "join.sh: $cfg counted $(field triangles "$line") triangles, not ${CHK[$b]}" >&2; exit 1; }
            T[$b:$cfg]+="$(field seconds "$line") "
            echo "   gvjoin $cfg: $line" >&2
        done
        if [ "$PG" = 1 ]; then
            read -r ms cnt <<<"$(pg_time "SELECT count(*) FROM e e1 JOIN e e2 ON e1.b = e2.a JOIN e e3 ON e3.a = e1.a AND e3.b = e2.b")"
            [ "$cnt" = "${CHK[$b]}" ] || { echo "join.sh: postgres counted $cnt triangles, gvjoin ${CHK[$b]}" >&2; exit 1; }
            PGT[$b]+="$(awk -v m="$ms" 'BEGIN { printf "%.6f", m / 1000 }') "
            echo "   postgres: ${ms} ms ($cnt triangles)" >&2
        fi
    done
done

for keys in uniform zipf; do
    b=join_$keys
    BENCHES+=("$b")
    echo "== join $ROWS x $ROWS, $keys keys" >&2
    line=$(run_gv shm 2 join --generate "$ROWS,$ROWS" --keys "$keys" --count --csv "$OUT/r_$keys.csv,$OUT/s_$keys.csv")
    CHK[$b]=$(field rows "$line")
    if [ "$PG" = 1 ]; then
        t0=$(date +%s.%N)
        psql_q -c "DROP TABLE IF EXISTS r, s; CREATE UNLOGGED TABLE r (k bigint, p bigint); CREATE UNLOGGED TABLE s (k bigint, p bigint);"
        psql_q -c "\\copy r FROM '$OUT/r_$keys.csv' WITH (FORMAT csv)"
        psql_q -c "\\copy s FROM '$OUT/s_$keys.csv' WITH (FORMAT csv)"
        psql_q -c "ANALYZE r; ANALYZE s;"
        PGL[$b]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
        echo "   postgres load ${PGL[$b]}s" >&2
    fi
    for _ in $(seq "$REPS"); do
        for cfg in "${CONFIGS[@]}"; do
            line=$(run_gv "${cfg%:*}" "${cfg#*:}" join --generate "$ROWS,$ROWS" --keys "$keys" --count)
            [ "$(field rows "$line")" = "${CHK[$b]}" ] ||
                { echo "join.sh: $cfg joined $(field rows "$line") rows, not ${CHK[$b]}" >&2; exit 1; }
            T[$b:$cfg]+="$(field seconds "$line") "
            BR[$b:$cfg]+="$(field build_rate "$line") "
            PR[$b:$cfg]+="$(field probe_rate "$line") "
            echo "   gvjoin $cfg: $line" >&2
        done
        if [ "$PG" = 1 ]; then
            read -r ms cnt <<<"$(pg_time "SELECT count(*) FROM r JOIN s ON r.k = s.k")"
            [ "$cnt" = "${CHK[$b]}" ] || { echo "join.sh: postgres joined $cnt rows, gvjoin ${CHK[$b]}" >&2; exit 1; }
            PGT[$b]+="$(awk -v m="$ms" 'BEGIN { printf "%.6f", m / 1000 }') "
            echo "   postgres: ${ms} ms ($cnt rows)" >&2
        fi
    done
done

CSV=$OUT/join.csv
echo "bench,system,config,median_s,vs_pg,build_rate_per_rank,probe_rate_per_rank,gups_agg_mups_2ranks,check,pg_load_s" >"$CSV"
for b in "${BENCHES[@]}"; do
    pg=
    # shellcheck disable=SC2086
    [ "$PG" = 1 ] && pg=$(med ${PGT[$b]})
    [ -n "$pg" ] && echo "$b,postgres,2-workers,$pg,1.000,,,,${CHK[$b]},${PGL[$b]}" >>"$CSV"
    for cfg in "${CONFIGS[@]}"; do
        # shellcheck disable=SC2086
        m=$(med ${T[$b:$cfg]})
        # shellcheck disable=SC2086
        br=$(med ${BR[$b:$cfg]:-})
        # shellcheck disable=SC2086
        pr=$(med ${PR[$b:$cfg]:-})
        awk -v b="$b" -v c="${cfg%:*}-${cfg#*:}" -v m="$m" -v pg="$pg" -v br="$br" \
            -v pr="$pr" -v g="${GUPS[${cfg%:*}]:-}" -v k="${CHK[$b]}" \
            'BEGIN { printf "%s,gvjoin,%s,%.4f,%s,%s,%s,%s,%s,\n", b, c, m,
                     (pg == "" ? "" : sprintf("%.3f", pg / m)), br, pr, g, k }' >>"$CSV"
    done
done
column -t -s, "$CSV"
if command -v gnuplot >/dev/null; then
    awk -F, 'NR > 1 { printf "%s %s-%s %s\n", $1, $2, $3, $4 }' "$CSV" >"$OUT/plot.dat"
    gnuplot <<EOF
set terminal pngcairo size 1000,500
set output "$OUT/join.png"
set title "gvjoin vs PostgreSQL 15, 2 workers (median seconds, log scale; lower is better)"
set style data histograms
set style fill solid 0.8 border -1
set logscale y
set ylabel "seconds"
set xtics rotate by -40 font ",8"
set key off
plot "$OUT/plot.dat" using 3:xtic(sprintf("%s %s", strcol(1), strcol(2)))
EOF
    echo "chart: $OUT/join.png" >&2
fi
echo "csv: $CSV" >&2
