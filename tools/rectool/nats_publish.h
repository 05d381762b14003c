/* SPDX-License-Identifier: MIT */
/* rectool send --to nats://HOST:PORT/PREFIX: every wire message as one binary frame published to
 * JetStream on PREFIX.<partition>.<key> (recd/fleet.h), with a bounded number of publishes waiting
 * for their acks. A publish the server never confirmed is counted and reported, never dropped in
 * silence. */
#ifndef RT_NATS_PUBLISH_H
#define RT_NATS_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

typedef struct rt_nats rt_nats;

typedef struct rt_nats_options {
    uint32_t partitions;     /* 0 = RECD_FLEET_DEFAULT_PARTITIONS; must match the fleet's */
    int max_in_flight;       /* publishes awaiting an ack (0 = 1024) */
    int64_t buffer_bytes;    /* kept while the server is unreachable (0 = 8 MiB) */
    int64_t stall_ms;        /* how long a full window may block one publish, and the last acks
                                may take at the end (0 = 10000) */
} rt_nats_options;

/* True when url is a nats:// URL (the build may still lack NATS support). */
bool rt_nats_url(const char *url);
/* Connects. 0 or a negative errno with err saying why (-ENOTSUP: built without libnats). */
int rt_nats_open(rt_nats **out, const char *url, const rt_nats_options *opt, char *err,
                 size_t errlen);
/* Encodes m as one binary frame and publishes it. 0, or a negative errno with err set. */
int rt_nats_send(rt_nats *n, const recd_msg *m, char *err, size_t errlen);
/* Waits until every publish is acked or failed. 0, or -EIO when any was lost (err says how many). */
int rt_nats_flush(rt_nats *n, char *err, size_t errlen);
uint64_t rt_nats_bytes(const rt_nats *n);
uint64_t rt_nats_lost(const rt_nats *n);
/* Flushes (as rt_nats_flush) and frees. */
int rt_nats_close(rt_nats *n, char *err, size_t errlen);

#endif
