/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the stream decoder. Byte 0 picks the chunk size (0 = all at once), byte 1
 * the decoder setup (encoding, a small max_frame, a session registry); the rest is the stream.
 * The input is decoded whole and in chunks (the chunked run optionally through the .rec block
 * path): both runs must deliver the same messages and end with the same result and error text, and
 * every delivered message must encode again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire_registry.h"
#include "recd/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct run {
    recd_buf out; /* binary re-encoding of every delivered message, or a marker */
    size_t count;
} run;

static int on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                  size_t errlen)
{
    (void)meta, (void)err, (void)errlen;
    run *r = ctx;
    r->count++;
    size_t before = r->out.len;
    int rc = recd_wire_encode(m, RECD_WIRE_BINARY, 0, &r->out);
    if (rc < 0) {
        /* NDJSON carries a few things binary cannot (a 256-byte token); binary input never. */
        if (meta->encoding == RECD_WIRE_BINARY && rc != -ENOMEM)
            abort();
        uint8_t marker = 0xEE;
        recd_buf_append(&r->out, &marker, 1);
    }
    if (rc == 0 && meta->encoding == RECD_WIRE_BINARY && meta->has_time) {
        /* What was decoded reads back the same. */
        recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY};
        recd_wire_decoder *d;
        if (recd_wire_decoder_new(&d, &cfg) == 0) {
            char e[320];
            if (m->type == RECD_MSG_OPEN || m->type == RECD_MSG_FLUSH || m->type == RECD_MSG_CLOSE) {
                if (recd_wire_decoder_feed(d, r->out.data + before, r->out.len - before, e, sizeof e) < 0)
                    abort();
            }
            recd_wire_decoder_free(d);
        }
    }
    return 0;
}

static int decode(const uint8_t *data, size_t size, size_t chunk, const recd_wire_decoder_config *base,
                  run *r, char *err, size_t errlen)
{
    recd_wire_decoder_config cfg = *base;
    cfg.ctx = r;
    recd_wire_decoder *d;
    if (recd_wire_decoder_new(&d, &cfg) < 0)
        return -ENOMEM;
    int rc = 0;
    for (size_t pos = 0; pos < size && rc == 0;) {
        size_t n = chunk && chunk < size - pos ? chunk : size - pos;
        rc = recd_wire_decoder_feed(d, data + pos, n, err, errlen);
        pos += n;
        if (recd_wire_decoder_pending(d) > 65536 + 8)
            abort();
    }
    if (rc == 0)
        rc = recd_wire_decoder_finish(d, err, errlen);
    recd_wire_decoder_free(d);
    return rc;
}

/* The .rec path hands over blocks: turned back into the message, it must match on_msg's. */
static int on_rec(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta, char *err,
                  size_t errlen)
{
    recd_msg m;
    rec_state_as_msg(st, meta, &m);
    return on_msg(ctx, &m, meta, err, errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t chunk = data[0];
    uint8_t setup = data[1];
    recd_wire_decoder_config cfg = {.encoding = (recd_wire_encoding)(setup % 3),
                                    .max_frame = (setup & 4) ? 200 : 0,
                                    .format_of = (setup & 8) ? registry : NULL,
                                    .on_msg = on_msg};
    /* With bit 4 the chunked run takes .rec states as blocks: both paths must agree. */
    recd_wire_decoder_config chunked = cfg;
    if (setup & 16)
        chunked.on_rec_state = on_rec;
    data += 2;
    size -= 2;
    run whole = {{0}, 0}, parts = {{0}, 0};
    char e1[400] = "", e2[400] = "";
    int r1 = decode(data, size, 0, &cfg, &whole, e1, sizeof e1);
    int r2 = decode(data, size, chunk, &chunked, &parts, e2, sizeof e2);
    if (r1 != -ENOMEM && r2 != -ENOMEM) {
        if (r1 != r2 || strcmp(e1, e2) != 0 || whole.count != parts.count ||
            whole.out.len != parts.out.len ||
            (whole.out.len && memcmp(whole.out.data, parts.out.data, whole.out.len) != 0))
            abort();
        if (r1 < 0 && r1 != -EPROTO && r1 != -EMSGSIZE && r1 != -EBADMSG)
            abort();
    }
    recd_buf_free(&whole.out);
    recd_buf_free(&parts.out);
    return 0;
}
