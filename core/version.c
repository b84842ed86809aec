/* The version the library was built as, and the commit it was built from.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

/* GV_COMMIT: `git describe --always --dirty` when the build ran, "unknown"
 * outside a git checkout (the Makefile writes it, rewriting only when it
 * changes). */
#include "gv_commit.h"

#define GV__STR2(_x) #_x
#define GV__STR(_x)  GV__STR2(_x)

const char *gv_version(void)
{
    return GV__STR(GV_VERSION_MAJOR) "." GV__STR(GV_VERSION_MINOR) "."
           GV__STR(GV_VERSION_PATCH);
}

const char *gv__version_commit(void)
{
    return GV_COMMIT;
}
