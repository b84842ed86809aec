#!/usr/bin/env bash
# Figure 6 of the Grappa paper, measured here: GUPS over every transport x
# mode (left) and bandwidth against message size for native put, plain
# active messages and aggregated 8-byte messages (right), with HPCC's
# MPIRandomAccess on the same ranks for comparison. Writes
# perf/out/fig6.csv, perf/out/fig6_left.png, perf/out/fig6_right.png and
# prints a table. SPDX-License-Identifier: BSD-3-Clause
#
# usage: perf/fig6.sh [--quick] [--build DIR] [--out DIR] [--ranks "2 4 8"]
#                     [--no-hpcc] [--seconds S] [--log2 N] [--plot-only]
#                     [--only "shm ucx/sm ..."] [--reps N] [--machine TEXT]
#   --quick   2 ranks only, 2^20 words, 0.3 s runs, one repetition of each
#             bandwidth point, one HPCC run
#   default   2, 4 and 8 ranks (4 and 8 oversubscribe a 2-core machine),
#             2^22 words, 1 s runs, 3 repetitions of each bandwidth point
#   --plot-only  redraw the PNGs and the table from an existing fig6.csv
#   --machine    the machine as the captions state it (default: what this
#             host reports: "one node, N vCPUs (virtualization: X), every
#             rank on it")
#   --only    measure only these configurations (labels as in the table)
#   --reps N  run each GUPS configuration N times (default 3) and report
#             the median run (for an even N the slower of the middle
#             two): one run of the faster modes lasts well under a
#             second, where one descheduling of a rank on a shared
#             machine can halve it
# Every run is under `timeout`; a run that fails or times out is recorded
# in the CSV with its status (and its log kept in OUT/logs), not dropped.
#
# The CSV begins with "#" lines: the run's metadata (commit, date, host,
# machine, settings). Then the columns
#   panel,config,ranks,series,x,y,y_min,y_max,reps,errors,seconds,status,note
#   panel=gups: series agg|am|native|hpcc, x = updates made, y = million
#               updates per second of the median run, y_min and y_max the
#               slowest and fastest run, seconds: of the median run; errors
#               = wrong table words summed over all the runs
#   panel=bw:   series put|am|agg8, x = message bytes, y = MB/s, the median
#               of the repetitions, y_min and y_max their extremes (agg8 is
#               the payload bandwidth of a stream of 8-byte aggregated
#               active messages, drawn as a level line)
#   status:     ok (y is a measurement), wrong (it ran, but updates were
#               lost or doubled: errors > 0; y is not to be trusted),
#               unsupported (the transport lacks the mode), timeout,
#               failed (the log in OUT/logs says why); x, y, y_min, y_max
#               and seconds are empty unless the status is ok or wrong
#   note:       free text (the runs' values, a failure's exit status)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=$root/build
OUT=$here/out
RANKS="2 4 8"
QUICK=0
HPCC=1
PLOT_ONLY=0
SECS=""
LOG2=""
ONLY=""
REPS=3
MACHINE=""

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --build) BUILD=$(cd "$2" && pwd); shift ;;
    --out) OUT=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --no-hpcc) HPCC=0 ;;
    --plot-only) PLOT_ONLY=1 ;;
    --seconds) SECS=$2; shift ;;
    --log2) LOG2=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --machine) MACHINE=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next }
                    NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "fig6.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

