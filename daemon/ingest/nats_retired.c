/* SPDX-License-Identifier: MIT */
/* nats:// inputs, worker thread: freeing libnats subscriptions and key-value watchers safely.
 * libnats 3.4 (Debian 12) may still be handing a message to a subscription that another thread
 * frees (nats.c #637, fixed in 3.6). So a subscription, or a watcher (one inside), is freed only
 * once nothing can touch it: after its unsubscribe and a round trip (the read loop is then past
 * everything the server sent for it), or after the connection's close (which joins the read
 * loop). Until then it waits in the source's retired list. */

#ifdef RECD_HAVE_NATS

#include "nats_source.h"

#include <stdlib.h>

#include "support/log.h"

static void keep(nats_source *src, natsSubscription *sub, kvWatcher *w)
{
    if (src->nretired == src->retired_cap) {
        size_t cap = src->retired_cap ? src->retired_cap * 2 : 8;
        nats_retired *grown = realloc(src->retired, cap * sizeof *grown);
        if (!grown) {
            log_warn("%s: out of memory: a subscription is left unfreed", src->shown);
            return; /* a leak, never a use after free */
        }
        src->retired = grown;
        src->retired_cap = cap;
    }
    src->retired[src->nretired++] = (nats_retired){.sub = sub, .watcher = w};
}

static void free_kept(nats_source *src)
{
    for (size_t i = 0; i < src->nretired; i++) {
        natsSubscription_Destroy(src->retired[i].sub);
        kvWatcher_Destroy(src->retired[i].watcher);
    }
    src->nretired = 0;
}

/* Every one kept was unsubscribed before this round trip. */
static void free_after_round_trip(nats_source *src)
{
    if (natsConnection_Status(src->nc) == NATS_CONN_STATUS_CONNECTED &&
        natsConnection_FlushTimeout(src->nc, NATS_API_WAIT_MS) == NATS_OK)
        free_kept(src);
}

void nats_retire_subscription(nats_source *src, natsSubscription *sub, bool closing)
{
    if (!sub)
        return;
    if (closing) { /* the connection's close comes next */
        keep(src, sub, NULL);
        return;
    }
    natsSubscription_Unsubscribe(sub); /* out of the read loop's table, and the server's */
    keep(src, sub, NULL);
    free_after_round_trip(src);
}

void nats_retire_watcher(nats_source *src, kvWatcher *w)
{
    if (!w)
        return;
    kvWatcher_Stop(w);
    keep(src, NULL, w);
    free_after_round_trip(src);
}

void nats_free_retired(nats_source *src)
{
    free_kept(src);
    free(src->retired);
    src->retired = NULL;
    src->retired_cap = 0;
}

#endif
