/* Whole conversions for rectool: recording -> JSONL/CSV text through a sink, and JSONL/CSV text
 * -> recording through the importer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "message/msg_fields.h"

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
        msg_err(err, errlen, "%s: a value the text encodings cannot carry (NaN, infinity or "
                "invalid UTF-8)", recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (rc == 0 && x->buf.len >= OUT_CHUNK && (rc = drain(x)) < 0)
        msg_err(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

int recd_export_text(const uint8_t *file, size_t len, recd_text_encoding enc, recd_sink out,
                     char *err, size_t errlen)
{
    if (enc != RECD_TEXT_JSONL && enc != RECD_TEXT_CSV) {
        msg_err(err, errlen, "unknown text encoding");
        return -EINVAL;
    }
    text_export x;
    memset(&x, 0, sizeof x);
    x.enc = enc;
    x.sink = out;
    int rc = recd_export_msgs(file, len, export_one, &x, err, errlen);
    if (rc == 0 && (rc = drain(&x)) < 0)
        msg_err(err, errlen, "writing the output: %s", recd_strerror(rc));
    recd_buf_free(&x.buf);
    return rc;
}

static int read_text(const uint8_t *text, size_t len, recd_text_encoding enc, recd_msg_fn fn,
                     void *ctx, char *err, size_t errlen)
{
    if (enc == RECD_TEXT_NONE)
        enc = recd_text_encoding_sniff(text, len);
    if (enc == RECD_TEXT_JSONL)
        return recd_jsonl_read(text, len, fn, ctx, err, errlen);
    if (enc == RECD_TEXT_CSV)
        return recd_csv_read(text, len, fn, ctx, err, errlen);
    msg_err(err, errlen, "unknown text encoding");
    return -EINVAL;
}

int recd_import_text(const uint8_t *text, size_t len, recd_text_encoding enc, recd_msg_format expect,
                     recd_sink out, recd_import_stats *stats, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    recd_importer im;
    recd_importer_init(&im, expect, out);
    int rc = read_text(text, len, enc, recd_importer_msg, &im, err, errlen);
    if (rc == 0)
        rc = recd_importer_finish(&im, err, errlen);
    if (stats) {
        stats->format = im.format;
        stats->states = im.states;
        stats->events = im.events;
        stats->flushes = im.flushes;
    }
    recd_importer_free(&im);
    return rc;
}

/* Stops the reader at the open message: a sentinel error that is not a real failure. */
#define PEEK_DONE (-ECANCELED)

static int peek_open(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *(recd_msg_format *)ctx = m->format;
    return PEEK_DONE;
}

int recd_text_peek_format(const uint8_t *text, size_t len, recd_text_encoding enc,
                          recd_msg_format *format, char *err, size_t errlen)
{
    *format = RECD_MSG_FMT_NONE;
    int rc = read_text(text, len, enc, peek_open, format, err, errlen);
    if (rc == PEEK_DONE) {
        if (err && errlen)
            err[0] = 0;
        return 0;
    }
    return rc < 0 ? rc : -EBADMSG;
}
