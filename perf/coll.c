/* coll: Grapevine's team collectives on every rank of the job: 8-byte
 * all-reduce and broadcast latency, large-broadcast bandwidth, blocking and
 * non-blocking. perf/coll_mpi.c measures Open MPI's the same way (perf/coll.h);
 * perf/coll.sh runs both side by side.
 *   GV_TRANSPORT=shm build/bin/gvrun -n 4 build/perf/coll [-i n] [-r n] [-S bytes]
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>

#include "coll.h"

static int check(gv_status_t st, const char *what)
{
    if (st == GV_OK)
        return 0;
    fprintf(stderr, "coll: rank %d: %s: %s\n", gv_rank(), what,
            gv_status_str(st));
    return 1;
}

static int gv_allreduce8(int nb, const int64_t *in, int64_t *out)
{
    gv_coll_req_t *req;

    if (!nb)
        return check(gv_team_allreduce(GV_TEAM_WORLD, in, out, 1, GV_INT64,
                                       GV_SUM), "gv_team_allreduce");
    if (check(gv_team_iallreduce(GV_TEAM_WORLD, in, out, 1, GV_INT64, GV_SUM,
                                 &req), "gv_team_iallreduce"))
        return 1;
    return check(gv_coll_wait(&req), "gv_coll_wait (iallreduce)");
}

static int gv_bcast(int nb, void *buf, size_t len)
{
    gv_coll_req_t *req;

    if (!nb)
        return check(gv_team_bcast(GV_TEAM_WORLD, 0, buf, len),
                     "gv_team_bcast");
    if (check(gv_team_ibcast(GV_TEAM_WORLD, 0, buf, len, &req),
              "gv_team_ibcast"))
        return 1;
    return check(gv_coll_wait(&req), "gv_coll_wait (ibcast)");
}

static int gv_barrier1(void)
{
    return check(gv_team_barrier(GV_TEAM_WORLD), "gv_team_barrier");
}

static int gv_max_double(double *v)
{
    double in = *v;
    return check(gv_team_allreduce(GV_TEAM_WORLD, &in, v, 1, GV_DOUBLE,
                                   GV_MAX), "gv_team_allreduce (max)");
}

int main(int argc, char **argv)
{
    coll_opts_t o = coll_options("coll", argc, argv);
    coll_impl_t c = {"gv", gv_allreduce8, gv_bcast, gv_barrier1,
                     gv_max_double, 0, 0};
    int         rc;

    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    c.rank = gv_rank();
    c.size = gv_nranks();
    if (c.rank == 0)
        out_begin("coll", gv_transport_name(), c.size);
    if ((c.rank == 0) && !out_machine())
        printf("# coll: Grapevine team collectives over %s on %d ranks\n",
               gv_transport_name(), c.size);
    rc = coll_run(&c, &o);
    if (rc != 0)
        gv_abort(rc, "coll failed");
    gv_finalize();
    return 0;
}
