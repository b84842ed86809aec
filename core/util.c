/* Memory helpers, kernel randomness, clocks. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

void *gv__malloc(size_t len, const char *what)
{
    void *p = malloc((len != 0) ? len : 1);
    if (p == NULL)
        gv_fatal("out of memory: %zu bytes for %s", len, what);
    return p;
}

void *gv__calloc(size_t n, size_t len, const char *what)
{
    void *p = calloc((n != 0) ? n : 1, (len != 0) ? len : 1);
    if (p == NULL)
        gv_fatal("out of memory: %zu x %zu bytes for %s", n, len, what);
    return p;
}

void *gv__malloc_aligned(size_t align, size_t len, const char *what)
{
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    size_t n = (len + align - 1) & ~(align - 1);
    void  *p = aligned_alloc(align, (n != 0) ? n : align);
    if (p == NULL)
        gv_fatal("out of memory: %zu bytes aligned to %zu for %s", len, align,
                 what);
    return p;
}

void *gv__realloc(void *old, size_t len, const char *what)
{
    void *p = realloc(old, (len != 0) ? len : 1);
    if (p == NULL)
        gv_fatal("out of memory: %zu bytes for %s", len, what);
    return p;
}

gv_status_t gv__random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            gv_error("getrandom failed: %m");
            return GV_ERR_IO;
        }
        p   += n;
        len -= (size_t)n;
    }
    return GV_OK;
}

uint64_t gv_time_ns(void)
{
    return gv__now_ns();
}

double gv_wtime(void)
{
    return (double)gv__now_ns() * 1e-9;
}

uint64_t gv__mem_available(void)
{
    FILE              *f = fopen("/proc/meminfo", "r");
    char               line[128];
    unsigned long long kb = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024u;
}

int gv__node_mem_fits(const char *tl, uint64_t per_rank, int local,
                      const char *what)
{
    uint64_t avail = gv__mem_available();
    uint64_t n     = (local > 0) ? (uint64_t)local : 1;

    if ((avail == 0) || (per_rank <= (avail - avail / 8) / n))
        return 1;
    gv__tl_why(tl, "%s: %llu ranks on this node would each take %.2f GiB "
               "at once, %.2f GiB in all, more than the %.2f GiB this node "
               "has available less an eighth kept spare: lower %s", tl,
               (unsigned long long)n, (double)per_rank / (1 << 30),
               (double)per_rank * (double)n / (1 << 30),
               (double)(avail - avail / 8) / (1 << 30), what);
    return 0;
}
