/* Context switch: the assembly and the ucontext fallback keep callee-saved
 * registers and floating-point control words, align the stack, and run the
 * same programs to the same results. SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include "tasking/context.h"

#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_BYTES (128u << 10)

/* ---- a generic view of both implementations ----------------------------- */

typedef struct impl {
    const char *name;
    size_t      ctx_size;
    void (*make)(void *ctx, void *lo, size_t size, gv_ctx_fn_t fn, void *arg);
    void (*sw)(void *from, void *to);
} impl_t;

#if GV_HAVE_CTX_ASM
static void asm_make(void *c, void *lo, size_t size, gv_ctx_fn_t fn, void *a)
{
    gv__ctx_asm_make(c, lo, size, fn, a);
}
static void asm_sw(void *from, void *to)
{
    gv__ctx_asm_switch(from, to);
}
#endif
static void uc_make(void *c, void *lo, size_t size, gv_ctx_fn_t fn, void *a)
{
    gv__ctx_uc_make(c, lo, size, fn, a);
}
static void uc_sw(void *from, void *to)
{
    gv__ctx_uc_switch(from, to);
}

static const impl_t impls[] = {
#if GV_HAVE_CTX_ASM
    {"asm", sizeof(gv_ctx_asm_t), asm_make, asm_sw},
#endif
    {"ucontext", sizeof(gv_ctx_uc_t), uc_make, uc_sw},
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* Two contexts: main (the test's own stack) and one coroutine. */
typedef struct pair {
    const impl_t *im;
    void         *main_ctx, *co_ctx;
    void         *stack;
    int           done;
} pair_t;

static pair_t *pair_new(const impl_t *im, gv_ctx_fn_t fn)
{
    pair_t *p   = calloc(1, sizeof(*p));
    p->im       = im;
    p->main_ctx = calloc(1, im->ctx_size);
    p->co_ctx   = calloc(1, im->ctx_size);
    p->stack    = malloc(STACK_BYTES);
    im->make(p->co_ctx, p->stack, STACK_BYTES, fn, p);
    return p;
}

static void pair_free(pair_t *p)
{
    free(p->main_ctx);
    free(p->co_ctx);
    free(p->stack);
    free(p);
}

static void to_co(pair_t *p)
{
    p->im->sw(p->main_ctx, p->co_ctx);
}

static void to_main(pair_t *p)
{
    p->im->sw(p->co_ctx, p->main_ctx);
}

/* ---- ping-pong: values cross correctly, many times ----------------------- */

static uint64_t shared_val;

static void pingpong_co(void *arg)
{
    pair_t  *p = arg;
    uint64_t x = 1;

    for (;;) {
        x           = x * 6364136223846793005ull + shared_val;
        shared_val  = x;
        to_main(p);
    }
}

static uint64_t run_pingpong(const impl_t *im, int rounds)
{
    pair_t  *p = pair_new(im, pingpong_co);
    uint64_t h = 0;
    int      i;

    shared_val = 7;
    for (i = 0; i < rounds; i++) {
        to_co(p);
        h          = (h ^ shared_val) * 1099511628211ull;
        shared_val = h >> 7;
    }
    pair_free(p);
    return h;
}

Test(context, pingpong_runs_and_both_impls_agree)
{
    uint64_t ref = run_pingpong(&impls[NIMPLS - 1], 10000);
    size_t   i;

    cr_assert_neq(ref, 0);
    for (i = 0; i < NIMPLS; i++)
        cr_assert_eq(run_pingpong(&impls[i], 10000), ref,
                     "%s disagrees with ucontext", impls[i].name);
}

/* ---- callee-saved registers ---------------------------------------------- */

/* clobber_switch(from, to, seed, sw): put seed+k in every callee-saved
 * register, call sw(from, to), and when control comes back check that each
 * register still holds its value. Returns a bit per register that changed.
 * Both sides of a switch call it with different seeds, so each deliberately
 * clobbers every callee-saved register the other side relies on. */
uint64_t clobber_switch(void *from, void *to, uint64_t seed,
                        void (*sw)(void *, void *));

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl clobber_switch\n"
        ".type clobber_switch, @function\n"
        "clobber_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"             /* aligned for the call */
        "    movq %rdx, (%rsp)\n"         /* keep the seed */
        "    movq %rdx, %rbx\n"
        "    leaq 1(%rdx), %rbp\n"
        "    leaq 2(%rdx), %r12\n"
        "    leaq 3(%rdx), %r13\n"
        "    leaq 4(%rdx), %r14\n"
        "    leaq 5(%rdx), %r15\n"
        "    callq *%rcx\n"
        "    xorl %eax, %eax\n"
        "    movq (%rsp), %rdx\n"
        "    cmpq %rdx, %rbx\n    je 1f\n    orq $1, %rax\n1:\n"
        "    incq %rdx\n"
        "    cmpq %rdx, %rbp\n    je 1f\n    orq $2, %rax\n1:\n"
        "    incq %rdx\n"
        "    cmpq %rdx, %r12\n    je 1f\n    orq $4, %rax\n1:\n"
        "    incq %rdx\n"
        "    cmpq %rdx, %r13\n    je 1f\n    orq $8, %rax\n1:\n"
        "    incq %rdx\n"
        "    cmpq %rdx, %r14\n    je 1f\n    orq $16, %rax\n1:\n"
        "    incq %rdx\n"
        "    cmpq %rdx, %r15\n    je 1f\n    orq $32, %rax\n1:\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size clobber_switch, .-clobber_switch\n");
#define HAVE_CLOBBER 1
#elif defined(__aarch64__)
/* x19-x28 and d8-d15: 18 registers. */
__asm__(".text\n"
        ".globl clobber_switch\n"
        ".type clobber_switch, %function\n"
        "clobber_switch:\n"
        "    sub sp, sp, #176\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    str x2, [sp, #160]\n"
        "    add x19, x2, #0\n    add x20, x2, #1\n    add x21, x2, #2\n"
        "    add x22, x2, #3\n    add x23, x2, #4\n    add x24, x2, #5\n"
        "    add x25, x2, #6\n    add x26, x2, #7\n    add x27, x2, #8\n"
        "    add x28, x2, #9\n"
        "    add x9, x2, #10\n    fmov d8, x9\n"
        "    add x9, x2, #11\n    fmov d9, x9\n"
        "    add x9, x2, #12\n    fmov d10, x9\n"
        "    add x9, x2, #13\n    fmov d11, x9\n"
        "    add x9, x2, #14\n    fmov d12, x9\n"
        "    add x9, x2, #15\n    fmov d13, x9\n"
        "    add x9, x2, #16\n    fmov d14, x9\n"
        "    add x9, x2, #17\n    fmov d15, x9\n"
        "    blr x3\n"
        "    ldr x2, [sp, #160]\n"
        "    mov x0, #0\n"
#define CHK_X(_r, _k)                                                        \
    "    add x9, x2, #" #_k "\n    cmp " #_r ", x9\n    b.eq 1f\n"          \
    "    orr x0, x0, #(1 << " #_k ")\n1:\n"
#define CHK_D(_r, _k)                                                        \
    "    add x9, x2, #" #_k "\n    fmov x10, " #_r "\n    cmp x10, x9\n"    \
    "    b.eq 1f\n    orr x0, x0, #(1 << " #_k ")\n1:\n"
        CHK_X(x19, 0) CHK_X(x20, 1) CHK_X(x21, 2) CHK_X(x22, 3)
        CHK_X(x23, 4) CHK_X(x24, 5) CHK_X(x25, 6) CHK_X(x26, 7)
        CHK_X(x27, 8) CHK_X(x28, 9)
        CHK_D(d8, 10) CHK_D(d9, 11) CHK_D(d10, 12) CHK_D(d11, 13)
        CHK_D(d12, 14) CHK_D(d13, 15) CHK_D(d14, 16) CHK_D(d15, 17)
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    add sp, sp, #176\n"
        "    ret\n"
        ".size clobber_switch, .-clobber_switch\n");
#define HAVE_CLOBBER 1
#else
#define HAVE_CLOBBER 0
#endif

#if HAVE_CLOBBER
static uint64_t co_mask;

static void clobber_co(void *arg)
{
    pair_t *p = arg;

    for (;;) {
        /* Runs with seeds the main side never uses. */
        co_mask |= clobber_switch(p->co_ctx, p->main_ctx,
                                  0xc0ffee0000000000ull, p->im->sw);
    }
}

Test(context, callee_saved_registers_survive_clobbering)
{
    size_t i;
    int    k;

    for (i = 0; i < NIMPLS; i++) {
        pair_t  *p    = pair_new(&impls[i], clobber_co);
        uint64_t mask = 0;

        co_mask = 0;
        for (k = 0; k < 100; k++)
            mask |= clobber_switch(p->main_ctx, p->co_ctx,
                                   0x5eed000000000000ull + (uint64_t)k * 64,
                                   impls[i].sw);
        cr_assert_eq(mask, 0, "%s: main's callee-saved registers changed "
                     "(mask %#llx)", impls[i].name, (unsigned long long)mask);
        cr_assert_eq(co_mask, 0, "%s: coroutine's callee-saved registers "
                     "changed (mask %#llx)", impls[i].name,
                     (unsigned long long)co_mask);
        pair_free(p);
    }
}
#endif

/* ---- floating-point control words ---------------------------------------- */

typedef struct fpstate {
    int      round;
#if defined(__x86_64__)
    uint32_t mxcsr;
    uint16_t fcw;
#elif defined(__aarch64__)
    uint64_t fpcr;
#endif
} fpstate_t;

static void fp_read(fpstate_t *s)
{
    memset(s, 0, sizeof(*s)); /* padding too: the states are memcmp'ed */
    s->round = fegetround();
#if defined(__x86_64__)
    __asm__ __volatile__("stmxcsr %0" : "=m"(s->mxcsr));
    __asm__ __volatile__("fnstcw %0" : "=m"(s->fcw));
    s->mxcsr &= ~0x3fu; /* status flags are not control */
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(s->fpcr));
#endif
}

