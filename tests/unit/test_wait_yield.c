/* A worker that waits through the core's wait policy (gv_wait, barriers,
 * credits) must let the rank's other workers run: two tasks each raise
 * their own flag and wait for the other's, so whichever runs first can
 * only finish if its wait yields.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <grapevine.h>

#include <stdlib.h>
#include <string.h>

static volatile int flags[2], finished;

static int other_set(void *arg)
{
    return flags[*(const int *)arg ^ 1] != 0;
}

static void raise_and_wait(void *args)
{
    int me;
    memcpy(&me, args, sizeof(me));
    flags[me] = 1;
    gv_wait(other_set, &me); /* would spin forever without yielding */
    finished++;
}

static void setup(void)
{
    setenv("GV_TRANSPORT", "self", 1);
    setenv("GV_WARN_UNUSED_ENV", "0", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

Test(wait_yield, waiting_worker_lets_others_run, .init = setup,
     .fini = gv_finalize, .timeout = 20)
{
    gv_finish_t f;

    int i;

    gv_finish_begin(&f);
    for (i = 0; i < 2; i++)
        cr_assert_eq(gv_spawn_private(raise_and_wait, &i, sizeof(i)), GV_OK);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    cr_assert_eq(finished, 2);
}
