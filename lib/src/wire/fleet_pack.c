/* SPDX-License-Identifier: MIT */
/* Packed JetStream messages (recd/fleet_pack.h): building them for the publishers and checking
 * them for recd's nats:// inputs. Layout: docs/fleet.md, "Packed messages". */
#include "recd/fleet_pack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/wire.h"
#include "wire/wire_internal.h"

#define WIRE_FLAG_SEQ 1u

bool fleet_pack_is(const uint8_t *msg, size_t len) { return len > 0 && msg[0] == FLEET_PACK_MAGIC; }

static int bad(char *why, size_t whylen, const char *what, unsigned long long at)
{
    if (whylen)
        snprintf(why, whylen, "packed message: %s (byte %llu)", what, at);
    return -EBADMSG;
}

static int parse_head(const uint8_t *msg, size_t len, fleet_pack *out, char *why, size_t whylen)
{
    if (len < FLEET_PACK_HEAD)
        return bad(why, whylen, "shorter than its header", len);
    if (msg[1] != FLEET_PACK_VERSION)
        return bad(why, whylen, "unknown version", 1);
    if (msg[2] & ~FLEET_PACK_FLAG_SEQS)
        return bad(why, whylen, "unknown flags", 2);
    out->key_len = msg[3];
    out->key = (const char *)msg + FLEET_PACK_HEAD;
    out->count = ld_le32(msg + 4);
    out->has_seqs = msg[2] & FLEET_PACK_FLAG_SEQS;
    out->first_seq = ld_le64(msg + 8);
    out->last_seq = ld_le64(msg + 16);
    if (len < FLEET_PACK_HEAD + out->key_len || !recd_session_key_valid(out->key, out->key_len))
        return bad(why, whylen, "not a valid session key", 3);
    if (out->count == 0)
        return bad(why, whylen, "no frames", 4);
    if (!out->has_seqs && (out->first_seq || out->last_seq))
        return bad(why, whylen, "seqs without the seqs flag", 8);
    if (out->has_seqs && out->first_seq > out->last_seq)
        return bad(why, whylen, "first seq above last seq", 8);
    out->frames = msg + FLEET_PACK_HEAD + out->key_len;
    out->frames_len = len - FLEET_PACK_HEAD - out->key_len;
    return 0;
}

/* One frame at f (avail bytes): its length, its session and its seq checked against the pack. */
static int check_frame(const fleet_pack *pk, const uint8_t *f, size_t avail, size_t max_frame,
                       uint32_t i, uint64_t *prev_seq, size_t *flen, char *why, size_t whylen)
{
    unsigned long long at = (unsigned long long)(f - pk->frames) + FLEET_PACK_HEAD + pk->key_len;
    if (avail < RECD_WIRE_HEADER_SIZE + 1 || f[0] != RECD_WIRE_MAGIC)
        return bad(why, whylen, "a frame does not start here", at);
    size_t body = ld_le32(f + 4);
    if (body < 1 || body > wire_max_frame(max_frame) || body + RECD_WIRE_HEADER_SIZE > avail)
        return bad(why, whylen, "a frame is longer than the message or the limit", at);
    const uint8_t *b = f + RECD_WIRE_HEADER_SIZE;
    size_t klen = i == 0 ? pk->key_len : 0;
    if (b[0] != klen || (klen && (body < 1 + klen || memcmp(b + 1, pk->key, klen) != 0)))
        return bad(why, whylen,
                   i == 0 ? "the first frame does not name the header's session"
                          : "a frame after the first names a session (key_len must be 0)",
                   at);
    if (pk->has_seqs) {
        if (!(f[3] & WIRE_FLAG_SEQ) || body < 1 + klen + 8)
            return bad(why, whylen, "a frame has no seq although the header says they all do", at);
        uint64_t seq = ld_le64(b + 1 + klen);
        if ((i == 0 && seq != pk->first_seq) || (i > 0 && seq <= *prev_seq))
            return bad(why, whylen, "the frames' seqs do not match the header", at);
        *prev_seq = seq;
    }
    *flen = RECD_WIRE_HEADER_SIZE + body;
    return 0;
}

int fleet_pack_parse(const uint8_t *msg, size_t len, size_t max_frame, fleet_pack *out,
                     char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (!fleet_pack_is(msg, len))
        return bad(why, whylen, "wrong magic", 0);
    int rc = parse_head(msg, len, out, why, whylen);
    size_t off = 0, flen = 0;
    uint64_t seq = 0;
    for (uint32_t i = 0; rc == 0 && i < out->count; i++) {
        rc = check_frame(out, out->frames + off, out->frames_len - off, max_frame, i, &seq, &flen,
                         why, whylen);
        off += flen;
    }
    if (rc == 0 && out->has_seqs && seq != out->last_seq)
        return bad(why, whylen, "the last frame's seq is not the header's last seq", 16);
    if (rc == 0 && off != out->frames_len)
        return bad(why, whylen, "bytes after the last frame", off + FLEET_PACK_HEAD + out->key_len);
    return rc;
}

int fleet_packer_start(fleet_packer *pk, const char *key, size_t key_len)
{
    recd_buf_reset(&pk->buf);
    pk->count = 0;
    pk->seqs = true;
    pk->first_seq = pk->last_seq = 0;
    uint8_t head[FLEET_PACK_HEAD] = {FLEET_PACK_MAGIC, FLEET_PACK_VERSION, 0, (uint8_t)key_len};
    int rc = recd_buf_append(&pk->buf, head, sizeof head);
    return rc == 0 ? recd_buf_append(&pk->buf, key, key_len) : rc;
}

int fleet_packer_add(fleet_packer *pk, const recd_msg *m, size_t max_frame)
{
    int rc = wire_binary_encode(m, max_frame, pk->count > 0, true, &pk->buf);
    if (rc < 0)
        return rc;
    if (!m->has_seq || (pk->count > 0 && m->seq <= pk->last_seq))
        pk->seqs = false;
    if (pk->count == 0)
        pk->first_seq = m->seq;
    pk->last_seq = m->seq;
    pk->count++;
    return 0;
}

void fleet_packer_seal(fleet_packer *pk)
{
    uint8_t *h = pk->buf.data;
    h[2] = pk->seqs ? FLEET_PACK_FLAG_SEQS : 0;
    st_le32(h + 4, pk->count);
    st_le64(h + 8, pk->seqs ? pk->first_seq : 0);
    st_le64(h + 16, pk->seqs ? pk->last_seq : 0);
}

void fleet_packer_free(fleet_packer *pk) { recd_buf_free(&pk->buf); }
