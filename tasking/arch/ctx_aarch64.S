/* Context switch for AArch64 (AAPCS64, Linux, ELF).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * A cooperative switch is a function call, so only the callee-saved state
 * has to survive it: x19-x28, the frame pointer x29, the link register x30
 * (where the context resumes), the stack pointer, the low 64 bits of v8-v15
 * (d8-d15) and the floating-point control register FPCR (rounding mode,
 * flush-to-zero, default NaN). FPSR holds sticky status flags, not control,
 * and is not saved. The state is pushed on the stack of the context being
 * left; the context is the stack pointer after the pushes.
 *
 * Saved frame, lowest address first (ctx->sp points at offset 0):
 *
 *            +-------------+-------------+
 *   sp + 0   | x19         | x20         |
 *   sp + 16  | x21         | x22         |
 *   sp + 32  | x23         | x24         |
 *   sp + 48  | x25         | x26         |
 *   sp + 64  | x27         | x28         |
 *   sp + 80  | x29 (fp)    | x30 (lr)    |  lr: where the context resumes
 *   sp + 96  | d8          | d9          |
 *   sp + 112 | d10         | d11         |
 *   sp + 128 | d12         | d13         |
 *   sp + 144 | d14         | d15         |
 *   sp + 160 | FPCR        | (pad)       |
 *            +-------------+-------------+
 *   sp + 176   the caller's frame (or, in a made context, two zero words)
 *
 * 176 bytes: the stack pointer stays 16-byte aligned as AAPCS64 requires.
 */

    .text

/* void gv__ctx_asm_switch(gv_ctx_asm_t *from (x0), gv_ctx_asm_t *to (x1))
 * Loads to->sp and falls through into gv__ctx_asm_switch_sp. */
    .globl  gv__ctx_asm_switch
    .type   gv__ctx_asm_switch, %function
    .p2align 4
gv__ctx_asm_switch:
    .cfi_startproc
    ldr     x1, [x1]                /* the target's saved stack pointer */
    .cfi_endproc
    .size   gv__ctx_asm_switch, .-gv__ctx_asm_switch

/* void gv__ctx_asm_switch_sp(gv_ctx_asm_t *from (x0), void *to_sp (x1)) */
    .globl  gv__ctx_asm_switch_sp
    .type   gv__ctx_asm_switch_sp, %function
gv__ctx_asm_switch_sp:
    .cfi_startproc
    sub     sp, sp, #176            /* room for the frame */
    .cfi_adjust_cfa_offset 176
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]     /* fp and the resume address */
    stp     d8,  d9,  [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    mrs     x9, fpcr
    str     x9, [sp, #160]          /* FPCR */

    mov     x9, sp
    str     x9, [x0]                /* from->sp = sp: the old context is saved */
    mov     sp, x1                  /* sp = to_sp: now on the new stack */

    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    ldp     d8,  d9,  [sp, #96]
    ldp     d10, d11, [sp, #112]
    ldp     d12, d13, [sp, #128]
    ldp     d14, d15, [sp, #144]
    ldr     x9, [sp, #160]
    mrs     x10, fpcr
    cmp     x9, x10                 /* writing FPCR can stall the pipeline, */
    b.eq    1f                      /* so only write it when it differs */
    msr     fpcr, x9
1:  add     sp, sp, #176            /* drop the frame */
    ret                             /* to x30: into the new context */
    .cfi_endproc
    .size   gv__ctx_asm_switch_sp, .-gv__ctx_asm_switch_sp

/* void gv__ctx_asm_make(gv_ctx_asm_t *ctx (x0), void *stack_lo (x1),
 *                       size_t size (x2), gv_ctx_fn_t fn (x3), void *arg (x4))
 *
 * Builds the frame drawn above at the 16-byte aligned top of the stack, with
 * x19 = fn, x20 = arg, x29 = 0, x30 = the trampoline and FPCR inherited from
 * the caller, followed by two zero words. */
    .globl  gv__ctx_asm_make
    .type   gv__ctx_asm_make, %function
    .p2align 4
gv__ctx_asm_make:
    .cfi_startproc
    add     x9, x1, x2              /* top of the stack */
    and     x9, x9, #~15            /* aligned down to 16 */
    sub     x9, x9, #192            /* 176-byte frame + 16 bytes of zeros */
    stp     x3, x4, [x9, #0]        /* x19 = fn, x20 = arg */
    stp     xzr, xzr, [x9, #16]     /* x21, x22 */
    stp     xzr, xzr, [x9, #32]     /* x23, x24 */
    stp     xzr, xzr, [x9, #48]     /* x25, x26 */
    stp     xzr, xzr, [x9, #64]     /* x27, x28 */
    adr     x10, gv__ctx_asm_trampoline
    stp     xzr, x10, [x9, #80]     /* x29 = 0 ends frame walks, x30 = trampoline */
    stp     xzr, xzr, [x9, #96]     /* d8, d9 */
    stp     xzr, xzr, [x9, #112]    /* d10, d11 */
    stp     xzr, xzr, [x9, #128]    /* d12, d13 */
    stp     xzr, xzr, [x9, #144]    /* d14, d15 */
    mrs     x10, fpcr
    stp     x10, xzr, [x9, #160]    /* FPCR inherited from the caller, pad */
    stp     xzr, xzr, [x9, #176]    /* end-of-stack markers */
    str     x9, [x0]                /* ctx->sp = frame */
    ret
    .cfi_endproc
    .size   gv__ctx_asm_make, .-gv__ctx_asm_make

/* First code a made context runs: fn(arg). fn must never return; if it does
 * there is nothing to return to, so trap. x30 is marked undefined so that
 * unwinders stop here. */
    .type   gv__ctx_asm_trampoline, %function
    .p2align 4
gv__ctx_asm_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    mov     x0, x20                 /* arg */
    blr     x19                     /* fn(arg) */
    brk     #0x1                    /* fn returned: a bug in the caller */
    .cfi_endproc
    .size   gv__ctx_asm_trampoline, .-gv__ctx_asm_trampoline

    .section .note.GNU-stack,"",%progbits
