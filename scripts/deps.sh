#!/bin/sh
# Install (as root) or list (otherwise) the Debian packages Grapevine uses.
# Usage: scripts/deps.sh [--check]   --check: only say what is missing.
set -eu
PKGS="build-essential pkg-config libhwloc-dev libcriterion-dev clang
libucx-dev ucx-utils libfabric-dev libfabric-bin libopenmpi-dev openmpi-bin
libpmix-dev libboost-context-dev hpcc gnuplot-nox libgraphblas-dev doxygen
postgresql"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "${1:-}" != "--check" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    exit 0
fi
echo "deps: missing Debian packages:$missing"
echo "deps: as root: apt-get install$missing"
echo "deps: (backends whose libraries are missing are left out of the build)"
exit 0
