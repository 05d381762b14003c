/* SPDX-License-Identifier: MIT */
/* The Recap entry of the format table: .recap files, a header then gzip members of delta-encoded
 * ticks. Recognised by its "RCAP" magic; its header states the tick count and end time, which the
 * end of a part and a repair rewrite. */
#include "formats/recap/recap_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/format_import.h"
#include "recd/recap.h"

static int recap_sniff(const uint8_t *head, size_t len, recd_sniff_result *out)
{
    if (len < 4 || memcmp(head, RECD_RECAP_MAGIC, 4) != 0)
        return RECD_SNIFF_NONE;
    out->standard = true;
    out->kind = "recap";
    out->description = "Recap recording";
    return RECD_SNIFF_SIGNATURE;
}

static int recap_verify(const uint8_t *buf, size_t len, recd_format_verdict *out,
                        recd_report *report)
{
    recd_recap_decode_result res;
    memset(&res, 0, sizeof res);
    int rc = recd_recap_verify(buf, len, &res, report);
    out->valid = rc == 0 && (!report || recd_report_errors(report) == 0);
    out->units = res.ticks;
    if (out->valid) {
        snprintf(out->summary, sizeof out->summary, "recap, %llu ticks in %llu gzip members",
                 (unsigned long long)res.ticks, (unsigned long long)res.members);
        return 0;
    }
    out->fallback_offset = res.valid_end;
    snprintf(out->fallback, sizeof out->fallback, "%s", recd_strerror(rc));
    return rc == -ENOMEM ? rc : -EBADMSG;
}

static int recap_recover(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (len == 0 || buf[0] != (uint8_t)RECD_RECAP_MAGIC[0])
        return 0;
    int rc = recd_recap__recover_plan(buf, len, plan);
    return rc < 0 ? rc : 1;
}

/* Frame count 0 means "recount": more ticks than a u32 holds. */
static int recap_end_part(uint8_t *head, size_t head_len, uint64_t units, int64_t end_ms)
{
    uint32_t frames = units <= UINT32_MAX ? (uint32_t)units : 0;
    return recd_recap_header_patch(head, head_len, frames, end_ms);
}

static uint64_t recap_count_units(const uint8_t *buf, size_t len)
{
    recd_recap_header h;
    return recd_recap_header_decode(buf, len, &h, NULL) < 0 ? 0 : h.frame_count;
}

/* A state's tick: a Recap state holds over the idle ticks before the next one. */
static int64_t recap_state_unit(const recd_msg *state)
{
    if (!state->recap_state)
        return -1;
    return state->recap_state->tick > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)state->recap_state->tick;
}

const recd_format recd_format__recap = {
    .name = "recap",
    .extension = "recap",
    .description = "Recap recording (header, then gzip members of delta-encoded 50 ms ticks)",
    .unit = "ticks",
    .msg_format = RECD_MSG_FMT_RECAP,
    .sniff = recap_sniff,
    .verify = recap_verify,
    .repair = recd_recap__repair,
    .recover = recap_recover,
    .end_part = recap_end_part,
    .count_units = recap_count_units,
    .export_msgs = recd_recap__export_msgs,
    .import_text = recd_format__import_through_importer,
    .importer = &recd_recap__importer,
    .edit = &recd_recap__edit,
    .wire = &recd_recap__wire,
    .state_unit = recap_state_unit,
    .model = &recd_recap__model,
    .json = &recd_recap__json,
    .csv = &recd_recap__csv,
    .synth = &recd_recap__synth,
    .seek = &recd_recap__seek,
};
