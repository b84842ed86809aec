/* A job whose ranks all run on one node needs no network beyond the
 * machine, yet the libraries under ucx and ofi listen on every interface
 * they like (UCX's tcp on the external address as well as loopback,
 * libfabric's tcp only on the external one): a stranger on the network
 * could then reach the ranks. gv__tl_loopback_name() names this machine's
 * loopback interface ("lo"), for the transports to restrict the library to
 * it (UCX_NET_DEVICES, FI_TCP_IFACE) unless the user chose interfaces.
 * Internal to transports/. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TRANSPORTS_LOOPBACK_H
#define GV_TRANSPORTS_LOOPBACK_H

#include "core/boot.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>

/* 1 and the loopback interface's name in @a buf when every rank of the
 * job @a boot describes runs on this node and it has a loopback interface
 * that is up; else 0. */
static inline int gv__tl_loopback_name(const gv_boot_t *boot, char *buf,
                                       size_t len)
{
    struct ifaddrs *ifa, *i;
    int             found = 0;

    if ((boot->nnodes != 1) || (getifaddrs(&ifa) != 0))
        return 0;
    for (i = ifa; (i != NULL) && !found; i = i->ifa_next) {
        if ((i->ifa_name != NULL) && (i->ifa_flags & IFF_LOOPBACK) &&
            (i->ifa_flags & IFF_UP)) {
            snprintf(buf, len, "%s", i->ifa_name);
            found = 1;
        }
    }
    freeifaddrs(ifa);
    return found;
}

#endif