/* Beyond the rounding mode, set control bits fesetround does not touch:
 * flush-to-zero (and denormals-are-zero) and the x87 precision control. */
static void fp_set_exotic(int round)
{
    fesetround(round);
#if defined(__x86_64__)
    {
        uint32_t m;
        uint16_t c;
        __asm__ __volatile__("stmxcsr %0" : "=m"(m));
        m |= 0x8040u; /* FTZ | DAZ */
        __asm__ __volatile__("ldmxcsr %0" : : "m"(m));
        __asm__ __volatile__("fnstcw %0" : "=m"(c));
        c = (uint16_t)((c & ~0x0300u) | 0x0200u); /* 53-bit precision */
        __asm__ __volatile__("fldcw %0" : : "m"(c));
    }
#elif defined(__aarch64__)
    {
        uint64_t v;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
        v |= 1ull << 24; /* FZ */
        __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
    }
#endif
}

static fpstate_t co_seen;
static int       co_ok;

static void fp_co(void *arg)
{
    pair_t   *p = arg;
    fpstate_t mine, now;

    fp_set_exotic(FE_UPWARD);
    fp_read(&mine);
    for (;;) {
        to_main(p);
        fp_read(&now);
        co_ok   = (memcmp(&now, &mine, sizeof(now)) == 0);
        co_seen = now;
        /* 1/3 rounded up: last bit differs from round-to-nearest. */
        volatile double a = 1.0, b = 3.0;
        co_ok = co_ok && ((a / b) > 0.3333333333333333);
    }
}

