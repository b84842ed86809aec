/* Status code names and messages, generated from GV_STATUS_MAP.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine/core.h>

const char *gv_status_str(gv_status_t status)
{
    switch (status) {
#define GV__STATUS_STR(_name, _val, _msg) case GV_##_name: return _msg;
    GV_STATUS_MAP(GV__STATUS_STR)
#undef GV__STATUS_STR
    }
    return "unknown status";
}

const char *gv_status_name(gv_status_t status)
{
    switch (status) {
#define GV__STATUS_NAME(_name, _val, _msg) case GV_##_name: return #_name;
    GV_STATUS_MAP(GV__STATUS_NAME)
#undef GV__STATUS_NAME
    }
    return "UNKNOWN";
}
