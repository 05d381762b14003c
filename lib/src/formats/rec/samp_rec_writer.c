/* SPDX-License-Identifier: MIT */
/* Streaming .rec writer: header, then whole blocks only, one sink call per block, so a reader
 * never sees a partial block (the 0.3.7 NPC client exits on one). Invalid input writes nothing. */
#include "recd/samp_rec.h"

#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rec/rec_format.h"

int recd_rec_writer_init(recd_rec_writer *w, recd_rec_type type, recd_rec_time_policy policy,
                         recd_sink sink)
{
    if (!w || !sink.write)
        return -EINVAL;
    if (type != RECD_REC_TYPE_VEHICLE && type != RECD_REC_TYPE_ONFOOT)
        return -EINVAL;
    if (policy != RECD_REC_TIME_REJECT && policy != RECD_REC_TIME_CLAMP)
        return -EINVAL;
    w->sink = sink;
    w->type = type;
    w->time_policy = policy;
    w->header_written = false;
    w->last_time_ms = 0;
    w->blocks = 0;
    w->clamped = 0;
    return 0;
}

int recd_rec_writer_header(recd_rec_writer *w)
{
    if (!w || !w->sink.write)
        return -EINVAL;
    if (w->header_written)
        return 0;
    uint8_t hdr[RECD_REC_HEADER_SIZE];
    recd_rec_header_encode(w->type, hdr);
    int rc = w->sink.write(w->sink.ctx, hdr, sizeof hdr);
    if (rc < 0)
        return rc;
    w->header_written = true;
    return 0;
}

/* Applies the time policy to *time_ms: 0, or -ERANGE when it decreases under REJECT. Sets
 * *raised when CLAMP lifted it; the writer's counters change only once the block is written. */
static int apply_time_policy(const recd_rec_writer *w, uint32_t *time_ms, bool *raised)
{
    *raised = false;
    if (w->blocks == 0 || *time_ms >= w->last_time_ms)
        return 0;
    if (w->time_policy == RECD_REC_TIME_REJECT)
        return -ERANGE;
    *time_ms = w->last_time_ms;
    *raised = true;
    return 0;
}

static int write_block(recd_rec_writer *w, const uint8_t *block, size_t len, uint32_t time_ms,
                       bool raised)
{
    int rc = recd_rec_writer_header(w);
    if (rc < 0)
        return rc;
    rc = w->sink.write(w->sink.ctx, block, len);
    if (rc < 0)
        return rc;
    w->last_time_ms = time_ms;
    w->blocks++;
    if (raised)
        w->clamped++;
    return 0;
}

static size_t block_size(recd_rec_type type)
{
    return type == RECD_REC_TYPE_ONFOOT ? RECD_REC_ONFOOT_BLOCK_SIZE : RECD_REC_VEHICLE_BLOCK_SIZE;
}

int recd_rec_writer_block(recd_rec_writer *w, const uint8_t *block, size_t len)
{
    if (!w || !block || !w->sink.write || len != block_size(w->type) ||
        recd_rec_block_check(w->type, block) < 0)
        return -EINVAL;
    uint32_t time_ms = ld_le32(block);
    bool raised;
    int rc = apply_time_policy(w, &time_ms, &raised);
    if (rc < 0)
        return rc;
    if (!raised)
        return write_block(w, block, len, time_ms, false);
    uint8_t copy[RECD_REC_ONFOOT_BLOCK_SIZE];
    memcpy(copy, block, len);
    st_le32(copy, time_ms);
    return write_block(w, copy, len, time_ms, true);
}

/* The struct is checked first: weapon and additional key out of range cannot be seen once they
 * share a byte. */
int recd_rec_writer_onfoot(recd_rec_writer *w, const recd_rec_onfoot *b)
{
    if (!w || !b || w->type != RECD_REC_TYPE_ONFOOT || recd_rec_onfoot_check(b) < 0)
        return -EINVAL;
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    recd_rec_onfoot_encode(b, block);
    return recd_rec_writer_block(w, block, sizeof block);
}

int recd_rec_writer_vehicle(recd_rec_writer *w, const recd_rec_vehicle *b)
{
    if (!w || !b || w->type != RECD_REC_TYPE_VEHICLE || recd_rec_vehicle_check(b) < 0)
        return -EINVAL;
    uint8_t block[RECD_REC_VEHICLE_BLOCK_SIZE];
    recd_rec_vehicle_encode(b, block);
    return recd_rec_writer_block(w, block, sizeof block);
}