case "$REPS" in
''|*[!0-9]*) REPS=bad ;;
*) REPS=$((10#$REPS)) ;;
esac
if [ "$REPS" = bad ] || [ "$REPS" -lt 1 ]; then
    echo "fig6.sh: --reps takes a whole number of runs, 1 or more" >&2
    exit 2
fi

if [ "$QUICK" = 1 ]; then
    [ "$RANKS" = "2 4 8" ] && RANKS="2"
    : "${SECS:=0.3}" "${LOG2:=20}"
    PUT_ARGS="-r 1 -t 0.02"            # putbw
    AM8_ARGS="--am8 -r 1 -n 1048576"
    HPCC_N=1000
else
    : "${SECS:=1.0}" "${LOG2:=22}"
    PUT_ARGS="-r 3 -t 0.05"
    AM8_ARGS="--am8 -r 3 -n 4194304"
    HPCC_N=2000
fi

for p in "$BUILD/bin/gvrun" "$BUILD/perf/gups" "$BUILD/perf/putbw" \
         "$BUILD/bin/gvinfo"; do
    if [ ! -x "$p" ]; then
        echo "fig6.sh: $p is missing: run make BUILD=$BUILD first" >&2
        exit 1
    fi
done
command -v gnuplot >/dev/null || echo "fig6.sh: no gnuplot: CSV only" >&2

mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd) # hpcc runs in its own directory: logs need an absolute path
CSV=$OUT/fig6.csv
if [ "$PLOT_ONLY" = 1 ]; then
    [ -r "$CSV" ] || { echo "fig6.sh: --plot-only needs $CSV" >&2; exit 1; }
else
    virt=$(systemd-detect-virt 2>/dev/null) || virt=none
    [ -n "$MACHINE" ] ||
        MACHINE="one node, $(nproc) vCPUs (virtualization: ${virt:-none}), every rank on it"
    {
        echo "# fig6.sh $("$BUILD/bin/gvinfo" -v 2>/dev/null | head -1)"
        echo "# date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) machine=\"$MACHINE\""
        echo "# ranks=\"$RANKS\" log2=$LOG2 seconds=$SECS reps=$REPS quick=$QUICK"
        echo "panel,config,ranks,series,x,y,y_min,y_max,reps,errors,seconds,status,note"
    } > "$CSV"
fi
# The machine, for the captions (from the CSV when only redrawing).
MACHINE=$(sed -n 's/^# date=.* machine="\([^"]*\)".*/\1/p' "$CSV" | head -1)
[ -n "$MACHINE" ] || MACHINE="not recorded"

# shellcheck source=perf/transports.sh
. "$here/transports.sh"

status_of() {  # exit status -> CSV status
    case "$1" in
    0) echo ok ;;
    3|77) echo unsupported ;;
    124|137) echo timeout ;;
    *) echo failed ;;
    esac
}

logname() {
    echo "$OUT/logs/$(echo "$*" | tr '/ ;' '___').log"
}

