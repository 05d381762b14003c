/* SPDX-License-Identifier: MIT */
/* Fuzz target: the JSON line reader against jansson as the oracle. The first byte picks the
 * session's format, the rest is one line; recd_msg_from_json (tree-free for .rec, Recap and CARLA
 * states) and the jansson-only reader must make the same decision with the same error text and
 * values, and whatever the session format's tree-free reader accepts on its own, jansson accepts
 * the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message/json/msg_json_formats.h"
#include "recd/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_message(const recd_msg *a, const recd_msg *b)
{
    if (a->type != b->type || a->format != b->format || a->has_seq != b->has_seq ||
        a->seq != b->seq || strcmp(a->session, b->session) != 0)
        abort();
    recd_buf ja = {0}, jb = {0};
    int ra = recd_msg_to_json(a, &ja), rb = recd_msg_to_json(b, &jb);
    if (ra != rb || ja.len != jb.len || (ja.len && memcmp(ja.data, jb.data, ja.len) != 0))
        abort();
    recd_buf_free(&ja);
    recd_buf_free(&jb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const recd_msg_format formats[5] = {RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_ONFOOT,
                                               RECD_MSG_FMT_SAMP_VEHICLE, RECD_MSG_FMT_RECAP,
                                               RECD_MSG_FMT_CARLA};
    if (size == 0 || size > 1 << 16)
        return 0;
    recd_msg_format sf = formats[data[0] % 5];
    const char *line = (const char *)data + 1;
    size_t len = size - 1;

    char e1[256] = "", e2[256] = "";
    recd_msg a, b;
    int ra = recd_msg_from_json(line, len, sf, &a, e1, sizeof e1);
    int rb = msg_from_json_jansson(line, len, sf, &b, e2, sizeof e2);
    if (ra != rb)
        abort();
    if (ra < 0 && strcmp(e1, e2) != 0)
        abort();
    if (ra == 0) {
        same_message(&a, &b);
        recd_msg_free(&a);
        recd_msg_free(&b);
    }

    /* The tree-free reader alone: what it accepts, jansson accepts with the same values. */
    size_t body = len;
    while (body && (line[body - 1] == '\n' || line[body - 1] == '\r') && len - body < 2)
        body--;
    msg_json_fast_fn fast = msg_json_fast_reader(sf);
    if (fast && !memchr(line, '\n', body) && fast(line, body, sf, &a)) {
        if (msg_from_json_jansson(line, body, sf, &b, e2, sizeof e2) != 0)
            abort();
        same_message(&a, &b);
        recd_msg_free(&a);
        recd_msg_free(&b);
    }
    return 0;
}
