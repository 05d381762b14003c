/* SPDX-License-Identifier: MIT */
/* JSONL or CSV text read by its encoding (sniffed when not given), and recd_text_peek_format,
 * which reads only as far as the open message. */
#include "message/msg_text.h"

#include <errno.h>

#include "base/why.h"

int msg_text_read(const uint8_t *text, size_t len, recd_text_encoding enc, recd_msg_fn fn,
                  void *ctx, char *err, size_t errlen)
{
    if (enc == RECD_TEXT_NONE)
        enc = recd_text_encoding_sniff(text, len);
    if (enc == RECD_TEXT_JSONL)
        return recd_jsonl_read(text, len, fn, ctx, err, errlen);
    if (enc == RECD_TEXT_CSV)
        return recd_csv_read(text, len, fn, ctx, err, errlen);
    recd_why(err, errlen, "unknown text encoding");
    return -EINVAL;
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
    int rc = msg_text_read(text, len, enc, peek_open, format, err, errlen);
    if (rc == PEEK_DONE) {
        if (err && errlen)
            err[0] = 0;
        return 0;
    }
    return rc < 0 ? rc : -EBADMSG;
}
