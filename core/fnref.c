/* Function pointers on the wire: a code address travels as (loaded
 * object, offset), since address-space randomisation loads the same binary
 * at different addresses on every rank. Used by the tasking layer (stolen
 * and remote tasks) and the DSM layer (delegate calls, remote loops).
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "core/fnref.h"
#include "core/core.h"

#include <link.h>

/* The same binary runs on every rank, but address-space randomisation puts
 * its code at different addresses: a function travels as (index of the
 * loaded object in dl_iterate_phdr order, offset from its load address),
 * and the receiver accepts it only inside an executable segment. */
typedef struct {
    uint32_t  mod;
    uintptr_t base, lo, hi;
} seg_t;

static seg_t   *segs;
static unsigned nsegs, segs_cap, nmods, last_seg;

static int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    int i;

    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if ((ph->p_type != PT_LOAD) || !(ph->p_flags & PF_X))
            continue;
        if (nsegs == segs_cap) {
            segs_cap = (segs_cap == 0) ? 16 : segs_cap * 2;
            segs     = gv_realloc(segs, segs_cap * sizeof(*segs));
        }
        segs[nsegs].mod  = nmods;
        segs[nsegs].base = (uintptr_t)info->dlpi_addr;
        segs[nsegs].lo   = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        segs[nsegs].hi   = segs[nsegs].lo + ph->p_memsz;
        nsegs++;
    }
    nmods++;
    return 0;
}

static void segs_build(void)
{
    nsegs = nmods = last_seg = 0;
    dl_iterate_phdr(seg_cb, NULL);
}

int gv__fn_encode(const void *fn, gv__fnref_t *ref_p)
{
    uintptr_t a = (uintptr_t)fn;
    unsigned  i, pass;

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < nsegs; i++) {
            unsigned k = (last_seg + i) % nsegs;
            if ((a >= segs[k].lo) && (a < segs[k].hi)) {
                last_seg   = k;
                ref_p->mod = segs[k].mod;
                ref_p->pad = 0;
                ref_p->off = a - segs[k].base;
                return 1;
            }
        }
        segs_build(); /* a library may have been loaded since */
    }
    return 0;
}

void *gv__fn_decode(const gv__fnref_t *ref)
{
    unsigned i, pass;

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < nsegs; i++) {
            if ((segs[i].mod != ref->mod) ||
                (ref->off < segs[i].lo - segs[i].base) ||
                (ref->off >= segs[i].hi - segs[i].base))
                continue;
            return (void *)(segs[i].base + (uintptr_t)ref->off);
        }
        segs_build(); /* first use here, or a library loaded since */
    }
    return NULL;
}

/* ---- the public form ------------------------------------------------------ */

gv_status_t gv_fn_encode(const void *fn, gv_fnref_t *ref_p)
{
    gv__fnref_t r;

    if ((ref_p == NULL) || !gv__fn_encode(fn, &r)) {
        gv_error("%p is not code of a loaded object", fn);
        return GV_ERR_INVALID;
    }
    ref_p->mod = r.mod;
    ref_p->pad = 0;
    ref_p->off = r.off;
    return GV_OK;
}

void *gv_fn_decode(const gv_fnref_t *ref)
{
    gv__fnref_t r;

    if (ref == NULL)
        return NULL;
    r.mod = ref->mod;
    r.pad = 0;
    r.off = ref->off;
    return gv__fn_decode(&r);
}
