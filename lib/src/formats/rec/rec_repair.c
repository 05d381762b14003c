/* SPDX-License-Identifier: MIT */
/* .rec repair: keep the 8-byte header and every whole block, drop a trailing partial block, and
 * restore the 1000 signature the SA-MP 0.3.7 client insists on. Legacy, VC:MP and text-damaged
 * files are not repaired: cutting cannot turn them into standard files. */
#include "formats/rec/rec_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/format_report.h"
#include "recd/samp_rec.h"

int recd_rec__repair(const uint8_t *buf, size_t len, recd_repair_result *r)
{
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(buf, len, &info, NULL);
    if (!recd_rec_layout_is_standard(info.layout)) {
        snprintf(r->detail, sizeof r->detail,
                 "layout %s is not a standard SA-MP layout; cutting cannot repair it",
                 recd_rec_layout_name(info.layout));
        return -EBADMSG;
    }
    size_t keep = recd_rec_valid_prefix(&info);
    if (keep < RECD_REC_HEADER_SIZE || keep > len) {
        snprintf(r->detail, sizeof r->detail, "no valid header and blocks to keep");
        return -EBADMSG;
    }
    int rc = recd_buf_append(&r->out, buf, keep);
    if (rc < 0)
        return rc;
    bool fixed_signature = false;
    if (info.signature != RECD_REC_SIGNATURE) {
        /* Little-endian 1000; open.mp ignores the field, samp-npc refuses anything else. */
        static const uint8_t signature[4] = {0xE8, 0x03, 0x00, 0x00};
        memcpy(r->out.data, signature, sizeof signature);
        fixed_signature = true;
    }
    r->kept_bytes = keep;
    r->dropped_bytes = len - keep;
    r->kept_units = info.block_count;
    r->changed = fixed_signature || keep != len;

    recd_rec_info check;
    recd_report report = {.limit = 16};
    memset(&check, 0, sizeof check);
    rc = recd_rec_probe(r->out.data, r->out.len, &check, &report);
    if (rc != 0 || recd_report_errors(&report) > 0) {
        rc = recd_format__repair_failed(r, &report, "cutting is not enough");
        recd_report_free(&report);
        return rc;
    }
    recd_report_free(&report);
    snprintf(r->detail, sizeof r->detail, "%s%s%s", recd_rec_layout_name(info.layout),
             r->dropped_bytes ? ", dropped a partial block" : "",
             fixed_signature ? ", restored the 1000 signature" : "");
    return 0;
}