# ---- left panel: GUPS ------------------------------------------------------
t_start=$(date +%s)
measure() {
for n in $RANKS; do
    for i in "${CONFIGS[@]}"; do
        for mode in agg am native; do
            # REPS runs; the row is the median one (by mups). Every run
            # must succeed, and errors are summed over all of them.
            runs="" fail="" errs=0
            for ((r = 1; r <= REPS; r++)); do
                log=$(logname gups "${LABELS[$i]}" "$n" "$mode" "$r")
                launch "$i" "$n" 120 "$log" "$BUILD/perf/gups" \
                    --mode "$mode" --log2 "$LOG2" --seconds "$SECS" \
                    --progress-interval 0
                rc=$?
                line=$(grep '^gups transport=' "$log" | tail -1)
                if [ "$rc" != 0 ]; then
                    fail=$(note_of "$rc")
                    break
                fi
                if [ -z "$line" ]; then
                    fail="failed: no result line"
                    break
                fi
                mups=$(echo "$line" | sed 's/.* mups=\([0-9.]*\).*/\1/')
                e=$(echo "$line" | sed -n 's/.* errors=\([0-9][0-9]*\).*/\1/p')
                # A run that reported no error count counts as wrong.
                errs=$((errs + ${e:-1}))
                runs="$runs$mups $line"$'\n'
            done
            if [ -z "$fail" ]; then
                all=$(printf '%s' "$runs" | awk '{print $1}' | LC_ALL=C sort -g | tr '\n' ' ')
                line=$(printf '%s' "$runs" | LC_ALL=C sort -g |
                       awk -v m=$(((REPS + 1) / 2)) 'NR == m { $1 = ""; sub(/^ /, ""); print }')
                upd=$(echo "$line" | sed 's/.* updates=\([0-9]*\).*/\1/')
                mups=$(echo "$line" | sed 's/.* mups=\([0-9.]*\).*/\1/')
                secs=$(echo "$line" | sed 's/.* seconds=\([0-9.]*\).*/\1/')
                lo=${all%% *} hi=$(echo "$all" | awk '{print $NF}')
                st=ok
                [ "$errs" = 0 ] || st=wrong
                note="runs: ${all% }"
                echo "gups,${LABELS[$i]},$n,$mode,$upd,$mups,$lo,$hi,$REPS,$errs,$secs,$st,$note" >> "$CSV"
                [ "$REPS" = 1 ] || line="$line (median of $REPS: ${all% })"
                [ "$st" = ok ] || line="$line WRONG: $errs errors"
            else
                echo "gups,${LABELS[$i]},$n,$mode,,,,,$REPS,,,$(status_of "$rc"),$fail" >> "$CSV"
                line=""
            fi
            printf '  gups %-10s -n %d %-6s %s\n' "${LABELS[$i]}" "$n" "$mode" \
                "${line:-$fail}"
        done
    done
done

# HPCC MPIRandomAccess under mpirun on the same ranks, over the same two
# Open MPI paths as the mpi rows. HPCC always runs its whole suite (HPL
# first); HPL's N sets the RandomAccess table (about N^2/2 words in all),
# so N is kept small. The quick run does only 2 ranks over vader.
run_hpcc() {     # IDX NRANKS
    local i=$1 n=$2 dir p q
    dir=$(mktemp -d /tmp/gv-hpcc-XXXXXX)
    p=1; q=$n
    [ "$n" = 4 ] && { p=2; q=2; }
    [ "$n" = 8 ] && { p=2; q=4; }
    sed -e "s/^1000 .*Ns\$/$HPCC_N         Ns/" \
        -e "s/^2            Ps\$/$p            Ps/" \
        -e "s/^2            Qs\$/$q            Qs/" \
        /usr/share/doc/hpcc/examples/_hpccinf.txt > "$dir/hpccinf.txt"
    local log
    log=$(logname hpcc "${LABELS[$i]}" "$n")
    # shellcheck disable=SC2086
    (cd "$dir" && timeout -k 5 300 mpirun --oversubscribe -np "$n" \
        ${MCAS[$i]} hpcc > "$log" 2>&1 < /dev/null)
    local rc=$?
    local f=$dir/hpccoutf.txt gups upd errs secs tbl
    gups=$(sed -n 's/^MPIRandomAccess_GUPs=//p' "$f" 2>/dev/null)
    if [ "$rc" = 0 ] && [ -n "$gups" ]; then
        upd=$(sed -n 's/^MPIRandomAccess_ExeUpdates=//p' "$f")
        errs=$(sed -n 's/^MPIRandomAccess_Errors=//p' "$f")
        secs=$(sed -n 's/^MPIRandomAccess_time=//p' "$f")
        tbl=$(grep -m1 'PE Main table size' "$f" | sed 's/.*= \(2^[0-9]*\) .*/\1/')
        mups=$(awk -v g="$gups" 'BEGIN { printf "%.2f", g * 1000 }')
        st=ok
        [ "$errs" = 0 ] || st=wrong
        echo "gups,${LABELS[$i]},$n,hpcc,$upd,$mups,$mups,$mups,1,$errs,$secs,$st,table $tbl words/PE" >> "$CSV"
        printf '  hpcc %-10s -n %d MPIRandomAccess %s GUP/s = %s Mup/s (table %s words/PE)\n' \
            "${LABELS[$i]}" "$n" "$gups" "$mups" "$tbl"
        cp "$f" "$OUT/logs/hpccoutf_$(echo "${LABELS[$i]}" | tr / _)_$n.txt"
    else
        echo "gups,${LABELS[$i]},$n,hpcc,,,,,1,,,$(status_of "$rc"),$(note_of "$rc")" >> "$CSV"
        echo "  hpcc ${LABELS[$i]} -n $n: $(note_of "$rc") (see $log)"
    fi
    rm -rf "$dir"
}
if [ "$HPCC" = 1 ] && command -v hpcc >/dev/null && have_mpirun &&
   [ -r /usr/share/doc/hpcc/examples/_hpccinf.txt ]; then
    for n in $RANKS; do
        for i in "${CONFIGS[@]}"; do
            [ "${TLS[$i]}" = mpi ] || continue
            # one HPCC per rank count in quick mode, and TCP only at 2 ranks
            if [ "$QUICK" = 1 ] || [ "$n" != 2 ]; then
                [ "${LABELS[$i]}" = mpi/vader ] || continue
            fi
            run_hpcc "$i" "$n"
        done
    done
else
    echo "# hpcc: skipped (needs hpcc, mpirun and its example hpccinf.txt)"
fi

# ---- right panel: bandwidth against size, 2 ranks ------------------------
# putbw --csv rows: tool,transport,ranks,metric,config,bytes,unit,median,
# min,max,iters (perf/README.md); a failed run gives a status row instead.
bw_rows() {      # LABEL SERIES LOG RC
    local lab=$1 s=$2 log=$3 rc=$4 rows
    rows=$(awk -F, -v c="$lab" -v s="$s" '
        /^#/ || $1 == "tool" { next }
        $4 == "bw" { printf "bw,%s,2,%s,%s,%s,%s,%s,%s,,,ok,\n", c, s, $6, $8, $9, $10, $11 }
        $4 == "rate" { printf "bw,%s,2,%s,8,%.1f,%.1f,%.1f,%s,,,ok,payload of 8-byte messages\n", c, s, $8 * 8, $9 * 8, $10 * 8, $11 }
    ' "$log")
    if [ "$rc" = 0 ] && [ -n "$rows" ]; then
        echo "$rows" >> "$CSV"
    elif [ "$rc" = 0 ]; then
        echo "bw,$lab,2,$s,,,,,,,,failed,no result rows" >> "$CSV"
    else
        echo "bw,$lab,2,$s,,,,,,,,$(status_of "$rc"),$(note_of "$rc")" >> "$CSV"
    fi
}
for i in "${CONFIGS[@]}"; do
    lab=${LABELS[$i]}
    # native put
    log=$(logname putbw "$lab")
    launch "$i" 2 120 "$log" "$BUILD/perf/putbw" $PUT_ARGS --csv
    bw_rows "$lab" put "$log" $?
    # plain active messages: the same windows of one size, no aggregation
    # (perf/pingpong measures this too, but with fixed counts that take
    # minutes over the slower transports)
    log=$(logname ambw "$lab")
    GV_AGGREGATE=0 launch "$i" 2 120 "$log" "$BUILD/perf/putbw" --am $PUT_ARGS --csv
    bw_rows "$lab" am "$log" $?
    # aggregated 8-byte messages: their payload bandwidth
    log=$(logname am8 "$lab")
    GV_AGGREGATE=1 launch "$i" 2 120 "$log" "$BUILD/perf/putbw" $AM8_ARGS --csv
    bw_rows "$lab" agg8 "$log" $?
    printf '  bw   %-10s put %s, am %s, agg8 %s MB/s\n' "$lab" \
        "$(awk -F, -v c="$lab" '$1=="bw" && $2==c && $4=="put" {print ($12=="ok" && $5==8) ? $6 " (8 B)" : ($12=="ok" ? "" : $12)}' "$CSV" | grep . | head -1)" \
        "$(awk -F, -v c="$lab" '$1=="bw" && $2==c && $4=="am" {print ($12=="ok" && $5==8) ? $6 " (8 B)" : ($12=="ok" ? "" : $12)}' "$CSV" | grep . | head -1)" \
        "$(awk -F, -v c="$lab" '$1=="bw" && $2==c && $4=="agg8" {print ($12=="ok") ? $6 : $12}' "$CSV")"
done

}
[ "$PLOT_ONLY" = 1 ] || measure

# ---- table -------------------------------------------------------------
echo
echo "GUPS, million updates per second (log2 table words per rank: $LOG2;" \
     "at most $SECS s per run). n/a: the transport lacks the mode;" \
     "FAILED/TIMEOUT: see the logs; !errN: N wrong words (not a result)"
echo "Machine: $MACHINE"
awk -F, '
$1 == "gups" {
    k = $2 " " $3; if (!(k in seen)) { seen[k] = 1; order[n++] = k }
    if ($12 == "ok" || $12 == "wrong")
        v[k, $4] = ($6 + 0 < 0.01) ? "< 0.01" : $6
    else
        v[k, $4] = ($12 == "unsupported") ? "n/a" : toupper($12)
    if ($12 == "wrong") v[k, $4] = v[k, $4] "!err" $10
    y[k, $4] = ($12 == "ok") ? $6 + 0 : 0
}
END {
    printf "%-10s %5s %10s %10s %10s %10s %9s %9s\n", "config", "ranks",
           "agg", "am", "native", "hpcc", "agg/am", "agg/nat"
    for (i = 0; i < n; i++) {
        k = order[i]; split(k, a, " ")
        ra = (y[k, "am"] > 0 && y[k, "agg"] > 0) ? sprintf("%.1fx", y[k, "agg"] / y[k, "am"]) : "n/a"
        rn = (y[k, "native"] > 0 && y[k, "agg"] > 0) ? sprintf("%.1fx", y[k, "agg"] / y[k, "native"]) : "n/a"
        printf "%-10s %5s %10s %10s %10s %10s %9s %9s\n", a[1], a[2],
               v[k, "agg"], v[k, "am"], v[k, "native"],
               ((k, "hpcc") in v) ? v[k, "hpcc"] : "", ra, rn
    }
}' "$CSV"

# ---- plots ----------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    dat=$OUT/fig6_dat
    mkdir -p "$dat"
    gp=$dat/fig6.gnuplot
    nr=0
    for n in $RANKS; do
        # The bars, and a label where there is none: "n/a" for a mode
        # the transport lacks or a run that failed, "< 0.01" under the
        # axis. Bar j of cluster i stands at i + (j - 2.5) / 5 (4 bars,
        # gap 1).
        awk -F, -v r="$n" -v lab="$dat/gups_$n.labels" '
        $1 == "gups" && $3 == r {
            if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 }
            st[$2, $4] = $12
            if ($12 == "ok") v[$2, $4] = $6
        }
        END {
            print "# config agg am native hpcc"
            printf "" > lab
            split("agg am native hpcc", s, " ")
            for (i = 0; i < n; i++) {
                c = order[i]; line = c
                for (j = 1; j <= 4; j++) {
                    ok = ((c, s[j]) in v) && v[c, s[j]] >= 0.01
                    line = line " " (ok ? v[c, s[j]] : "-")
                    t = ""
                    if ((c, s[j]) in v && !ok) t = "< 0.01"
                    else if ((c, s[j]) in st && !ok) t = "n/a (" st[c, s[j]] ")"
                    else if (!((c, s[j]) in st) && j < 4) t = "n/a"
                    if (t != "")
                        printf "set label \"%s\" at %.2f,0.012 rotate by 90 left font \",8\"\n", t, i + (j - 2.5) / 5 >> lab
                }
                print line
            }
        }' "$CSV" > "$dat/gups_$n.dat"
        nr=$((nr + 1))
    done
    ncfg=0
    for i in "${CONFIGS[@]}"; do
        lab=${LABELS[$i]}
        f=$dat/bw_$(echo "$lab" | tr / _)
        for s in put am; do
            awk -F, -v c="$lab" -v s="$s" '$1=="bw" && $2==c && $4==s && $12=="ok" { print $5, $6, $7, $8 }' \
                "$CSV" > "${f}_$s.dat"
        done
        awk -F, -v c="$lab" '$1=="bw" && $2==c && $4=="agg8" && $12=="ok" { print 8, $6, $7, $8; print 1048576, $6, $7, $8 }' \
            "$CSV" > "${f}_agg8.dat"
        # Series with a status row other than ok: named on the panel.
        awk -F, -v c="$lab" '$1=="bw" && $2==c && $12!="ok" { print $4 ": n/a (" $12 ")" }' \
            "$CSV" | sort -u > "${f}_na.txt"
        ncfg=$((ncfg + 1))
    done
    {
        w=$((600 * nr)); [ "$w" -lt 800 ] && w=800
        echo "set terminal pngcairo size $w,560 font 'sans,10'"
        echo "set output '$OUT/fig6_left.png'"
        echo "set datafile missing '-'"
        echo "set style data histograms"
        echo "set style histogram clustered gap 1"
        echo "set style fill solid 0.85 border -1"
        echo "set boxwidth 0.9"
        echo "set xrange [-0.6:${#CONFIGS[@]}-0.4]"
        echo "set logscale y"
        echo "set yrange [0.01:1000]"
        echo "set grid ytics"
        echo "set ylabel 'million updates per second (log)'"
        echo "set xtics rotate by -35"
        echo "set key top right"
        echo "set multiplot layout 1,$nr title \"GUPS: random 8-byte updates, table 2^{$LOG2} words per rank, at most $SECS s per run, median of $REPS\\n(HPCC MPIRandomAccess on the mpi rows, with its own table size: see fig6.csv)\\nMachine: $MACHINE\""
        for n in $RANKS; do
            echo "set title '$n ranks'"
            cat "$dat/gups_$n.labels"
            echo "plot '$dat/gups_$n.dat' using 2:xtic(1) title 'agg (aggregated AMs)' lc rgb '#1b9e77', \\"
            echo "     '' using 3 title 'am (one message each)' lc rgb '#d95f02', \\"
            echo "     '' using 4 title 'native remote atomics' lc rgb '#7570b3', \\"
            echo "     '' using 5 title 'HPCC MPIRandomAccess' lc rgb '#999999'"
            echo "unset label"
        done
        echo "unset multiplot"
        cols=4
        [ "$ncfg" -lt 4 ] && cols=$ncfg
        rows=$(( (ncfg + cols - 1) / cols ))
        echo "reset"
        echo "set terminal pngcairo size $((420 * cols)),$((360 * rows + 70)) font 'sans,9'"
        echo "set output '$OUT/fig6_right.png'"
        echo "set logscale xy"
        echo "set format x '%.0s%cB'"
        echo "set xrange [6:1.4e6]"
        # One y-range for every panel, from the data (decades around the
        # smallest minimum and the largest maximum).
        yr=$(awk -F, '$1=="bw" && $12=="ok" && $7 > 0 {
                 if (lo == "" || $7 < lo) lo = $7; if ($8 > hi) hi = $8 }
             END { if (lo == "") print "1:1e5"; else
                   printf "%g:%g\n", 10 ^ int(log(lo) / log(10) - (lo < 1)), 10 ^ (int(log(hi) / log(10)) + 1) }' "$CSV")
        echo "set yrange [$yr]"
        echo "set grid"
        echo "set xlabel 'message bytes'"
        echo "set ylabel 'MB/s'"
        echo "set key bottom right"
        PUT_REPS=$(awk -F, '$1=="bw" && $12=="ok" { print $9; exit }' "$CSV")
        echo "set multiplot layout $rows,$cols title \"Bandwidth between 2 ranks: native put, plain active messages,\\naggregated 8-byte messages (effective); median of $PUT_REPS, band: their range\\nMachine: $MACHINE\""
        for i in "${CONFIGS[@]}"; do
            lab=${LABELS[$i]}
            f=$dat/bw_$(echo "$lab" | tr / _)
            echo "set title '$lab'"
            plot="plot "
            sep=""
            for sc in "put:#7570b3:7:native put" "am:#d95f02:5:active messages" \
                      "agg8:#1b9e77:0:aggregated 8 B (effective)"; do
                IFS=: read -r s col pt title <<< "$sc"
                [ -s "${f}_$s.dat" ] || continue
                plot+="$sep'${f}_$s.dat' using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '$col' notitle, "
                if [ "$pt" = 0 ]; then
                    plot+="'${f}_$s.dat' using 1:2 with lines dt 2 lw 2 lc rgb '$col' title '$title'"
                else
                    plot+="'${f}_$s.dat' using 1:2 with linespoints pt $pt ps 0.6 lc rgb '$col' title '$title'"
                fi
                sep=", "
            done
            k=1
            while read -r na; do
                echo "set label $k '$na' at graph 0.04,graph $(awk -v k=$k 'BEGIN { print 0.95 - 0.07 * k }') font ',8'"
                k=$((k + 1))
            done < "${f}_na.txt"
            if [ -z "$sep" ]; then
                echo "set label $k 'no data' at graph 0.4,0.5"
                plot+="1/0 notitle"
            fi
            echo "$plot"
            echo "unset label"
        done
        echo "unset multiplot"
    } > "$gp"
    if gnuplot "$gp" 2> "$OUT/logs/gnuplot.log"; then
        echo
        echo "wrote $CSV, $OUT/fig6_left.png, $OUT/fig6_right.png"
    else
        echo "fig6.sh: gnuplot failed: see $OUT/logs/gnuplot.log" >&2
    fi
fi
echo "total time $(( $(date +%s) - t_start )) s"
