/* SPDX-License-Identifier: MIT */
/* Whole exports: a recording, its format sniffed through the format table, as messages
 * (recd_export_msgs) or as JSONL/CSV text through a sink (recd_export_text). Above the table, so
 * that the message model below it needs no format lookups. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/why.h"
#include "formats/format_seek.h"
#include "recd/seek_index.h"
#include "recd/format.h"

int recd_export_msgs(const uint8_t *file, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                     size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    const recd_format *f = recd_format_sniff(file, len, NULL);
    if (!f) {
        recd_why(err, errlen, "not a recording of a format librecd knows");
        return -EBADMSG;
    }
    return recd_format_export(f, file, len, on_msg, ctx, err, errlen);
}

int recd_export_msgs_range(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                           int64_t from, int64_t to, recd_msg_fn on_msg, void *ctx, char *err,
                           size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    int rc = 0;
    recd_seek_read range = {from, to, false, NULL};
    if (f && what.standard && from >= 0)
        rc = recd_format__export_range(f, buf, len, index, ilen, &range, on_msg, ctx, err,
                                       errlen);
    return rc < 0 ? rc : rc > 0 ? 0 : recd_export_msgs(buf, len, on_msg, ctx, err, errlen);
}

#define OUT_CHUNK (64u * 1024u) /* text is handed to the sink in pieces of about this size */

typedef struct text_export {
    recd_text_encoding enc;
    recd_csv_writer csv;
    recd_buf buf;
    recd_sink sink;
} text_export;

static int drain(text_export *x)
{
    if (x->buf.len == 0)
        return 0;
    int rc = x->sink.write(x->sink.ctx, x->buf.data, x->buf.len);
    recd_buf_reset(&x->buf);
    return rc;
}

static int export_one(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    text_export *x = ctx;
    int rc;
    if (x->enc == RECD_TEXT_JSONL) {
        rc = recd_msg_to_json(m, &x->buf);
    } else {
        if (m->type == RECD_MSG_OPEN && (rc = recd_csv_writer_init(&x->csv, m->format)) < 0)
            return rc;
        rc = recd_csv_write(&x->csv, m, &x->buf);
    }
    if (rc == -EINVAL) {
        recd_why(err, errlen, "%s: a value the text encodings cannot carry (NaN, infinity or "
                 "invalid UTF-8)", recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (rc == 0 && x->buf.len >= OUT_CHUNK && (rc = drain(x)) < 0)
        recd_why(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

int recd_export_text(const uint8_t *file, size_t len, recd_text_encoding enc, recd_sink out,
                     char *err, size_t errlen)
{
    if (enc != RECD_TEXT_JSONL && enc != RECD_TEXT_CSV) {
        recd_why(err, errlen, "unknown text encoding");
        return -EINVAL;
    }
    text_export x;
    memset(&x, 0, sizeof x);
    x.enc = enc;
    x.sink = out;
    int rc = recd_export_msgs(file, len, export_one, &x, err, errlen);
    if (rc == 0 && (rc = drain(&x)) < 0)
        recd_why(err, errlen, "writing the output: %s", recd_strerror(rc));
    recd_buf_free(&x.buf);
    return rc;
}
