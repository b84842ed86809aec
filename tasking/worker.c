/* Worker stacks: mmap'ed with a guard page, pooled by the scheduler, and a
 * SIGSEGV handler that turns a hit on a guard page into a clear message.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * One mapping per worker, lowest address first:
 *
 *   +------------+-----------------------------+------------+-----------+---+
 *   | guard page | stack (grows down) ...      | descriptor | task slot |gap|
 *   | PROT_NONE  |                             | 64 bytes   | 96 bytes  |   |
 *   +------------+-----------------------------+------------+-----------+---+
 *   map          stack_lo                      w            slot    map+len
 *
 * The descriptor sits right above the first frames of the stack, so that a
 * worker suspended at a shallow depth (the common case) is one page and a
 * handful of consecutive cache lines, which the scheduler prefetches from
 * its saved stack pointer; the task's arguments, read once when the task
 * starts, are kept out of that run of lines. The gap is the cache colour
 * (below).
 *
 * Cache colouring: stacks are a power of two apart, so if every descriptor
 * sat at the very top of its mapping they would all fall in the same set of
 * the L1 and L2 caches (whose set index comes from address bits 6-15), and
 * with hundreds of thousands of workers only a handful of descriptors and
 * stack tops could be cached at once, prefetched lines evicting each other
 * before use. So the top of worker i sits (i mod 1024) cache lines below
 * the end of its mapping: consecutive workers, which the FIFO ready queue
 * runs one after the other, land in different sets. The gap costs address
 * space, not memory: its pages are never touched.
 *
 * Guard pages and vm.max_map_count: where the kernel has guard regions
 * (madvise MADV_GUARD_INSTALL, Linux 6.13), the guard is a marker in the
 * page table of an ordinary mapping: the stacks' mappings stay one memory
 * map area however many there are, and every stack is guarded. Elsewhere a
 * PROT_NONE page (mprotect) between two writable mappings splits them, so
 * every guarded stack costs the kernel two memory map areas, and Linux
 * allows 65530 by default. Such stacks are therefore guarded while that
 * budget lasts (leaving room for the rest of the program); past it they
 * are mapped without a guard, adjacent unguarded stacks merge into one
 * area, and a canary word at the bottom of the stack is checked each time a
 * task ends. The first unguarded stack logs a warning that says how to
 * raise the limit.
 */
#include "tasking/task_internal.h"

#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define CANARY          0x6776737461636b21ull /* "gvstack!" */
#define SYS_STACK_BYTES (256u << 10)
#define ALT_STACK_BYTES (64u << 10)
#define MAPS_RESERVE    8192 /* map areas left for everything else */
#define COLORS          1024 /* cache colours of the stack tops */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13; older C libraries lack it */
#endif

/* How a stack is guarded (gv_worker_t.guarded). */
enum { GUARD_NONE = 0, GUARD_MPROTECT, GUARD_MARKER };

static size_t           page_size;
static uint64_t         guard_budget, nguarded;
static int              warned_unguarded;
static int              have_markers; /* MADV_GUARD_INSTALL works */
static void            *alt_stack;
static stack_t          old_alt;
static struct sigaction old_segv, old_bus;
static int              handler_installed;
static uint64_t         next_id = 1;

static uint64_t read_ulong_file(const char *path, uint64_t dflt)
{
    FILE              *f = fopen(path, "r");
    unsigned long long v;

    if (f == NULL)
        return dflt;
    if (fscanf(f, "%llu", &v) != 1)
        v = dflt;
    fclose(f);
    return v;
}

static uint64_t count_maps(void)
{
    FILE    *f = fopen("/proc/self/maps", "r");
    uint64_t n = 0;
    int      c;

    if (f == NULL)
        return 1024;
    while ((c = getc(f)) != EOF)
        n += (c == '\n');
    fclose(f);
    return n;
}

/* Format a decimal into buf (async-signal-safe); returns the length. */
static size_t fmt_u64(char *buf, uint64_t v)
{
    char   tmp[24];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + (v % 10));
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

static size_t append(char *buf, size_t off, size_t cap, const char *s)
{
    while ((*s != '\0') && (off + 1 < cap))
        buf[off++] = *s++;
    return off;
}

