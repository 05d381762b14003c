/* SPDX-License-Identifier: MIT */
/* Internal: JSONL or CSV text read by its encoding, for the whole-text import and peek. */
#ifndef RECD_MSG_TEXT_H
#define RECD_MSG_TEXT_H

#include "recd/message.h"

/* Reads text as enc (NONE = sniffed), handing every message to fn; -EINVAL for an unknown
 * encoding. */
int msg_text_read(const uint8_t *text, size_t len, recd_text_encoding enc, recd_msg_fn fn,
                  void *ctx, char *err, size_t errlen);

#endif
