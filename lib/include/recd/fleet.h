/* SPDX-License-Identifier: MIT */
/* A recd fleet on NATS JetStream: the names publishers and recd agree on, with no NATS code here.
 * A wire message goes to the subject PREFIX.<partition>.~, the partition being a hash of the
 * session key modulo the partition count, so every message of one session lands in one
 * partition, in order; the key travels in the frames. Spec: docs/fleet.md. */
#ifndef RECD_FLEET_H
#define RECD_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_FLEET_PREFIX_MAX 128    /* subject prefix, bytes */
#define RECD_FLEET_PARTITIONS_MAX 1024u
#define RECD_FLEET_DEFAULT_PARTITIONS 8u
#define RECD_FLEET_DEFAULT_PORT 4222u
#define RECD_FLEET_SUBJECT_MAX (RECD_FLEET_PREFIX_MAX + 80)

typedef struct recd_fleet_url {
    char host[256];                         /* name or address, IPv6 without brackets */
    uint16_t port;                          /* 4222 when the URL names none */
    char prefix[RECD_FLEET_PREFIX_MAX + 1]; /* subject prefix: tokens of [A-Za-z0-9_-] joined by '.' */
} recd_fleet_url;

/* nats://HOST[:PORT]/PREFIX (IPv6 as [::1]). 0 or -EINVAL with err saying what is wrong. */
RECD_API int recd_fleet_url_parse(const char *url, recd_fleet_url *out, char *err, size_t errlen);

/* The partition of a session key: FNV-1a (32 bit) of its bytes modulo partitions (> 0). */
RECD_API uint32_t recd_fleet_partition(const char *key, size_t key_len, uint32_t partitions);

/* Writes the key's subject PREFIX.<partition>.~ into out: one subject per partition (a subject
 * per session, PREFIX.<partition>.<key token>, costs the server state per subject; docs/fleet.md,
 * "Subject layout, measured"). Returns the length, or -ENAMETOOLONG when it does not fit in cap,
 * -EINVAL for a key that is not a valid session key (recd_session_key_valid) or partitions of 0
 * or over RECD_FLEET_PARTITIONS_MAX. */
RECD_API int recd_fleet_subject(const char *prefix, const char *key, size_t key_len,
                                uint32_t partitions, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
