/* The context-switch contract: make a context on a stack, switch between two
 * contexts. SPDX-License-Identifier: BSD-3-Clause
 *
 * Two implementations sit behind the same three calls:
 *
 *   asm       tasking/arch/ctx_<arch>.S, built when the Makefile finds the
 *             file for this machine (it then defines GV_HAVE_CTX_ASM=1).
 *             A context is one word: the stack pointer at which the
 *             callee-saved registers and the floating-point control words
 *             were pushed. A switch is a function call: the caller-saved
 *             registers are already dead by the ABI, so only the callee-saved
 *             ones travel.
 *   ucontext  tasking/context_ucontext.c, always built: getcontext /
 *             makecontext / swapcontext. Slower (glibc's swapcontext makes a
 *             sigprocmask system call) but portable; it is what the scheduler
 *             uses where there is no assembly, and the tests run the same
 *             programs over both to cross-check the assembly.
 *
 * gv_ctx_t / gv__ctx_make / gv__ctx_switch name the one the scheduler uses.
 *
 * Rules for both:
 *  - The entry function of a made context must never return (workers loop
 *    forever and are parked, never unwound); the asm traps if it does.
 *  - gv__ctx_switch(from, to) saves the running context into *from and
 *    resumes *to; it returns when some later switch names *from as `to`.
 *  - Contexts are not thread-safe objects: one OS thread owns them.
 */
#ifndef GV_TASKING_CONTEXT_H
#define GV_TASKING_CONTEXT_H

#include <stddef.h>
#include <ucontext.h>

typedef void (*gv_ctx_fn_t)(void *arg);

/* ---- assembly (one word of state: the saved stack pointer) ------------- */
typedef struct gv_ctx_asm {
    void *sp;
} gv_ctx_asm_t;

/* Bytes of saved state at the saved stack pointer (see the .S file). */
#if defined(__aarch64__)
#define GV_CTX_ASM_FRAME 176
#else
#define GV_CTX_ASM_FRAME 64
#endif

#if GV_HAVE_CTX_ASM
/* Lay out an initial frame at the top of [stack_lo, stack_lo + size) so that
 * the first switch to @a ctx calls fn(arg) on that stack with an ABI-aligned
 * stack and the floating-point control words current at this call. */
void gv__ctx_asm_make(gv_ctx_asm_t *ctx, void *stack_lo, size_t size,
                      gv_ctx_fn_t fn, void *arg);
/* Save callee-saved state into *from, resume *to. */
void gv__ctx_asm_switch(gv_ctx_asm_t *from, gv_ctx_asm_t *to);
/* The same, given the value of to->sp: a caller whose last act is the
 * switch can then make it a tail call (no local gv_ctx_t whose address is
 * taken), so the caller's own frame is popped before the registers are
 * pushed, and the saved registers sit right below the frame of the
 * caller's caller: the fewest cache lines to bring back (scheduler.c). */
void gv__ctx_asm_switch_sp(gv_ctx_asm_t *from, void *to_sp);
#endif

/* ---- ucontext (portable) ----------------------------------------------- */
typedef struct gv_ctx_uc {
    ucontext_t uc;
} gv_ctx_uc_t;

void gv__ctx_uc_make(gv_ctx_uc_t *ctx, void *stack_lo, size_t size,
                     gv_ctx_fn_t fn, void *arg);
void gv__ctx_uc_switch(gv_ctx_uc_t *from, gv_ctx_uc_t *to);

/* ---- the one the scheduler uses ---------------------------------------- */
#if GV_HAVE_CTX_ASM
typedef gv_ctx_asm_t gv_ctx_t;
#define gv__ctx_make     gv__ctx_asm_make
#define gv__ctx_switch   gv__ctx_asm_switch
#define GV_CTX_IMPL_NAME "asm"
#else
typedef gv_ctx_uc_t gv_ctx_t;
#define gv__ctx_make     gv__ctx_uc_make
#define gv__ctx_switch   gv__ctx_uc_switch
#define GV_CTX_IMPL_NAME "ucontext"
#endif

#endif
