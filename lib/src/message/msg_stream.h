/* SPDX-License-Identifier: MIT */
/* Internal: handing messages on: the file-level rules shared by the JSONL and CSV readers, and
 * the delivery the per-format exporters share. */
#ifndef RECD_MSG_STREAM_H
#define RECD_MSG_STREAM_H

#include "recd/message.h"

typedef struct msg_stream {
    recd_msg_fn on_msg;
    void *ctx;
    bool opened, closed;
    recd_msg_format format;
    char session[RECD_SESSION_KEY_MAX + 1];
} msg_stream;

/* Checks m and hands it to the callback; errors become "line N: why" in err. */
int msg_stream_deliver(msg_stream *st, const recd_msg *m, uint64_t line, char *err, size_t errlen);

/* Hands m to on_msg and frees it; a failure that gave no reason gets its error's name in err. */
int msg_deliver_owned(recd_msg_fn on_msg, void *ctx, recd_msg *m, char *err, size_t errlen);

#endif
