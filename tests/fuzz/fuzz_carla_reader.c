/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the CARLA log reader and everything built on it: frames and their records
 * must stay inside the input; verify, repair, export (which writes the messages again and
 * compares them with the input) and the three queries must not crash; a repaired file must
 * verify; an exported file must import to the same bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"
#include "recd/carla.h"
#include "recd/format.h"
#include "recd/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk_frames(const uint8_t *data, size_t size)
{
    carla_reader r;
    if (carla_reader_init(&r, data, size, NULL) < 0)
        return;
    recd_carla_frame f;
    size_t at;
    while (carla_reader_next(&r, &f, &at) == 1) {
        for (size_t i = 0; i < f.count; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->data < data || p->data + p->len > data + size)
                abort();
            const carla_kind_info *ki = p->raw ? NULL : carla_kind(p->kind, f.width);
            if (ki && ki->has_count && !carla_records_fill(ki->fields, f.width, p->count, p->data, p->len))
                abort();
        }
    }
    carla_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    walk_frames(data, size);
    const recd_format *fmt = recd_format_find("carla");
    recd_format_verdict v;
    recd_report report = {.limit = 8};
    recd_format_verify(fmt, data, size, &v, &report);
    recd_report_free(&report);

    recd_repair_result rep = {0}; /* progress is read: no watcher */
    if (recd_format_repair(fmt, data, size, &rep) == 0) {
        recd_report rr = {.limit = 8};
        recd_format_verdict rv;
        /* a repair keeps whole frames; only packet-size warnings may remain */
        if (recd_format_verify(fmt, rep.out.data, rep.out.len, &rv, &rr) == -EBADMSG &&
            recd_report_errors(&rr) && rv.note[0])
            abort();
        recd_report_free(&rr);
    }
    recd_buf_free(&rep.out);

    recd_buf text = {0}, back = {0};
    char err[256];
    bool carla = recd_format_sniff(data, size, NULL) == fmt; /* export goes by content */
    if (carla && recd_export_text(data, size, RECD_TEXT_JSONL, recd_buf_sink(&text), err, sizeof err) == 0) {
        if (recd_import_text(text.data, text.len, RECD_TEXT_JSONL, RECD_MSG_FMT_CARLA,
                             recd_buf_sink(&back), NULL, err, sizeof err) != 0 ||
            back.len != size || memcmp(back.data, data, size) != 0)
            abort();
    }
    recd_buf_free(&text);
    recd_buf_free(&back);

    recd_buf out = {0};
    recd_carla_info(data, size, true, false, &out, err, sizeof err);
    recd_carla_info(data, size, false, true, &out, err, sizeof err);
    recd_carla_collisions(data, size, 'a', 'a', false, &out, err, sizeof err);
    recd_carla_blocked(data, size, 0.0, 10.0, true, &out, err, sizeof err);
    recd_buf_free(&out);
    return 0;
}
