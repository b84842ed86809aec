/* Context switch for x86-64, System V ABI (Linux, ELF).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * A cooperative switch is a function call, so only the callee-saved state
 * has to survive it: rbx, rbp, r12-r15, the stack pointer, the SSE control
 * and status register (MXCSR) and the x87 control word. Everything else is
 * caller-saved and already dead at the call. The state is pushed on the
 * stack of the context being left, and the context itself is just the stack
 * pointer after the pushes (see tasking/context.h).
 *
 * Saved frame, lowest address first (ctx->sp points at offset 0):
 *
 *            +---------------------------+
 *   sp + 0   | MXCSR (4) | x87 CW (2)|pad| control words of the context
 *   sp + 8   | r12                       |
 *   sp + 16  | r13                       |
 *   sp + 24  | r14                       |
 *   sp + 32  | r15                       |
 *   sp + 40  | rbx                       |
 *   sp + 48  | rbp                       |
 *   sp + 56  | return address            | where the context resumes
 *            +---------------------------+
 *   sp + 64    the caller's frame (or, in a made context, two zero words
 *              that end backtraces)
 *
 * 64 bytes, one cache line when the stack pointer is 64-byte aligned; the
 * scheduler prefetches it before switching (Grappa's context prefetching).
 */

#if defined(__CET__) && (__CET__ & 1)
#define ENDBR endbr64
#else
#define ENDBR
#endif

    .text

/* void gv__ctx_asm_switch(gv_ctx_asm_t *from  (%rdi),
 *                         gv_ctx_asm_t *to    (%rsi))
 * Loads to->sp and falls through into gv__ctx_asm_switch_sp. */
    .globl  gv__ctx_asm_switch
    .type   gv__ctx_asm_switch, @function
    .p2align 4
gv__ctx_asm_switch:
    .cfi_startproc
    ENDBR
    movq    (%rsi), %rsi            /* the target's saved stack pointer */
    .cfi_endproc
    .size   gv__ctx_asm_switch, .-gv__ctx_asm_switch

/* void gv__ctx_asm_switch_sp(gv_ctx_asm_t *from (%rdi), void *to_sp (%rsi)) */
    .globl  gv__ctx_asm_switch_sp
    .type   gv__ctx_asm_switch_sp, @function
gv__ctx_asm_switch_sp:
    .cfi_startproc
    ENDBR
    pushq   %rbp                    /* sp + 48 */
    .cfi_adjust_cfa_offset 8
    pushq   %rbx                    /* sp + 40 */
    .cfi_adjust_cfa_offset 8
    pushq   %r15                    /* sp + 32 */
    .cfi_adjust_cfa_offset 8
    pushq   %r14                    /* sp + 24 */
    .cfi_adjust_cfa_offset 8
    pushq   %r13                    /* sp + 16 */
    .cfi_adjust_cfa_offset 8
    pushq   %r12                    /* sp + 8 */
    .cfi_adjust_cfa_offset 8
    leaq    -8(%rsp), %rsp          /* room for the control words */
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)                  /* sp + 0: MXCSR */
    fnstcw  4(%rsp)                 /* sp + 4: x87 control word */

    movl    (%rsp), %eax            /* the control words in force now */
    movzwl  4(%rsp), %edx
    movq    %rsp, (%rdi)            /* from->sp = sp: the old context is saved */
    movq    %rsi, %rsp              /* sp = to_sp: now on the new stack */

    /* Loading MXCSR and the x87 control word stalls the pipeline for a
     * while, and contexts almost never differ in them: restore them only
     * when they differ from the words in force (eax, dx). */
    cmpl    (%rsp), %eax
    jne     1f
    cmpw    4(%rsp), %dx
    je      2f
1:  ldmxcsr (%rsp)                  /* restore the new context's MXCSR */
    fldcw   4(%rsp)                 /* and its x87 control word */
2:  leaq    8(%rsp), %rsp           /* drop the control-word slot */
    popq    %r12
    popq    %r13
    popq    %r14
    popq    %r15
    popq    %rbx
    popq    %rbp
    ret                             /* into the new context */
    .cfi_endproc
    .size   gv__ctx_asm_switch_sp, .-gv__ctx_asm_switch_sp

/* void gv__ctx_asm_make(gv_ctx_asm_t *ctx (%rdi), void *stack_lo (%rsi),
 *                       size_t size (%rdx), gv_ctx_fn_t fn (%rcx),
 *                       void *arg (%r8))
 *
 * Builds, at the 16-byte aligned top of the stack, the frame drawn above
 * with r12 = fn, r13 = arg, rbp = 0 and the return address pointing at the
 * trampoline, followed by two zero words. The frame base is 16-byte aligned,
 * so after the switch's `ret` the stack pointer is 16-byte aligned at the
 * trampoline, and its `call` enters fn with the ABI's alignment. */
    .globl  gv__ctx_asm_make
    .type   gv__ctx_asm_make, @function
    .p2align 4
gv__ctx_asm_make:
    .cfi_startproc
    ENDBR
    leaq    (%rsi,%rdx), %rax       /* top of the stack */
    andq    $-16, %rax              /* aligned down to 16 */
    subq    $80, %rax               /* 64-byte frame + 16 bytes of zeros */
    stmxcsr (%rax)                  /* inherit the caller's MXCSR */
    fnstcw  4(%rax)                 /* and x87 control word */
    movw    $0, 6(%rax)             /* clear the 2-byte pad */
    movq    %rcx, 8(%rax)           /* r12 = fn */
    movq    %r8, 16(%rax)           /* r13 = arg */
    movq    $0, 24(%rax)            /* r14 */
    movq    $0, 32(%rax)            /* r15 */
    movq    $0, 40(%rax)            /* rbx */
    movq    $0, 48(%rax)            /* rbp = 0 ends frame-pointer walks */
    leaq    gv__ctx_asm_trampoline(%rip), %r9
    movq    %r9, 56(%rax)           /* return address = trampoline */
    movq    $0, 64(%rax)            /* end-of-stack markers */
    movq    $0, 72(%rax)
    movq    %rax, (%rdi)            /* ctx->sp = frame */
    ret
    .cfi_endproc
    .size   gv__ctx_asm_make, .-gv__ctx_asm_make

/* First code a made context runs: fn(arg). fn must never return; if it does
 * there is no caller to return to, so trap instead of running off the stack.
 * The CFI marks the return address undefined so that debuggers and
 * unwinders stop here instead of walking into the zero words. */
    .type   gv__ctx_asm_trampoline, @function
    .p2align 4
gv__ctx_asm_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    ENDBR
    movq    %r13, %rdi              /* arg */
    callq   *%r12                   /* fn(arg) */
    ud2                             /* fn returned: a bug in the caller */
    .cfi_endproc
    .size   gv__ctx_asm_trampoline, .-gv__ctx_asm_trampoline

    .section .note.GNU-stack,"",%progbits
