/* SPDX-License-Identifier: MIT */
/* Seeking in .rec files is arithmetic: blocks are fixed-size, so block n starts at
 * header size + n x block size, and the last block at or before a time is found by bisection on
 * the blocks' times (recorders write them in order; a file whose times go back gets the
 * bisection's answer, which a full scan may not match). No index file. */
#include <errno.h>

#include "formats/format_seek.h"
#include "formats/rec/rec_format.h"
#include "recd/samp_rec.h"

static size_t rec_block_size(const uint8_t *buf, size_t len)
{
    if (len < RECD_REC_HEADER_SIZE || recd_rec_block_time(buf) != 1000)
        return 0; /* the header's first u32 is the signature 1000 */
    uint32_t type = recd_rec_block_time(buf + 4);
    return type == RECD_REC_TYPE_VEHICLE  ? RECD_REC_VEHICLE_BLOCK_SIZE
           : type == RECD_REC_TYPE_ONFOOT ? RECD_REC_ONFOOT_BLOCK_SIZE
                                          : 0;
}

static int rec_seek_direct(const uint8_t *buf, size_t len, int64_t time, recd_seek_point *out)
{
    size_t size = rec_block_size(buf, len);
    if (size == 0)
        return -EBADMSG;
    uint64_t blocks = (len - RECD_REC_HEADER_SIZE) / size;
    if (blocks == 0)
        return -EBADMSG;
    uint64_t lo = 0, hi = blocks; /* the first block after `time` is in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((int64_t)recd_rec_block_time(buf + RECD_REC_HEADER_SIZE + mid * size) <= time)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t n = lo ? lo - 1 : 0;
    out->offset = RECD_REC_HEADER_SIZE + n * size;
    out->time = recd_rec_block_time(buf + out->offset);
    out->aux = (int64_t)n;
    return 0;
}

const struct recd_format_seek recd_rec__seek = {
    .index_step = 0,
    .stable_len = NULL,
    .scan = NULL,
    .direct = rec_seek_direct,
    .export_from = NULL,
};