static void report_overflow(const gv_worker_t *w, const char *how)
{
    static char msg[256];
    char        num[24];
    size_t      off = 0;
    int         rank = gv__log_rank;

    /* Only async-signal-safe work here: the fault may have hit while the
     * worker held a stdio or malloc lock. */
    off = append(msg, off, sizeof(msg), "stack overflow in worker ");
    num[fmt_u64(num, w->id)] = '\0';
    off = append(msg, off, sizeof(msg), num);
    off = append(msg, off, sizeof(msg), " (GV_STACK is ");
    num[fmt_u64(num, gv__sched.stack_size)] = '\0';
    off = append(msg, off, sizeof(msg), num);
    off = append(msg, off, sizeof(msg), " bytes; raise GV_STACK)");
    off = append(msg, off, sizeof(msg), how);
    msg[off] = '\0';

    {
        char   line[400];
        size_t l = 0;
        line[l++] = '[';
        if (rank >= 0) {
            char   r[24];
            size_t rn = fmt_u64(r, (uint64_t)rank), k;
            for (k = rn; k < 4; k++)
                line[l++] = '0';
            for (k = 0; k < rn; k++)
                line[l++] = r[k];
        } else {
            l = append(line, l, sizeof(line), "----");
        }
        l = append(line, l, sizeof(line), "] FATAL tasking/worker.c: ");
        l = append(line, l, sizeof(line), msg);
        l = append(line, l, sizeof(line), "\n");
        if (write(STDERR_FILENO, line, l) < 0) {
            /* nothing more can be done about it */
        }
    }
    gv__job_abort(1, msg);
}

static void segv_handler(int sig, siginfo_t *si, void *uctx)
{
    gv_worker_t     *w    = gv__sched.current;
    char            *addr = (char *)si->si_addr;
    struct sigaction *old = (sig == SIGBUS) ? &old_bus : &old_segv;

    /* A hit on the guard page, or just below it (a frame bigger than a
     * page can jump over the guard), of the worker that was running. */
    if ((w != NULL) && (w->kind != GV_WK_ROOT) && w->guarded &&
        (addr < w->stack_lo) &&
        (addr >= w->stack_lo - page_size - (64u << 10)))
        report_overflow(w, "");

    /* Not ours: hand the signal to whoever had it before. */
    if ((old->sa_flags & SA_SIGINFO) && (old->sa_sigaction != NULL)) {
        old->sa_sigaction(sig, si, uctx);
        return;
    }
    if ((old->sa_handler != SIG_DFL) && (old->sa_handler != SIG_IGN) &&
        (old->sa_handler != NULL)) {
        old->sa_handler(sig);
        return;
    }
    /* Default action: reinstall it and return; the faulting instruction
     * runs again and the kernel ends the process as it would have. */
    sigaction(sig, old, NULL);
}

void gv__worker_sys_init(void)
{
    struct sigaction sa;
    stack_t          ss;
    uint64_t         max_maps, used;

    page_size = (size_t)sysconf(_SC_PAGESIZE);
    max_maps  = read_ulong_file("/proc/sys/vm/max_map_count", 65530);
    used      = count_maps();
    guard_budget = (max_maps > used + MAPS_RESERVE)
                       ? (max_maps - used - MAPS_RESERVE) / 2 : 0;
    nguarded         = 0;
    warned_unguarded = 0;
    have_markers     = 1; /* until the kernel says otherwise */

    /* The handler runs on its own stack: the worker's is the one that
     * overflowed. */
    alt_stack = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (alt_stack == MAP_FAILED)
        gv_fatal("mmap of the signal stack failed: %m");
    ss.ss_sp    = alt_stack;
    ss.ss_size  = ALT_STACK_BYTES;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, &old_alt) != 0)
        gv_fatal("sigaltstack failed: %m");

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = segv_handler;
    sa.sa_flags     = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if ((sigaction(SIGSEGV, &sa, &old_segv) != 0) ||
        (sigaction(SIGBUS, &sa, &old_bus) != 0))
        gv_fatal("sigaction failed: %m");
    handler_installed = 1;
}

void gv__worker_sys_fini(void)
{
    if (handler_installed) {
        sigaction(SIGSEGV, &old_segv, NULL);
        sigaction(SIGBUS, &old_bus, NULL);
        handler_installed = 0;
    }
    if (alt_stack != NULL) {
        /* Put back the previous alternate stack (or none). */
        if (old_alt.ss_sp == NULL)
            old_alt.ss_flags = SS_DISABLE;
        sigaltstack(&old_alt, NULL);
        munmap(alt_stack, ALT_STACK_BYTES);
        alt_stack = NULL;
    }
}

