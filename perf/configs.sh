# shellcheck shell=bash
# The transport configurations the perf/ scripts measure: a table only (no
# probing, no output), sourced (bash) by transports.sh and compare.sh.
# SPDX-License-Identifier: BSD-3-Clause

# Open MPI refuses to run as root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GV_WARN_UNUSED_ENV=0

# label | GV_TRANSPORT | the library's own variable | mpirun options.
# mpi/tcp forces osc/pt2pt: osc/sm would do the window's atomics through
# shared memory whatever the BTL, and this row is meant to be TCP.
# shellcheck disable=SC2034 # used by the scripts that source this
LABELS=(tcp shm ucx/sm ucx/tcp ofi/shm ofi/tcp mpi/vader mpi/tcp)
# shellcheck disable=SC2034
TLS=(tcp shm ucx ucx ofi ofi mpi mpi)
# shellcheck disable=SC2034
ENVS=("" "" "UCX_TLS=sm,self" "UCX_TLS=tcp,self" "FI_PROVIDER=shm"
      "FI_PROVIDER=tcp;ofi_rxm" "" "")
# shellcheck disable=SC2034
MCAS=("" "" "" "" "" "" "--mca btl self,vader"
      "--mca btl self,tcp --mca osc pt2pt")
