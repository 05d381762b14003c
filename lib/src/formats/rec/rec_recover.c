/* SPDX-License-Identifier: MIT */
/* Crash recovery of a .rec .part: keep the header and every whole block, dropping a partial last
 * block. The block size follows the header's type, as players of the file go by it. */
#include "formats/rec/rec_format.h"

#include <string.h>

#include "base/bytes.h"
#include "recd/samp_rec.h"
#include "storage/recovery_internal.h"

/* A .rec header as recd writes it: 1000, then type 1 or 2, little-endian. */
static bool rec_header_prefix(const uint8_t *buf, size_t len)
{
    static const uint8_t sig[4] = {0xE8, 0x03, 0x00, 0x00};
    for (size_t i = 0; i < len && i < RECD_REC_HEADER_SIZE; i++) {
        if (i < 4 && buf[i] != sig[i])
            return false;
        if (i == 4 && buf[i] != RECD_REC_TYPE_VEHICLE && buf[i] != RECD_REC_TYPE_ONFOOT)
            return false;
        if (i > 4 && buf[i] != 0)
            return false;
    }
    return true;
}

int recd_rec__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (!rec_header_prefix(buf, len))
        return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "unknown",
                                    "starts like a .rec but the header is not 1000 + type 1/2");
    if (len < RECD_REC_HEADER_SIZE)
        return recd_recover__decide(plan, RECD_RECOVER_REMOVED, "samp-rec",
                                    "only %zu bytes of a .rec header", len);
    /* The block size follows the header type recd wrote, as open.mp reads it. */
    bool vehicle = ld_le32(buf + 4) == RECD_REC_TYPE_VEHICLE;
    const char *kind = vehicle ? "samp-vehicle" : "samp-onfoot";
    size_t bs = vehicle ? RECD_REC_VEHICLE_BLOCK_SIZE : RECD_REC_ONFOOT_BLOCK_SIZE;
    size_t blocks = (len - RECD_REC_HEADER_SIZE) / bs;
    size_t keep = RECD_REC_HEADER_SIZE + blocks * bs;
    if (blocks == 0)
        return recd_recover__decide(plan, RECD_RECOVER_REMOVED, kind,
                                    "header only, %zu bytes of a first block", len - keep);
    plan->keep = keep;
    plan->units = blocks;
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(buf, keep, &info, NULL);
    if (info.block_size == bs && recd_rec_valid_prefix(&info) == keep)
        return recd_recover__decide(plan, RECD_RECOVER_FINALIZED, kind,
                                    "%zu whole blocks, %zu trailing bytes dropped, %u..%u ms",
                                    blocks, len - keep, (unsigned)info.first_time_ms,
                                    (unsigned)info.last_time_ms);
    /* Kept anyway: the header type is what players of the file go by. */
    return recd_recover__decide(
        plan, RECD_RECOVER_FINALIZED, kind,
        "%zu whole blocks, %zu trailing bytes dropped; the probe reads it as %s", blocks,
        len - keep, recd_rec_layout_name(info.layout));
}
