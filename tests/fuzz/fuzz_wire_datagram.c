/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the datagram decoder. Byte 0 picks the setup (encoding, a small max_frame,
 * a session registry); the rest is one datagram. A datagram is all or nothing: an error delivers
 * nothing, success delivers every message, and the binary re-encoding of what was delivered is
 * itself a datagram that decodes to the same messages. With bit 4 of the setup, the .rec block path
 * must deliver exactly what the message path does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire_registry.h"
#include "recd/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct run {
    recd_buf out;
    size_t count;
    bool unencodable;
} run;

static int on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                  size_t errlen)
{
    (void)meta, (void)err, (void)errlen;
    run *r = ctx;
    r->count++;
    int rc = recd_wire_encode(m, RECD_WIRE_BINARY, 0, &r->out);
    if (rc < 0) {
        if (meta->encoding == RECD_WIRE_BINARY && rc != -ENOMEM)
            abort();
        r->unencodable = true;
    }
    if (meta->encoding == RECD_WIRE_BINARY && !meta->has_time)
        r->unencodable = true; /* re-encoding adds the time: not the same frame */
    return 0;
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
    if (size < 1)
        return 0;
    uint8_t setup = data[0];
    run r = {{0}, 0, false};
    recd_wire_decoder_config cfg = {.encoding = (recd_wire_encoding)(setup % 3),
                                    .max_frame = (setup & 4) ? 200 : 0,
                                    .format_of = (setup & 8) ? registry : NULL,
                                    .on_msg = on_msg,
                                    .ctx = &r};
    char err[400] = "";
    int rc = recd_wire_decode_datagram(&cfg, data + 1, size - 1, err, sizeof err);
    if (rc < 0 && rc != -ENOMEM && r.count != 0)
        abort(); /* all or nothing */
    if (rc < 0 && rc != -ENOMEM && rc != -EPROTO && rc != -EMSGSIZE && rc != -EBADMSG)
        abort();
    if (setup & 16) { /* the .rec block path must deliver the same and fail the same */
        run blocks = {{0}, 0, false};
        recd_wire_decoder_config cb = cfg;
        cb.ctx = &blocks;
        cb.on_rec_state = on_rec;
        char err2[400] = "";
        int rcb = recd_wire_decode_datagram(&cb, data + 1, size - 1, err2, sizeof err2);
        if (rc != -ENOMEM && rcb != -ENOMEM &&
            (rcb != rc || strcmp(err, err2) != 0 || blocks.count != r.count ||
             blocks.out.len != r.out.len ||
             (r.out.len && memcmp(blocks.out.data, r.out.data, r.out.len) != 0)))
            abort();
        recd_buf_free(&blocks.out);
    }
    if (rc == 0 && !r.unencodable && r.out.len && !(setup & 4)) {
        run again = {{0}, 0, false};
        recd_wire_decoder_config c2 = {.encoding = RECD_WIRE_BINARY, .format_of = cfg.format_of,
                                        .on_msg = on_msg, .ctx = &again};
        int rc2 = recd_wire_decode_datagram(&c2, r.out.data, r.out.len, err, sizeof err);
        if (rc2 != -ENOMEM &&
            (rc2 != 0 || again.count != r.count || again.out.len != r.out.len ||
             memcmp(again.out.data, r.out.data, r.out.len) != 0))
            abort();
        recd_buf_free(&again.out);
    }
    recd_buf_free(&r.out);
    return 0;
}
