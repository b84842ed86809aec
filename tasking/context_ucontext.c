/* Portable context switch on getcontext/makecontext/swapcontext: the
 * fallback where there is no assembly, and the reference the tests compare
 * the assembly against. SPDX-License-Identifier: BSD-3-Clause */
#include "tasking/context.h"
#include "core/core.h"

#include <stdint.h>

/* makecontext passes only int arguments, so the function and its argument
 * travel as 32-bit halves and are put back together here. */
static void uc_trampoline(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi,
                          unsigned arg_lo)
{
    uintptr_t   fn  = ((uintptr_t)fn_hi << 16 << 16) | (uintptr_t)fn_lo;
    uintptr_t   arg = ((uintptr_t)arg_hi << 16 << 16) | (uintptr_t)arg_lo;
    gv_ctx_fn_t f   = (gv_ctx_fn_t)fn;

    f((void *)arg);
    /* uc_link is NULL: returning would end the thread. Say why instead. */
    gv_fatal("a context's entry function returned");
}

void gv__ctx_uc_make(gv_ctx_uc_t *ctx, void *stack_lo, size_t size,
                     gv_ctx_fn_t fn, void *arg)
{
    uintptr_t f = (uintptr_t)fn;
    uintptr_t a = (uintptr_t)arg;

    if (getcontext(&ctx->uc) != 0)
        gv_fatal("getcontext failed: %m");
    ctx->uc.uc_stack.ss_sp   = stack_lo;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link          = NULL;
    /* The shifts in two steps keep them defined where uintptr_t is 32 bits. */
    makecontext(&ctx->uc, (void (*)(void))uc_trampoline, 4,
                (unsigned)(f >> 16 >> 16), (unsigned)(f & 0xffffffffu),
                (unsigned)(a >> 16 >> 16), (unsigned)(a & 0xffffffffu));
}

void gv__ctx_uc_switch(gv_ctx_uc_t *from, gv_ctx_uc_t *to)
{
    if (swapcontext(&from->uc, &to->uc) != 0)
        gv_fatal("swapcontext failed: %m");
}
