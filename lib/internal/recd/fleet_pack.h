/* SPDX-License-Identifier: MIT */
/* Packed JetStream messages (docs/fleet.md, "Packed messages"): a header naming the session, the
 * first and last seq of its frames and their count, then the frames as a wire stream carries
 * them. The publishers (client_nats.c) build them with fleet_packer; recd's nats:// inputs tell
 * them from one-frame messages by their first byte and check them with fleet_pack_parse. */
#ifndef RECD_FLEET_PACK_H
#define RECD_FLEET_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/message.h"

#define FLEET_PACK_MAGIC 0xD8u   /* a binary frame starts with 0xD7 */
#define FLEET_PACK_VERSION 1u
#define FLEET_PACK_HEAD 24u      /* bytes before the key */
#define FLEET_PACK_FLAG_SEQS 1u  /* every frame carries a seq, strictly increasing */

/* A packed message as parsed: pointers into the message. */
typedef struct fleet_pack {
    const char *key;
    size_t key_len;
    uint32_t count;
    bool has_seqs;
    uint64_t first_seq, last_seq; /* 0 without has_seqs */
    const uint8_t *frames;        /* count binary frames, back to back */
    size_t frames_len;
} fleet_pack;

/* A pack being built for one session. */
typedef struct fleet_packer {
    recd_buf buf;
    uint32_t count;
    bool seqs;
    uint64_t first_seq, last_seq;
} fleet_packer;

/* True when msg starts like a packed message (else it is a one-frame message, or garbage). */
bool fleet_pack_is(const uint8_t *msg, size_t len);

/* Checks a packed message: header, key, and that exactly count frames (each at most max_frame
 * bytes of body) fill the rest, the first naming the session, the others with key_len 0, their
 * seqs matching the header when it says they carry them. 0 or -EBADMSG with why. The frames'
 * bodies are left to the wire decoder. */
int fleet_pack_parse(const uint8_t *msg, size_t len, size_t max_frame, fleet_pack *out,
                     char *why, size_t whylen);

/* Starts a pack for the session key (valid, 1..64 bytes): writes the header. 0 or -ENOMEM. */
int fleet_packer_start(fleet_packer *pk, const char *key, size_t key_len);
/* Appends m (of that session) as one binary frame with its time. 0 or a negative errno (the pack
 * is unchanged then). */
int fleet_packer_add(fleet_packer *pk, const recd_msg *m, size_t max_frame);
/* Fills the header's count, flags and seqs: pk->buf holds the message. */
void fleet_packer_seal(fleet_packer *pk);
void fleet_packer_free(fleet_packer *pk);

#endif
