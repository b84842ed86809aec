/* Progress hooks (gv_progress_hook_add/remove) on one rank over the self
 * transport: a hook runs at every poll with its argument, its count adds
 * to gv_progress()'s, a pair added twice runs once, removal stops it, bad
 * arguments and a full table are errors, gv_finalize removes every hook.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <grapevine.h>

#include <stdlib.h>

static unsigned count_calls(void *arg)
{
    (*(int *)arg)++;
    return 3;
}

static unsigned idle(void *arg)
{
    return 0;
}

/* Done once the hook counted two more polls. */
static int after_hook_ran(void *arg)
{
    static int start = -1;

    if (start < 0)
        start = *(int *)arg;
    return *(int *)arg >= start + 2;
}

static void setup(void)
{
    setenv("GV_TRANSPORT", "self", 1);
    setenv("GV_WARN_UNUSED_ENV", "0", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

Test(progress_hook, runs_every_poll_with_its_arg, .init = setup,
     .fini = gv_finalize)
{
    int a = 0, b = 0;

    cr_assert_eq(gv_progress_hook_add(count_calls, &a), GV_OK);
    cr_assert_eq(gv_progress_hook_add(count_calls, &a), GV_OK);
    cr_assert_eq(gv_progress_hook_add(count_calls, &b), GV_OK);
    cr_assert_geq(gv_progress(), 6);
    cr_assert_eq(a, 1, "a pair added twice ran %d times in one poll", a);
    cr_assert_eq(b, 1);
    gv_progress();
    cr_assert_eq(a, 2);
    cr_assert_eq(gv_progress_hook_remove(count_calls, &a), GV_OK);
    cr_assert_eq(gv_progress_hook_remove(count_calls, &a), GV_ERR_NOT_FOUND);
    gv_progress();
    cr_assert_eq(a, 2);
    cr_assert_eq(b, 3);
    /* A wait polls too. */
    gv_wait(after_hook_ran, &b);
    cr_assert_geq(b, 5);
    cr_assert_eq(gv_progress_hook_remove(count_calls, &b), GV_OK);
}

Test(progress_hook, bad_arguments_and_a_full_table, .init = setup,
     .fini = gv_finalize)
{
    static int slot[GV_PROGRESS_HOOKS_MAX];
    int        i, added = 0;

    cr_assert_eq(gv_progress_hook_add(NULL, NULL), GV_ERR_INVALID);
    for (i = 0; i < GV_PROGRESS_HOOKS_MAX; i++)
        if (gv_progress_hook_add(idle, &slot[i]) == GV_OK)
            added++;
    /* The runtime's own hooks share the table: some adds were refused. */
    cr_assert_lt(added, GV_PROGRESS_HOOKS_MAX);
    cr_assert_gt(added, 0);
    cr_assert_eq(gv_progress_hook_add(idle, NULL), GV_ERR_NO_RESOURCE);
    cr_assert_eq(gv_progress_hook_remove(idle, &slot[0]), GV_OK);
    cr_assert_eq(gv_progress_hook_add(idle, NULL), GV_OK);
}

Test(progress_hook, finalize_removes_every_hook)
{
    int a = 0;

    setup();
    cr_assert_eq(gv_progress_hook_add(count_calls, &a), GV_OK);
    gv_progress();
    cr_assert_eq(a, 1);
    gv_finalize();
    setup();
    gv_progress();
    cr_assert_eq(a, 1, "a hook outlived gv_finalize");
    cr_assert_eq(gv_progress_hook_remove(count_calls, &a), GV_ERR_NOT_FOUND);
    gv_finalize();
}
