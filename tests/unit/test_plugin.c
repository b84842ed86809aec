/* The plug-in loader's failures: a missing folder, a file that is not a
 * shared object, and a plug-in without the symbol asked for each give
 * GV_ERR_NOT_FOUND with the path and dlerror()'s text (what gvinfo -t and
 * gv_init print); GV_PLUGIN_DIR decides the folder. Loading a real plug-in
 * needs the shared library (install-check runs programs over ucx and ofi
 * through theirs). SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include "core/env.h"
#include "core/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void set_dir(const char *dir)
{
    char err[256];

    setenv("GV_PLUGIN_DIR", dir, 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK, "%s", err);
    cr_assert_str_eq(gv__plugin_dir(), dir);
}

Test(plugin, missing_folder_names_path_and_reason)
{
    char  why[512];
    void *addr = NULL;

    set_dir("/nonexistent-gv-plugins");
    cr_assert_eq(gv__plugin_sym("gv_tl_ucx.so", "gv_tl_ucx_ops", &addr, why,
                                sizeof(why)), GV_ERR_NOT_FOUND);
    cr_assert_null(addr);
    cr_assert(strstr(why, "/nonexistent-gv-plugins/gv_tl_ucx.so") != NULL,
              "%s", why);
    cr_assert(strstr(why, "No such file") != NULL, "%s", why);
}

Test(plugin, not_a_shared_object)
{
    char  dir[] = "/tmp/gv-plugin-XXXXXX", path[64], why[512];
    void *addr  = NULL;
    FILE *f;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/gv_tl_ofi.so", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    set_dir(dir);
    cr_assert_eq(gv__plugin_sym("gv_tl_ofi.so", "gv_tl_ofi_ops", &addr, why,
                                sizeof(why)), GV_ERR_NOT_FOUND);
    unlink(path);
    rmdir(dir);
    cr_assert(strstr(why, path) != NULL, "%s", why);
    cr_assert(strstr(why, "not loaded") != NULL, "%s", why);
}

Test(plugin, missing_symbol)
{
    char  why[512];
    void *addr = NULL;

    /* libc is a shared object everywhere; it has no ops table */
    set_dir("/lib/x86_64-linux-gnu");
    if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) != 0)
        cr_skip_test("no /lib/x86_64-linux-gnu/libc.so.6 to load");
    cr_assert_eq(gv__plugin_sym("libc.so.6", "gv_tl_nothing_ops", &addr, why,
                                sizeof(why)), GV_ERR_NOT_FOUND);
    cr_assert(strstr(why, "has no gv_tl_nothing_ops") != NULL, "%s", why);
}
