/* coll_mpi: Open MPI's collectives measured as perf/coll.c measures
 * Grapevine's (perf/coll.h): MPI_Allreduce/MPI_Iallreduce of one int64
 * and MPI_Bcast/MPI_Ibcast of 8 bytes and of -S bytes, on MPI_COMM_WORLD.
 * A plain MPI program (no Grapevine call), the reference of perf/coll.sh:
 *   mpirun -np 4 --mca btl self,vader build/perf/coll_mpi [-i n] [-r n] [-S bytes]
 * Built when Open MPI is (MPI=1); otherwise it says so and exits 77.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "coll.h"

#if GV_HAVE_MPI
#include <mpi.h>

static int check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int  len = 0;

    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "coll_mpi: %s: %s\n", what, msg);
    return 1;
}

static int mpi_allreduce8(int nb, const int64_t *in, int64_t *out)
{
    MPI_Request req;

    if (!nb)
        return check(MPI_Allreduce(in, out, 1, MPI_INT64_T, MPI_SUM,
                                   MPI_COMM_WORLD), "MPI_Allreduce");
    if (check(MPI_Iallreduce(in, out, 1, MPI_INT64_T, MPI_SUM,
                             MPI_COMM_WORLD, &req), "MPI_Iallreduce"))
        return 1;
    return check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait (iallreduce)");
}

static int mpi_bcast(int nb, void *buf, size_t len)
{
    MPI_Request req;

    if (!nb)
        return check(MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD),
                     "MPI_Bcast");
    if (check(MPI_Ibcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD, &req),
              "MPI_Ibcast"))
        return 1;
    return check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait (ibcast)");
}

static int mpi_barrier(void)
{
    return check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

static int mpi_max_double(double *v)
{
    return check(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX,
                               MPI_COMM_WORLD), "MPI_Allreduce (max)");
}

int main(int argc, char **argv)
{
    coll_opts_t o = coll_options("coll_mpi", argc, argv);
    coll_impl_t c = {"mpi", mpi_allreduce8, mpi_bcast, mpi_barrier,
                     mpi_max_double, 0, 0};
    int         rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (c.rank == 0)
        out_begin("coll_mpi", "mpi", c.size);
    if ((c.rank == 0) && !out_machine())
        printf("# coll_mpi: Open MPI collectives on %d ranks\n", c.size);
    rc = coll_run(&c, &o);
    if (rc != 0)
        MPI_Abort(MPI_COMM_WORLD, rc);
    MPI_Finalize();
    return 0;
}
#else
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "coll_mpi: built without Open MPI (MPI=0; needs "
            "libopenmpi-dev): nothing to measure\n");
    return 77;
}
#endif
