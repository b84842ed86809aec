/* Function pointers as (loaded object, offset), for the wire.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_FNREF_H
#define GV_CORE_FNREF_H

#include <stdint.h>

typedef struct {
    uint32_t mod;  /* index of the loaded object in dl_iterate_phdr order */
    uint32_t pad;
    uint64_t off;  /* address minus the object's load address */
} gv__fnref_t;

/* @return 1 and fills *ref_p if @a fn is in an executable segment of a
 *         loaded object, 0 otherwise. */
int   gv__fn_encode(const void *fn, gv__fnref_t *ref_p);
/* @return the local address, or NULL if @a ref (untrusted: it came from
 *         the wire) is not inside an executable segment here. */
void *gv__fn_decode(const gv__fnref_t *ref);

#endif
