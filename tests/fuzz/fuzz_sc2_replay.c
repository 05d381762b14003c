/* SPDX-License-Identifier: MIT */
/* libFuzzer target for a whole StarCraft II replay through its format-table entry: sniff, describe
 * (header, StormLib's MPQ, details, attributes, metadata, tracker counts), verify and export. The
 * summary must always be one JSON object and a failure must say what went wrong. StormLib runs in
 * a child process (lib/src/formats/sc2/sc2_mpq.h): its own defects on mutated archives (assertion
 * aborts, an out-of-bounds memcpy in LoadBetTable that ASan reports from the child, endless bzip2
 * loops) end that child, never this process, and are not failures of this target. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/sc2/sc2_mpq.h"
#include "recd/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t sink;

static int on_event(void *ctx, const recd_replay_event *ev)
{
    (void)ctx;
    sink += ev->fields_len + (uint64_t)ev->t_raw;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const recd_format *f = recd_format_find("sc2replay");
    if (!f)
        abort();
    sc2_mpq_set_timeout_ms(1000); /* a stalled StormLib costs 1 s, not 5 */
    recd_format_sniff(data, size, NULL);
    recd_buf out = {0};
    char err[256] = "";
    int rc = recd_format_describe(f, data, size, &out, err, sizeof err);
    if (rc != -ENOMEM && (out.len < 2 || out.data[0] != '{'))
        abort();
    if (rc == -EBADMSG && !err[0])
        abort();
    recd_buf_free(&out);
    if (rc != 0)
        return 0; /* verify and export would stall on the same damage again */
    recd_format_verdict verdict;
    recd_format_verify(f, data, size, &verdict, NULL);
    recd_format_export_events(f, data, size, on_event, NULL, err, sizeof err);
    return 0;
}