Test(context, fpu_control_words_survive)
{
    size_t i;
    int    k;

    for (i = 0; i < NIMPLS; i++) {
        fpstate_t before, after;
        pair_t   *p;

        fesetround(FE_TOWARDZERO);
        fp_read(&before);
        p = pair_new(&impls[i], fp_co);
        for (k = 0; k < 10; k++) {
            to_co(p);
            fp_read(&after);
            cr_assert_eq(after.round, FE_TOWARDZERO,
                         "%s: main's rounding mode changed", impls[i].name);
            cr_assert(memcmp(&before, &after, sizeof(after)) == 0,
                      "%s: main's control words changed", impls[i].name);
            if (k > 0)
                cr_assert(co_ok, "%s: coroutine's control words changed "
                          "(round %d)", impls[i].name, co_seen.round);
        }
        pair_free(p);
        fesetround(FE_TONEAREST);
    }
}

/* ---- stack alignment and a libc call that needs it ----------------------- */

static int  align_ok;
static char align_buf[64];

static void align_co(void *arg)
{
    pair_t *p = arg;
    /* A 16-byte aligned local: the compiler relies on the ABI alignment of
     * the stack pointer to place it. */
    double v[2] __attribute__((aligned(16))) = {3.25, 1.5};

    align_ok = (((uintptr_t)v & 15) == 0) &&
               (((uintptr_t)__builtin_frame_address(0) & 15) == 0);
    /* printf of a double uses aligned SSE spills on x86-64. */
    snprintf(align_buf, sizeof(align_buf), "%.2f %.2Lf", v[0] + v[1],
             (long double)v[0]);
    for (;;)
        to_main(p);
}

