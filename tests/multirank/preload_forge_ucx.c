/* Fault injection for ucx/driver_ucx's forged-frame tests: loaded with
 * LD_PRELOAD in front of real UCX, it passes ucp_am_send_nbx() through,
 * and before every GV_TEST_FORGE_EVERY-th frame the ucx transport sends
 * without a UCX user header (its formats S and I, whose data starts with
 * the frame header: u32 source rank, u32 sequence number, u32 job tag) it
 * first sends forged copies of that frame on the same endpoint:
 *   tag     the job tag changed: a frame of another job;
 *   src     a source rank no job has;
 *   ahead   a sequence number far past the receive window;
 *   behind  the sequence number of a frame already delivered;
 *   short   a frame shorter than its header.
 * Frames up to FRAME_MAX bytes and longer ones (format I frames of 4-16
 * KiB, which the transport sends eager from its mid-size buffers) are
 * counted apart, every GV_TEST_FORGE_EVERY-th of each, so that the few
 * long ones are forged too however the two mix. A short copy is offered
 * to UCX's short path from the stack (FORCE_IMM_CMPL: it must never wait
 * in UCX for the stack); a long copy may take more than one fragment,
 * which UCX cannot complete at once, so it goes from the heap with the
 * flags of the real send (UCP_AM_SEND_FLAG_EAGER) and is freed when UCX is
 * done with it.
 * A correct receiver rejects each with a logged reason and delivers every
 * real frame once, in order. Forgeries that a receiver could not tell from
 * a real frame (a right header with other bytes) are not sent: the tag is
 * what keeps strangers out, and a job's own ranks are trusted.
 * At exit it prints how many it sent, and how many of them were longer
 * than FRAME_MAX ("mid-size"), so that a test can tell that the injection
 * happened. Unset or 0: nothing is forged.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#define GV_AM_ID_S 0x4756u /* transports/ucx.c: UCX_AM_ID */
#define GV_AM_ID_I 0x4757u /* ... UCX_AM_ID_I */
#define FRAME_MAX  4096    /* ... UCX_COPY_MAX: longer copies go from heap */
/* The longest frame forged: ucx.c's UCX_MID_SIZE (16-byte format I header
 * and UCX_ID_MAX = 16384 bytes of payload), with room for it to grow. */
#define MID_MAX    (16 + 16384 + 4096)
#define NKINDS     5
#define KIND_SHORT 4

typedef ucs_status_ptr_t (*send_fn_t)(ucp_ep_h, unsigned, const void *,
                                      size_t, const void *, size_t,
                                      const ucp_request_param_t *);

static unsigned long forged[NKINDS], forged_mid, every, frames, mid_frames;

static void report(void)
{
    unsigned long n = 0;
    int           k, kinds = 0;

    for (k = 0; k < NKINDS; k++) {
        n += forged[k];
        kinds += (forged[k] > 0);
    }
    if (every > 0)
        fprintf(stderr, "preload_forge_ucx: forged %lu frames (%d kinds: "
                        "tag %lu, src %lu, ahead %lu, behind %lu, short "
                        "%lu; mid-size %lu)\n", n, kinds, forged[0],
                forged[1], forged[2], forged[3], forged[4], forged_mid);
}

/* Turn the copy @a f of a frame into a forgery of kind @a k (all but
 * short: that one is only cut); 0 when there is none to make. */
static int mangle(uint8_t *f, int k)
{
    uint32_t w;

    switch (k) {
    case 0: /* tag */
        memcpy(&w, f + 8, 4);
        w ^= 0x5a5a5a5au;
        memcpy(f + 8, &w, 4);
        break;
    case 1: /* src */
        w = 0x7fffffffu;
        memcpy(f, &w, 4);
        break;
    case 2: /* ahead */
        memcpy(&w, f + 4, 4);
        w += 1u << 30;
        memcpy(f + 4, &w, 4);
        break;
    case 3: /* behind: the frame before this one, delivered already */
        memcpy(&w, f + 4, 4);
        if (w == 0)
            return 0;
        w -= 1;
        memcpy(f + 4, &w, 4);
        break;
    default:
        break;
    }
    return 1;
}

/* UCX is done with a long forged copy (sent, or cancelled at close). */
static void mid_done(void *request, ucs_status_t status, void *user_data)
{
    (void)status;
    free(user_data);
    ucp_request_free(request);
}

/* Send the heap copy @a f of @a flen bytes with the flags of the real
 * send's @a param; it is freed when UCX is done with it. 1 when UCX took
 * it. */
static int send_mid(send_fn_t real, ucp_ep_h ep, unsigned id, uint8_t *f,
                    size_t flen, const ucp_request_param_t *param)
{
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;

    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send      = mid_done;
    p.user_data    = f;
    if (param->op_attr_mask & UCP_OP_ATTR_FIELD_FLAGS) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        p.flags         = param->flags;
    }
    sp = real(ep, id, NULL, 0, f, flen, &p);
    if (sp == NULL) { /* done already: no callback comes */
        free(f);
        return 1;
    }
    if (UCS_PTR_IS_ERR(sp)) {
        free(f);
        return 0;
    }
    return 1; /* mid_done() frees it */
}

static void forge(send_fn_t real, ucp_ep_h ep, unsigned id,
                  const uint8_t *data, size_t len,
                  const ucp_request_param_t *param)
{
    uint8_t             small[FRAME_MAX];
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;
    int                 k;

    if ((len < 12) || (len > MID_MAX))
        return;
    p.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    for (k = 0; k < NKINDS; k++) {
        size_t   flen = (k == KIND_SHORT) ? 8 : len;
        uint8_t *f    = (flen <= sizeof(small)) ? small : malloc(flen);

        if (f == NULL)
            continue;
        memcpy(f, data, flen);
        if (!mangle(f, k)) {
            if (f != small)
                free(f);
            continue;
        }
        if (f != small) {
            if (send_mid(real, ep, id, f, flen, param)) {
                forged[k]++;
                forged_mid++;
            }
            continue;
        }
        /* Only what UCX takes at once: a forged frame must never wait in
         * UCX for this stack buffer. */
        sp = real(ep, id, NULL, 0, f, flen, &p);
        if (sp == NULL)
            forged[k]++;
        else if (!UCS_PTR_IS_ERR(sp))
            abort(); /* FORCE_IMM_CMPL never returns a request */
    }
}

ucs_status_ptr_t ucp_am_send_nbx(ucp_ep_h ep, unsigned id, const void *header,
                                 size_t header_length, const void *buffer,
                                 size_t count,
                                 const ucp_request_param_t *param)
{
    static send_fn_t real;

    if (real == NULL) {
        const char *e = getenv("GV_TEST_FORGE_EVERY");

        real = (send_fn_t)dlsym(RTLD_NEXT, "ucp_am_send_nbx");
        if (real == NULL) {
            fprintf(stderr, "preload_forge_ucx: no ucp_am_send_nbx to call: "
                            "%s\n", dlerror());
            abort();
        }
        every = (e != NULL) ? strtoul(e, NULL, 10) : 0;
        atexit(report);
    }
    /* Contiguous bytes only: the transport never passes a datatype. */
    if ((every > 0) && ((id == GV_AM_ID_S) || (id == GV_AM_ID_I)) &&
        (header_length == 0) &&
        !(param->op_attr_mask & UCP_OP_ATTR_FIELD_DATATYPE)) {
        unsigned long *n = (count > FRAME_MAX) ? &mid_frames : &frames;

        if (++*n % every == 0)
            forge(real, ep, id, buffer, count, param);
    }
    return real(ep, id, header, header_length, buffer, count, param);
}
