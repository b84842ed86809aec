/* The version: gv_version(), the GV_VERSION_* macros and the VERSION file
 * say the same. SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include "core/core.h"

#include <stdio.h>
#include <string.h>

#ifndef GV_SOURCE_DIR
#error "GV_SOURCE_DIR: the Makefile passes the source tree (for VERSION)"
#endif

Test(version, matches_macros_and_file)
{
    char  want[64], file[64];
    FILE *f = fopen(GV_SOURCE_DIR "/VERSION", "r");

    cr_assert_not_null(f, "cannot open %s/VERSION", GV_SOURCE_DIR);
    cr_assert_not_null(fgets(file, sizeof(file), f), "VERSION is empty");
    fclose(f);
    file[strcspn(file, "\r\n")] = '\0';
    snprintf(want, sizeof(want), "%d.%d.%d", GV_VERSION_MAJOR,
             GV_VERSION_MINOR, GV_VERSION_PATCH);
    cr_assert_str_eq(gv_version(), want, "gv_version() says %s, the macros %s",
                     gv_version(), want);
    cr_assert_str_eq(gv_version(), file, "gv_version() says %s, VERSION %s",
                     gv_version(), file);
    cr_assert(GV_VERSION_NUM ==
                  GV_VERSION_AT(GV_VERSION_MAJOR, GV_VERSION_MINOR,
                                GV_VERSION_PATCH),
              "GV_VERSION_NUM disagrees with GV_VERSION_AT");
}

Test(version, commit_is_named)
{
    const char *c = gv__version_commit();

    cr_assert_not_null(c);
    cr_assert(c[0] != '\0', "the commit string is empty (want a git "
              "describe or \"unknown\")");
}
