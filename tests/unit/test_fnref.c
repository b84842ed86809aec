/* Functions on the wire: gv_fn_encode/gv_fn_decode round trips, and what
 * they refuse. SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <grapevine.h>

#include <stdlib.h>

static int twice(int x)
{
    return 2 * x;
}

Test(fnref, round_trip_of_program_and_library_code)
{
    gv_fnref_t ref;
    int (*back)(int);

    cr_assert_eq(gv_fn_encode((const void *)twice, &ref), GV_OK);
    cr_assert_eq(ref.pad, 0);
    back = (int (*)(int))gv_fn_decode(&ref);
    cr_assert_eq((void *)back, (void *)twice);
    cr_assert_eq(back(21), 42);
    /* code of another loaded object (libc) */
    cr_assert_eq(gv_fn_encode((const void *)abs, &ref), GV_OK);
    cr_assert_eq(gv_fn_decode(&ref), (void *)abs);
}

Test(fnref, data_and_forged_references_are_refused)
{
    static int data;
    gv_fnref_t ref = {0, 0, 0};

    cr_assert_eq(gv_fn_encode(&data, &ref), GV_ERR_INVALID);
    cr_assert_eq(gv_fn_encode((const void *)twice, NULL), GV_ERR_INVALID);
    ref.mod = 100000;
    cr_assert_null(gv_fn_decode(&ref));
    cr_assert_eq(gv_fn_encode((const void *)twice, &ref), GV_OK);
    ref.off = ~0ull;
    cr_assert_null(gv_fn_decode(&ref));
    cr_assert_null(gv_fn_decode(NULL));
}
