/* SPDX-License-Identifier: MIT */
/* nats:// inputs: recd as a member of a fleet reading a NATS JetStream stream (docs/fleet.md).
 * A worker thread owns the libnats connection: it claims partitions through leases in a
 * key-value bucket, renews and releases them, and pulls from one durable consumer per owned
 * partition while that partition has room (nats.max_in_flight). Messages reach the loop thread
 * through a uv_async and a queue per partition; each is one wire frame, decoded and dispatched
 * like stream input, and acknowledged only once the bytes it produced are in a file. */
#ifndef RECD_DAEMON_LISTENER_NATS_H
#define RECD_DAEMON_LISTENER_NATS_H

#include <stdbool.h>
#include <stddef.h>

#include "listener.h"

/* Starts a nats:// listener (cfg->nats). 0, or a negative errno with why (-ENOTSUP: recd was
 * built without libnats). The connection is made in the background: an unreachable server is
 * retried, and /healthz says so meanwhile. */
int listener_nats_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out,
                       char *why, size_t whylen);
/* Stops pulling (listener_close); the listener finishes once every message it took is
 * acknowledged (their sessions written), then releases its leases and frees itself. */
void listener_nats_retire(recd_listener *l);

/* Upward events routed by the app layer: a write completed (acknowledge what is in files now,
 * go on with partitions that waited for room) and a session is about to be freed. */
void ingest_nats_progress(recd_ingest *g);
void ingest_nats_session_freed(recd_ingest *g, const recd_session *s);
/* Writes why and returns true when some nats:// input cannot reach its server now. */
bool ingest_nats_unhealthy(recd_ingest *g, char *why, size_t whylen);
/* Publishes the gauges (partitions owned, connected inputs, lag); at each scrape. */
void ingest_nats_refresh_metrics(recd_ingest *g);
/* Every nats:// listener stops at once, acknowledged or not (the last step of a shutdown). */
void ingest_nats_close_all(recd_ingest *g);

#endif
