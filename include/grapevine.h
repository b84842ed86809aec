/** @file
 * Grapevine: the public umbrella header. Which threads may call what is
 * stated in grapevine/core.h (gv_thread_level_t) and at the top of each
 * header. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GRAPEVINE_H
#define GRAPEVINE_H

#include <grapevine/core.h>
#include <grapevine/am.h>
#include <grapevine/rma.h>
#include <grapevine/team.h>
#include <grapevine/task.h>
#include <grapevine/dsm.h>

#endif
