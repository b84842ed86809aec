/* Status codes: values, names and messages from the one table.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <grapevine.h>

Test(status, values_follow_ucx_convention)
{
    cr_assert_eq(GV_OK, 0);
    cr_assert_eq(GV_INPROGRESS, 1);
    cr_assert_lt(GV_ERR_INVALID, 0);
    cr_assert_lt(GV_ERR_UNSUPPORTED, 0);
}

Test(status, every_code_has_a_message_and_a_name)
{
#define CHECK(_name, _val, _msg)                                             \
    cr_assert_str_eq(gv_status_str(GV_##_name), _msg);                       \
    cr_assert_str_eq(gv_status_name(GV_##_name), #_name);
    GV_STATUS_MAP(CHECK)
#undef CHECK
}

Test(status, unknown_code)
{
    cr_assert_str_eq(gv_status_str((gv_status_t)-999), "unknown status");
    cr_assert_str_eq(gv_status_name((gv_status_t)-999), "UNKNOWN");
}
