/* SPDX-License-Identifier: MIT */
/* Fuzz target: JSON-lines import of arbitrary bytes. Must never crash or leak; every parsed
 * message must re-encode and re-parse, and an imported .rec that exports must re-import to the
 * same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recd/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int reencode(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)ctx;
    recd_buf line = {0};
    if (recd_msg_to_json(m, &line) != 0)
        abort(); /* whatever the reader accepts, the writer can write */
    recd_msg back;
    if (recd_msg_from_json((const char *)line.data, line.len, m->format, &back, err, errlen) != 0)
        abort();
    recd_msg_free(&back);
    recd_buf_free(&line);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    recd_jsonl_read(data, size, reencode, NULL, err, sizeof err);

    recd_buf out = {0}, text = {0}, again = {0};
    recd_import_stats st;
    int rc = recd_import_text(data, size, RECD_TEXT_JSONL, RECD_MSG_FMT_NONE, recd_buf_sink(&out),
                              &st, err, sizeof err);
    if (rc == 0 && st.format != RECD_MSG_FMT_RECAP &&
        recd_export_text(out.data, out.len, RECD_TEXT_JSONL, recd_buf_sink(&text), err,
                         sizeof err) == 0) {
        if (recd_import_text(text.data, text.len, RECD_TEXT_JSONL, RECD_MSG_FMT_NONE,
                             recd_buf_sink(&again), NULL, err, sizeof err) != 0 ||
            again.len != out.len || memcmp(again.data, out.data, out.len) != 0)
            abort();
    }
    recd_buf_free(&out);
    recd_buf_free(&text);
    recd_buf_free(&again);
    return 0;
}
