/* The shm transport leaves nothing in /dev/shm: once gv_init has returned
 * on every rank, no name of this job ("gv-<job id hex>-<rank>") may be
 * left, although every rank still has every segment mapped; and the
 * mappings still work (a put to every rank lands where it should).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "core/core.h"
#include "core/boot.h"

#include <dirent.h>
#include <grapevine/rma.h>

/* Count the entries of /dev/shm that start with @a prefix; print them. */
static int count_names(const char *prefix)
{
    DIR           *d = opendir("/dev/shm");
    struct dirent *e;
    size_t         plen = strlen(prefix);
    int            n = 0;

    MR_CHECK(d != NULL, "opendir /dev/shm failed");
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, plen) == 0) {
            fprintf(stderr, "[%04d] left in /dev/shm: %s\n", gv_rank(),
                    e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Also look at our own mappings: the segments must be there, deleted. */
static int count_mapped(const char *prefix, int *deleted_p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[1024], path[64];
    int   n = 0;

    *deleted_p = 0;
    if (f == NULL)
        return -1;
    snprintf(path, sizeof(path), "/dev/shm/%s", prefix);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strstr(line, path) == NULL)
            continue;
        n++;
        if (strstr(line, "(deleted)") != NULL)
            (*deleted_p)++;
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    char     prefix[64];
    int      P, left, mapped, deleted, r;
    uint64_t off, *mine;

    mr_init(&argc, &argv);
    if (strcmp(gv_transport_name(), "shm") != 0)
        mr_skip("not shm");
    P = gv_nranks();
    snprintf(prefix, sizeof(prefix), "gv-%llx-",
             (unsigned long long)gv__ctx.boot->job_id);

    /* gv_init ends with a barrier, so every rank is past its unlink. */
    left = count_names(prefix);
    MR_CHECK(left == 0, "%d segment name(s) of this job left in /dev/shm",
             left);

    /* Every rank's segment is still mapped here (its name deleted); the
     * mappings are what put/get and the rings use. Count one per rank at
     * least (a mapping may be split in several lines). */
    mapped = count_mapped(prefix, &deleted);
    if (mapped >= 0) {
        MR_CHECK(mapped >= P, "only %d mapping(s) of %d segments", mapped, P);
        MR_CHECK(deleted == mapped, "%d of %d mappings not deleted",
                 mapped - deleted, mapped);
    }

    /* The heaps still work through the unlinked segments. */
    MR_OK(gv_sym_alloc(8 * (size_t)P, 8, &off));
    mine = gv_sym_ptr(off);
    memset(mine, 0, 8 * (size_t)P);
    gv_barrier();
    for (r = 0; r < P; r++) {
        uint64_t v = 1000u * (uint64_t)gv_rank() + (uint64_t)r;
        MR_OK(gv_put(r, off + 8 * (uint64_t)gv_rank(), &v, 8));
    }
    MR_OK(gv_rma_flush(-1));
    gv_barrier();
    for (r = 0; r < P; r++)
        MR_CHECK(mine[r] == 1000u * (uint64_t)r + (uint64_t)gv_rank(),
                 "word from rank %d holds %llu", r,
                 (unsigned long long)mine[r]);
    gv_barrier();
    left = count_names(prefix);
    MR_CHECK(left == 0, "%d segment name(s) appeared later", left);
    if (gv_rank() == 0)
        printf("ok: no segment of job %llx in /dev/shm, %d mapped\n",
               (unsigned long long)gv__ctx.boot->job_id, mapped);
    gv_finalize();
    return 0;
}
