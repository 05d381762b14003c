/* SPDX-License-Identifier: MIT */
/* libFuzzer target for crash recovery of .part files: any bytes may be on disk after a crash. A
 * plan to keep a prefix must describe a valid prefix once the patched header is applied: a .recap
 * or CARLA log that verifies, or a .rec header followed by whole blocks of the header's type (the
 * header is recd's own, so it decides the block size even when the payload looks like another
 * layout).
 * Planning the result again must keep all of it. */
#include <stdlib.h>
#include <string.h>

#include "recd/format.h"
#include "recd/recap.h"
#include "recd/recovery.h"
#include "recd/samp_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    recd_recover_plan plan;
    if (recd_recover_plan_buffer(buf, size, &plan) == 0 && plan.action == RECD_RECOVER_FINALIZED) {
        if (plan.keep > size || plan.header_len > plan.keep)
            abort();
        if (strcmp(plan.kind, "recap") == 0) {
            recd_recap_decode_result r;
            if (recd_recap_verify(buf, (size_t)plan.keep, &r, NULL) != 0 || r.ticks != plan.units)
                abort();
        } else if (strncmp(plan.kind, "samp-", 5) != 0) {
            /* Any other format (CARLA): the kept prefix verifies through its table entry. */
            const recd_format *f = recd_format_find(plan.kind);
            recd_format_verdict v;
            if (!f || recd_format_verify(f, buf, (size_t)plan.keep, &v, NULL) != 0 || !v.valid ||
                v.units != plan.units)
                abort();
        } else {
            size_t block = strcmp(plan.kind, "samp-vehicle") == 0 ? RECD_REC_VEHICLE_BLOCK_SIZE
                                                                  : RECD_REC_ONFOOT_BLOCK_SIZE;
            if (plan.keep < RECD_REC_HEADER_SIZE ||
                (plan.keep - RECD_REC_HEADER_SIZE) % block != 0 ||
                (plan.keep - RECD_REC_HEADER_SIZE) / block != plan.units)
                abort();
        }
        recd_recover_plan again;
        if (recd_recover_plan_buffer(buf, (size_t)plan.keep, &again) != 0 ||
            again.action != RECD_RECOVER_FINALIZED || again.keep != plan.keep)
            abort();
    }
    free(buf);
    return 0;
}
