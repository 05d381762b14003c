/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the .rec reader: probe any input, then every block the probe reports must
 * decode and re-encode to exactly its input bytes, and the reported geometry must fit the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recd/samp_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void roundtrip_block(recd_rec_layout layout, const uint8_t *blk)
{
    uint8_t out[RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE];
    size_t n = 0;
    switch (layout) {
    case RECD_REC_LAYOUT_VEHICLE: {
        recd_rec_vehicle v;
        recd_rec_vehicle_decode(blk, &v);
        recd_rec_vehicle_encode(&v, out);
        n = RECD_REC_VEHICLE_BLOCK_SIZE;
        break;
    }
    case RECD_REC_LAYOUT_ONFOOT: {
        recd_rec_onfoot f;
        recd_rec_onfoot_decode(blk, &f);
        recd_rec_onfoot_encode(&f, out);
        n = RECD_REC_ONFOOT_BLOCK_SIZE;
        break;
    }
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56: {
        recd_rec_legacy_onfoot f;
        recd_rec_legacy_onfoot_decode(blk, &f);
        recd_rec_legacy_onfoot_encode(&f, out);
        n = RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE;
        break;
    }
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75: {
        recd_rec_legacy_vehicle v;
        recd_rec_legacy_vehicle_decode(blk, &v);
        recd_rec_legacy_vehicle_encode(&v, out);
        n = RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE;
        break;
    }
    default:
        abort(); /* block_at() must not hand out blocks for other layouts */
    }
    if (memcmp(out, blk, n) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    recd_rec_info info;
    recd_report report = {0};
    report.limit = 64;
    int rc = recd_rec_probe(data, size, &info, &report);
    if (rc != 0 && rc != -EBADMSG)
        abort();
    if (rc == 0 && !recd_rec_layout_is_standard(info.layout))
        abort();
    if (recd_rec_valid_prefix(&info) > size)
        abort();
    if (info.block_size) {
        if (info.data_offset + info.block_count * info.block_size + info.trailing_bytes != size ||
            info.trailing_bytes >= info.block_size)
            abort();
        for (uint64_t i = 0; i < info.block_count; i++)
            roundtrip_block(info.layout, recd_rec_block_at(data, &info, i));
    }
    if (recd_rec_block_at(data, &info, info.block_count) != NULL)
        abort();
    if (size >= RECD_REC_ONFOOT_BLOCK_SIZE) /* the codec alone, whatever the layout */
        roundtrip_block(RECD_REC_LAYOUT_ONFOOT, data);
    if (size >= RECD_REC_VEHICLE_BLOCK_SIZE)
        roundtrip_block(RECD_REC_LAYOUT_VEHICLE, data);
    recd_report_free(&report);
    return 0;
}
