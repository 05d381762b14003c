/* SPDX-License-Identifier: MIT */
/* recd_jsonl_read: a whole JSON-lines document into messages, with line numbers in errors; the
 * session rules of a file (open first, one session, nothing after close) come from msg_stream.c. */
#include <errno.h>
#include <string.h>

#include "base/why.h"
#include "message/msg_stream.h"

static bool blank(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

int recd_jsonl_read(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                    size_t errlen)
{
    msg_stream st;
    memset(&st, 0, sizeof st);
    st.on_msg = on_msg;
    st.ctx = ctx;
    size_t pos = 0;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
        pos = 3; /* UTF-8 byte order mark */
    uint64_t line = 0;
    while (pos < len) {
        line++;
        const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        const uint8_t *p = buf + pos;
        pos += n + (nl != NULL);
        if (blank(p, n))
            continue;
        recd_msg m;
        char why[256];
        int rc = recd_msg_from_json((const char *)p, n, st.format, &m, why, sizeof why);
        if (rc < 0) {
            recd_why(err, errlen, "line %llu: %s", (unsigned long long)line, why);
            return rc;
        }
        rc = msg_stream_deliver(&st, &m, line, err, errlen);
        recd_msg_free(&m);
        if (rc < 0)
            return rc;
    }
    if (!st.opened) {
        recd_why(err, errlen, "no messages: the input is empty");
        return -EBADMSG;
    }
    return 0;
}
