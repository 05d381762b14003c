/* SPDX-License-Identifier: MIT */
/* Fuzz target: CSV import of arbitrary bytes. Must never crash or leak; every parsed message must
 * be writable as CSV, and an imported .rec that exports must re-import to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recd/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct rewrite {
    recd_csv_writer w;
    recd_buf text;
} rewrite;

static int rewrite_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rewrite *x = ctx;
    if (m->type == RECD_MSG_OPEN && recd_csv_writer_init(&x->w, m->format) != 0)
        abort();
    if (recd_csv_write(&x->w, m, &x->text) != 0)
        abort(); /* whatever the reader accepts, the writer can write */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    rewrite x;
    memset(&x, 0, sizeof x);
    recd_csv_read(data, size, rewrite_msg, &x, err, sizeof err);
    recd_buf_free(&x.text);

    recd_buf out = {0}, text = {0}, again = {0};
    recd_import_stats st;
    int rc = recd_import_text(data, size, RECD_TEXT_CSV, RECD_MSG_FMT_NONE, recd_buf_sink(&out), &st,
                              err, sizeof err);
    if (rc == 0 && st.format != RECD_MSG_FMT_RECAP &&
        recd_export_text(out.data, out.len, RECD_TEXT_CSV, recd_buf_sink(&text), err,
                         sizeof err) == 0) {
        if (recd_import_text(text.data, text.len, RECD_TEXT_CSV, RECD_MSG_FMT_NONE,
                             recd_buf_sink(&again), NULL, err, sizeof err) != 0 ||
            again.len != out.len || memcmp(again.data, out.data, out.len) != 0)
            abort();
    }
    recd_buf_free(&out);
    recd_buf_free(&text);
    recd_buf_free(&again);
    return 0;
}
