/* Plug-ins: the backends with libraries of their own (ucx, ofi, mpi, the
 * PMIx bootstrap) are, in the shared library, shared objects of their own
 * that this file loads with dlopen when a job asks for one, so that
 * libgrapevine.so needs none of those libraries (docs/DESIGN.md, "Plug-in
 * backends"). The static library links the backends in and never calls
 * this. SPDX-License-Identifier: BSD-3-Clause
 *
 * Threading: from the rank's one thread (gv_init, gvinfo). */
#ifndef GV_CORE_PLUGIN_H
#define GV_CORE_PLUGIN_H

#include <grapevine/core.h>

#include <stddef.h>

/* Whether this copy of the library loads plug-ins (the shared library) or
 * has the backends linked in (the static one): the Makefile compiles the
 * few objects that differ twice. */
#ifndef GV_PLUGINS
#define GV_PLUGINS 0
#endif

/* 1 in the shared library, which loads plug-ins; 0 in the static one
 * (for gvinfo, compiled once and linked with either; core/boot.c). */
int gv__plugins_used(void);

/* The plug-in folder: GV_PLUGIN_DIR if set, else the folder "grapevine"
 * beside the libgrapevine.so this process loaded (found with dladdr), else
 * the install's, compiled in (GV_PLUGIN_LIBDIR). */
const char *gv__plugin_dir(void);

/* Load plug-in @a file (a file name, in gv__plugin_dir()) and look up its
 * symbol @a sym. A plug-in stays loaded until the process ends (its
 * library may have started threads; loading it again is a lookup).
 * @param [out] addr_p  the symbol's address
 * @param [out] why     on failure: the path and dlerror()'s text
 * @return GV_OK, or GV_ERR_NOT_FOUND (nothing logged: the caller decides
 *         whether it is an error). */
gv_status_t gv__plugin_sym(const char *file, const char *sym, void **addr_p,
                           char *why, size_t len);

#endif
