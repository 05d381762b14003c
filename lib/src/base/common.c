/* SPDX-License-Identifier: MIT */
/* Error names, growable buffers and problem reports shared by every librecd module. */
#include "recd/common.h"
#include "base/buf_grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *recd_strerror(int err)
{
    switch (-err) {
    case 0: return "success";
    case EINVAL: return "invalid argument or value";
    case ERANGE: return "value out of range";
    case EBADMSG: return "malformed data";
    case EPROTO: return "protocol error";
    case ENOMEM: return "out of memory";
    case EIO: return "input/output error";
    case ENOSPC: return "no space left on device";
    case EMSGSIZE: return "message too large";
    case ENODATA: return "no data";
    case ENOTSUP: return "not supported";
    case EAGAIN: return "need more data";
    default: return strerror(-err);
    }
}

int recd_buf_reserve(recd_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -ENOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int recd_buf_append(recd_buf *b, const void *data, size_t len)
{
    int rc = recd_buf_reserve(b, len);
    if (rc < 0)
        return rc;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

__attribute__((noinline)) int recd__buf_grow(recd_buf *b, size_t extra)
{
    return recd_buf_reserve(b, extra);
}

void recd_buf_reset(recd_buf *b) { b->len = 0; }

void recd_buf_free(recd_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int buf_sink_write(void *ctx, const void *data, size_t len)
{
    return recd_buf_append(ctx, data, len);
}

recd_sink recd_buf_sink(recd_buf *b)
{
    recd_sink s = {buf_sink_write, b};
    return s;
}

void recd_report_progress(const recd_report *r, uint64_t done, uint64_t total)
{
    if (r && r->progress.fn)
        r->progress.fn(r->progress.data, done, total);
}

void recd_report_add(recd_report *r, recd_severity sev, uint64_t offset, const char *code,
                     const char *fmt, ...)
{
    if (!r)
        return;
    if ((r->limit && r->count >= r->limit)) {
        r->dropped++;
        return;
    }
    if (r->count == r->cap) {
        recd_problem *p = recd__array_room(r->items, &r->cap, r->count, sizeof *p, 16);
        if (!p) {
            r->dropped++;
            return;
        }
        r->items = p;
    }
    recd_problem *p = &r->items[r->count++];
    memset(p, 0, sizeof *p);
    p->severity = sev;
    p->offset = offset;
    snprintf(p->code, sizeof p->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
}

size_t recd_report_errors(const recd_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++)
        n += r->items[i].severity == RECD_SEV_ERROR;
    return n;
}

void recd_report_free(recd_report *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}
