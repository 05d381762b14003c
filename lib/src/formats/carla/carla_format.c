/* SPDX-License-Identifier: MIT */
/* The carla entry of the format table: CARLA recorder logs (.log) in every layout from 0.9.13 to
 * 0.10, recorded by recd or by CARLA. */
#include "formats/carla/carla_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/format_import.h"

static int carla_sniff(const uint8_t *head, size_t len, recd_sniff_result *out)
{
    carla_header h;
    bool prefix;
    const char *why;
    int rc = carla_read_header(head, len, &h, &prefix, &why);
    if (rc < 0 && !(prefix && len >= 16))
        return RECD_SNIFF_NONE;
    out->standard = rc == 0;
    out->kind = "carla-log";
    out->description = "CARLA recorder log";
    return RECD_SNIFF_SIGNATURE;
}

static int carla_verify(const uint8_t *buf, size_t len, recd_format_verdict *out,
                        recd_report *report)
{
    carla_scan s;
    int rc = carla_scan_file(buf, len, report, &s);
    if (rc == -ENOMEM)
        return rc;
    out->units = s.frames;
    if (!s.header_ok) {
        snprintf(out->note, sizeof out->note, "%s", s.err);
        if (report)
            recd_report_add(report, RECD_SEV_ERROR, 0, "carla-header", "%s", s.err);
        return -EBADMSG;
    }
    if (s.error) {
        if (report)
            recd_report_add(report, RECD_SEV_ERROR, s.err_offset, "carla-truncated", "%s", s.err);
        snprintf(out->note, sizeof out->note, "%llu whole frames end at offset %zu: rectool repair "
                 "cuts the rest", (unsigned long long)s.frames, s.frames_end);
        out->note_offset = s.frames_end;
        return -EBADMSG;
    }
    size_t errors = report ? recd_report_errors(report) : 0;
    if (s.frames && s.last_duration != -1.0 && report)
        recd_report_add(report, RECD_SEV_WARNING, s.last_frame_start, "carla-last-duration",
                        "the last frame's duration is %g, CARLA's writer leaves -1", s.last_duration);
    out->valid = errors == 0;
    snprintf(out->summary, sizeof out->summary, "carla %s %s, %llu frames, %g s%s",
             carla_reader_ids_label(&s.r), s.r.width == 8 ? "f64" : "f32",
             (unsigned long long)s.frames, s.frames ? s.last_elapsed : 0.0,
             s.raw_packets ? ", unknown packets kept" : "");
    return out->valid ? 0 : -EBADMSG;
}

static uint64_t carla_count_units(const uint8_t *buf, size_t len)
{
    carla_scan s;
    carla_scan_file(buf, len, NULL, &s);
    return s.frames;
}

const recd_format recd_format__carla = {
    .name = "carla",
    .extension = "log",
    .description = "CARLA recorder log (.log, 0.9.13 .. 0.10 layouts)",
    .unit = "frames",
    .msg_format = RECD_MSG_FMT_CARLA,
    .sniff = carla_sniff,
    .verify = carla_verify,
    .repair = recd_carla__repair,
    .recover = recd_carla__recover,
    .end_part = NULL, /* the header holds no totals */
    .count_units = carla_count_units,
    .export_msgs = recd_carla__export_msgs,
    .import_text = recd_format__import_through_importer,
    .importer = &recd_carla__importer,
    .edit = &recd_carla__edit,
    .wire = &recd_carla__wire,
    .model = &recd_carla__model,
    .json = &recd_carla__json,
    .csv = &recd_carla__csv,
    .synth = &recd_carla__synth,
    .seek = &recd_carla__seek,
};
