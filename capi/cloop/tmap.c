/* SPDX-License-Identifier: MIT */
/* A loop's transport map: transport id -> protocol slot, so the write fast
 * path (send.c) finds a transport's slot from its id at any time on the
 * loop's thread, not only during the delivery of one of its events. Go
 * adds a transport when it gives it an id and removes it when the id ends
 * (capi/events.go); C only reads (ll__tmap_get, cloop.h). */
#include <stdlib.h>
#include "cloop.h"

#define TMAP_MIN 64

/* Insert into a table known to have room and not to hold id. */
static void place(ll__tentry *e, uint64_t mask, uint64_t id, ll__proto *proto) {
    uint64_t i = id & mask;
    while (e[i].id != 0)
        i = (i + 1) & mask;
    e[i].id = id;
    e[i].proto = proto;
}

/* Double the table (or make the first), rehashing every entry. */
static int grow(ll__pending *p) {
    uint64_t ncap = p->tmap == NULL ? TMAP_MIN : (p->tmap_mask + 1) * 2;
    ll__tentry *ne = calloc((size_t)ncap, sizeof *ne);
    if (ne == NULL)
        return -1;
    if (p->tmap != NULL) {
        for (uint64_t i = 0; i <= p->tmap_mask; i++)
            if (p->tmap[i].id != 0)
                place(ne, ncap - 1, p->tmap[i].id, p->tmap[i].proto);
        free(p->tmap);
    }
    p->tmap = ne;
    p->tmap_mask = ncap - 1;
    return 0;
}

int ll__tmap_put(ll__pending *p, uint64_t id, ll__proto *proto) {
    if (p == NULL || id == 0)
        return -1;
    ll__tentry *e = p->tmap;
    if (e != NULL) {
        for (uint64_t i = id & p->tmap_mask; e[i].id != 0; i = (i + 1) & p->tmap_mask)
            if (e[i].id == id) {
                e[i].proto = proto;
                return 0;
            }
    }
    if ((p->tmap_count + 1) * 2 > (p->tmap == NULL ? 0 : p->tmap_mask + 1) && grow(p) != 0)
        return -1;
    place(p->tmap, p->tmap_mask, id, proto);
    p->tmap_count++;
    return 0;
}

/* Linear probing's deletion without tombstones: the entries after the
 * hole that could not sit at their home index move back into it. */
void ll__tmap_del(ll__pending *p, uint64_t id) {
    if (p == NULL || p->tmap == NULL || id == 0)
        return;
    ll__tentry *e = p->tmap;
    uint64_t mask = p->tmap_mask, i = id & mask;
    while (e[i].id != id) {
        if (e[i].id == 0)
            return;
        i = (i + 1) & mask;
    }
    for (uint64_t j = i;;) {
        e[i].id = 0;
        e[i].proto = NULL;
        for (;;) {
            j = (j + 1) & mask;
            if (e[j].id == 0) {
                p->tmap_count--;
                return;
            }
            uint64_t home = e[j].id & mask;
            /* e[j] stays unless its home is not in the cyclic range (i, j]. */
            int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        e[i] = e[j];
        i = j;
    }
}

void ll__tmap_free(ll__pending *p) {
    if (p == NULL)
        return;
    free(p->tmap);
    p->tmap = NULL;
    p->tmap_mask = p->tmap_count = 0;
}
