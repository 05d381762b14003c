/* libFuzzer target for crash recovery of .part files: any bytes may be on disk after a crash. A
 * plan to keep a prefix must describe a prefix that verifies for its format once the patched
 * header is applied, and planning the result again must keep all of it. */
#include <stdlib.h>
#include <string.h>

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
        } else {
            recd_rec_info info;
            if (recd_rec_probe(buf, (size_t)plan.keep, &info, NULL) != 0 ||
                info.block_count != plan.units)
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