Test(context, new_context_stack_is_abi_aligned)
{
    size_t i, off;

    for (i = 0; i < NIMPLS; i++) {
        /* Odd stack sizes and bases: make must align them itself. */
        for (off = 0; off < 16; off += 8) {
            const impl_t *im = &impls[i];
            pair_t       *p  = calloc(1, sizeof(*p));
            char         *mem = malloc(STACK_BYTES + 64);

            p->im       = im;
            p->main_ctx = calloc(1, im->ctx_size);
            p->co_ctx   = calloc(1, im->ctx_size);
            p->stack    = mem;
            im->make(p->co_ctx, mem + off, STACK_BYTES - 13, align_co, p);
            align_ok = 0;
            to_co(p);
            cr_assert(align_ok, "%s: misaligned stack (offset %zu)", im->name,
                      off);
            cr_assert_str_eq(align_buf, "4.75 3.25");
            pair_free(p);
        }
    }
}

/* ---- many contexts in a ring --------------------------------------------- */

#define RING 64
typedef struct ring {
    const impl_t *im;
    void         *ctx[RING + 1]; /* [RING] is main */
    int           pos;
    uint64_t      trace;
} ring_t;

static ring_t ring;

static void ring_co(void *arg)
{
    int id = (int)(intptr_t)arg;
    int round;

    for (round = 0;; round++) {
        ring.trace = ring.trace * 31 + (uint64_t)id * 7 + (uint64_t)round;
        /* The last one hands back to main, the others to their neighbour. */
        ring.im->sw(ring.ctx[id], ring.ctx[(id == RING - 1) ? RING : id + 1]);
    }
}

static uint64_t run_ring(const impl_t *im)
{
    void *stacks[RING];
    int   i, r;

    ring.im    = im;
    ring.trace = 1;
    for (i = 0; i <= RING; i++)
        ring.ctx[i] = calloc(1, im->ctx_size);
    for (i = 0; i < RING; i++) {
        stacks[i] = malloc(STACK_BYTES);
        im->make(ring.ctx[i], stacks[i], STACK_BYTES, ring_co,
                 (void *)(intptr_t)i);
    }
    for (r = 0; r < 50; r++)
        im->sw(ring.ctx[RING], ring.ctx[0]);
    for (i = 0; i < RING; i++)
        free(stacks[i]);
    for (i = 0; i <= RING; i++)
        free(ring.ctx[i]);
    return ring.trace;
}

Test(context, ring_of_contexts_matches_between_impls)
{
    uint64_t ref = run_ring(&impls[NIMPLS - 1]);
    size_t   i;

    for (i = 0; i < NIMPLS; i++)
        cr_assert_eq(run_ring(&impls[i]), ref, "%s: ring trace differs",
                     impls[i].name);
}
