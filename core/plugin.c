/* Loading plug-ins: the folder, dlopen, dlsym. See core/plugin.h.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* dladdr */
#include "core/plugin.h"
#include "core/core.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GV_PLUGIN_LIBDIR
#define GV_PLUGIN_LIBDIR "/usr/local/lib/grapevine"
#endif

const char *gv__plugin_dir(void)
{
    static char dir[PATH_MAX];
    Dl_info     info;
    char       *slash;

    if ((gv__env.PLUGIN_DIR != NULL) && (gv__env.PLUGIN_DIR[0] != '\0'))
        return gv__env.PLUGIN_DIR;
    if (dir[0] != '\0')
        return dir;
    /* The file this function is in: libgrapevine.so.X.Y.Z, wherever the
     * program found it (rpath, LD_LIBRARY_PATH, the system's folders). */
    if ((dladdr((void *)gv__plugin_dir, &info) != 0) &&
        (info.dli_fname != NULL) && (strchr(info.dli_fname, '/') != NULL) &&
        (strlen(info.dli_fname) + sizeof("/grapevine") < sizeof(dir))) {
        /* "bin/../lib/libgrapevine.so.X.Y.Z" (an $ORIGIN rpath) reads
         * better resolved, as gvinfo -t prints it */
        if (realpath(info.dli_fname, dir) == NULL)
            snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        slash = strrchr(dir, '/');
        snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/grapevine");
    } else {
        snprintf(dir, sizeof(dir), "%s", GV_PLUGIN_LIBDIR);
    }
    return dir;
}

gv_status_t gv__plugin_sym(const char *file, const char *sym, void **addr_p,
                           char *why, size_t len)
{
    char        path[PATH_MAX + 64];
    const char *err;
    void       *h, *addr;

    snprintf(path, sizeof(path), "%s/%s", gv__plugin_dir(), file);
    /* RTLD_LOCAL: a plug-in's libraries (UCX, Open MPI) stay out of the
     * program's namespace; RTLD_NOW: a missing symbol fails here, named,
     * not at the first call. */
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        err = dlerror();
        snprintf(why, len, "plug-in %s not loaded: %s", path,
                 (err != NULL) ? err : "dlopen failed");
        return GV_ERR_NOT_FOUND;
    }
    dlerror();
    addr = dlsym(h, sym);
    if (addr == NULL) {
        err = dlerror();
        snprintf(why, len, "plug-in %s has no %s: %s", path, sym,
                 (err != NULL) ? err : "not defined");
        dlclose(h);
        return GV_ERR_NOT_FOUND;
    }
    gv_debug("plug-in %s: %s at %p", path, sym, addr);
    *addr_p = addr;
    return GV_OK;
}
