/* The loaders' shared parts. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_GRAPH_LOAD_INTERNAL_H
#define GV_FW_GRAPH_LOAD_INTERNAL_H

#include "graph/graph_internal.h"

int         gv__graph_open(const char *path, int64_t *size_p, gv__gerr_t *err);
gv_status_t gv__graph_load_text(const char *path, int64_t nverts,
                                gv_edgelist_t *el_p);
gv_status_t gv__graph_load_mtx(const char *path, gv_edgelist_t *el_p);

#endif