/* Make the page at map a guard: a marker if the kernel has them, else
 * PROT_NONE. Returns the GUARD_ kind, or -1 on failure (the mapping is left
 * to the caller). */
static int install_guard(char *map)
{
    if (have_markers) {
        if (madvise(map, page_size, MADV_GUARD_INSTALL) == 0)
            return GUARD_MARKER;
        /* EINVAL from a kernel older than 6.13, or a refusal we do not
         * know: PROT_NONE pages from now on, as before guard markers. */
        gv_debug("no guard markers (madvise: %m): guard pages are PROT_NONE "
                 "pages, within vm.max_map_count");
        have_markers = 0;
    }
    if (mprotect(map, page_size, PROT_NONE) != 0) {
        gv_error("mprotect of a guard page failed: %m");
        return -1;
    }
    nguarded++;
    return GUARD_MPROTECT;
}

static gv_worker_t *map_worker(size_t stack_bytes, int kind)
{
    uint64_t     id        = next_id++;
    size_t       stack_len = (stack_bytes + page_size - 1) & ~(page_size - 1);
    int          guarded   = have_markers || (nguarded < guard_budget) ||
                             (kind == GV_WK_SYS);
    /* Cache colouring: see the top of this file. */
    size_t       color     = (size_t)(id % COLORS) * 64;
    size_t       map_len   = stack_len + (guarded ? page_size : 0) +
                             ((color + page_size - 1) & ~(page_size - 1));
    char        *map;
    gv_worker_t *w;

    map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1,
               0);
    if (map == MAP_FAILED) {
        gv_error("mmap of a %zu-byte worker stack failed after %llu workers: "
                 "%m", map_len, (unsigned long long)gv__sched.nworkers);
        return NULL;
    }
    if (guarded) {
        guarded = install_guard(map);
        if (guarded < 0) {
            munmap(map, map_len);
            return NULL;
        }
    } else if (!warned_unguarded) {
        warned_unguarded = 1;
        gv_warn("worker stacks past the first %llu have no guard page "
                "(each one costs two of vm.max_map_count's %llu map areas); "
                "their overflow is caught by a canary when a task ends, "
                "later than a guard page would. Raise the limit with "
                "sysctl vm.max_map_count to guard them all",
                (unsigned long long)nguarded,
                (unsigned long long)read_ulong_file(
                    "/proc/sys/vm/max_map_count", 0));
    }
    /* Aligned as its type says: the descriptor is one cache line. */
    w = (gv_worker_t *)(((uintptr_t)(map + map_len - color) -
                         sizeof(gv__task_t) - sizeof(gv_worker_t)) &
                        ~(uintptr_t)63);
    memset(w, 0, sizeof(*w));
    w->slot     = (gv__task_t *)((char *)w + sizeof(gv_worker_t));
    w->stack_lo = map + (guarded ? page_size : 0);
    w->map_len  = map_len;
    w->guarded  = (uint8_t)guarded;
    w->kind     = (uint8_t)kind;
    w->color    = (uint32_t)color;
    w->id       = (uint32_t)id;
    if (!guarded)
        *(uint64_t *)w->stack_lo = CANARY;
    return w;
}

gv_worker_t *gv__worker_new(gv_ctx_fn_t entry, int kind)
{
    size_t       bytes = (kind == GV_WK_SYS) ? SYS_STACK_BYTES
                                              : gv__sched.stack_size;
    gv_worker_t *w     = map_worker(bytes, kind);

    if (w == NULL)
        return NULL;
    /* The stack ends where the descriptor begins. */
    gv__ctx_make(&w->ctx, w->stack_lo, (size_t)((char *)w - w->stack_lo),
                 entry, w);
    return w;
}

void gv__worker_free(gv_worker_t *w)
{
    /* The alignment of the descriptor left less than 64 bytes below the
     * colour gap: rounding up to a page finds the end of the mapping. */
    uintptr_t end = ((uintptr_t)w + sizeof(gv_worker_t) +
                     sizeof(gv__task_t) + w->color + page_size - 1) &
                    ~(uintptr_t)(page_size - 1);
    char     *map = (char *)(end - w->map_len);

    if ((w->guarded == GUARD_MPROTECT) && (nguarded > 0))
        nguarded--;
    munmap(map, w->map_len);
}

void gv__worker_check_canary(gv_worker_t *w)
{
    if (!w->guarded && (*(uint64_t *)w->stack_lo != CANARY))
        report_overflow(w, " [canary]");
}
