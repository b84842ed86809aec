/* Internal: the communicator the MPI bootstrap (core/boot_mpi.c) made,
 * shared with the mpi transport so that both live in one MPI job.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_BOOT_MPI_H
#define GV_CORE_BOOT_MPI_H

#include <grapevine/core.h>
#include <mpi.h>
#include <stddef.h>

/* The bootstrap's duplicate of MPI_COMM_WORLD (errors return instead of
 * aborting), or MPI_COMM_NULL when this job did not bootstrap through MPI
 * (gvrun, PMIx or a single rank). Valid until the bootstrap's fini. */
MPI_Comm gv__boot_mpi_comm(void);

/* Text of an MPI error code, for log lines. */
const char *gv__mpi_strerror(int rc, char *buf, size_t len);

/* Complete a request (a non-blocking collective, typically) within
 * GV_TIMEOUT_S, yielding the core after GV_SPIN_US. @a what names it in the
 * error message. @return GV_OK, GV_ERR_IO or GV_ERR_TIMEOUT (then the
 * request stays active: its buffers must stay valid). */
gv_status_t gv__mpi_wait(MPI_Request *req, const char *what);

#endif
