/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the rFactor 2 replay reader: sniff, verify, export and describe any input.
 * Each must end with success or -EBADMSG (an offset in the message), agree with each other on
 * whether the file is whole, and produce only JSON objects. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "recd/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require_object(const char *text, size_t len)
{
    json_t *j = json_loadb(text, len, 0, NULL);
    if (!json_is_object(j))
        abort();
    json_decref(j);
}

static int check_event(void *ctx, const recd_replay_event *ev)
{
    size_t *count = ctx;
    if (strcmp(ev->source, "rf2-vcr") != 0 || ev->actor < -1 || ev->actor > 254 || ev->t != ev->t)
        abort();
    require_object(ev->fields, ev->fields_len);
    (*count)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const recd_format *f = recd_format_find("rf2-vcr");
    if (!f)
        abort();
    /* The entry's own sniff: the table may give an earlier signature precedence (a preamble
     * line may start with another format's magic). */
    recd_sniff_result sniffed = {f, RECD_SNIFF_NONE, false, "", ""};
    int level = f->sniff(data, size, &sniffed);
    recd_format_sniff(data, size, NULL);

    recd_format_verdict v;
    recd_report report = {0};
    report.limit = 16;
    int vrc = recd_format_verify(f, data, size, &v, &report);
    if ((vrc != 0 && vrc != -EBADMSG) || (vrc == 0) != v.valid)
        abort();
    if (v.valid && (level != RECD_SNIFF_SIGNATURE || recd_report_errors(&report) != 0))
        abort();
    recd_report_free(&report);

    char err[256] = "";
    size_t events = 0;
    int erc = recd_format_export_events(f, data, size, check_event, &events, err, sizeof err);
    if (erc != 0 && erc != -EBADMSG)
        abort();
    if ((erc == 0) != v.valid || (erc != 0 && strncmp(err, "offset ", 7) != 0))
        abort();

    recd_buf out = {0};
    int drc = recd_format_describe(f, data, size, &out, err, sizeof err);
    if (drc == 0)
        require_object((const char *)out.data, out.len);
    else if (drc != -EBADMSG || out.len != 0)
        abort();
    recd_buf_free(&out);
    return 0;
}
