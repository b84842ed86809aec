# shellcheck shell=bash
# The transport configurations this build and machine can run, and how to
# launch a program over one of them. Sourced (bash) by fig6.sh and
# aggsweep.sh, which set BUILD (a build directory) before sourcing it.
# SPDX-License-Identifier: BSD-3-Clause

# shellcheck source=perf/configs.sh
. "$(dirname "${BASH_SOURCE[0]}")/configs.sh"

GVRUN=$BUILD/bin/gvrun
built=$("$BUILD/bin/gvinfo" -t 2>/dev/null)
have_tl() {
    echo "$built" | grep -Eq "^  $1 +built"
}
have_mpirun() {
    command -v mpirun >/dev/null
}

# CONFIGS: the indices of the configurations this build and machine can run
# (those in ONLY, a space-separated list of labels, when it is set).
CONFIGS=()
for i in "${!LABELS[@]}"; do
    if [ -n "${ONLY:-}" ] && ! echo " $ONLY " | grep -q " ${LABELS[$i]} "; then
        continue
    elif ! have_tl "${TLS[$i]}"; then
        echo "# skip ${LABELS[$i]}: transport ${TLS[$i]} not built"
    elif [ "${TLS[$i]}" = mpi ] && ! have_mpirun; then
        echo "# skip ${LABELS[$i]}: no mpirun"
    else
        CONFIGS+=("$i")
    fi
done

# launch IDX NRANKS TIMEOUT LOG PROG ARGS...: run PROG on NRANKS ranks of
# configuration IDX, output to LOG; returns the exit status.
launch() {
    local i=$1 n=$2 t=$3 log=$4
    shift 4
    local envs=(GV_TRANSPORT="${TLS[$i]}")
    [ -n "${ENVS[$i]}" ] && envs+=("${ENVS[$i]}")
    if [ "${TLS[$i]}" = mpi ]; then
        # shellcheck disable=SC2086
        env "${envs[@]}" timeout -k 5 "$t" mpirun --oversubscribe -np "$n" \
            ${MCAS[$i]} "$@" > "$log" 2>&1 < /dev/null
    else
        env "${envs[@]}" timeout -k 5 "$t" "$GVRUN" -n "$n" "$@" \
            > "$log" 2>&1 < /dev/null
    fi
}

note_of() {    # exit status -> CSV note
    case "$1" in
    0) echo ok ;;
    3|77) echo "skip: no native remote atomics or put" ;;
    124|137) echo "timeout" ;;
    *) echo "failed rc=$1" ;;
    esac
}
