/* SPDX-License-Identifier: MIT */
/* Recognises a recording or text file by its content, never by its name: recordings through
 * librecd's format table, plus the text (JSON lines, CSV) that rectool import reads. */
#ifndef RECTOOL_SNIFF_H
#define RECTOOL_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/format.h"
#include "recd/message.h"

typedef struct rt_sniffed {
    const recd_format *format; /* a recording, or a variant of one (see standard); else NULL */
    bool standard;             /* a recording its format's readers load */
    recd_text_encoding text;   /* JSONL or CSV text; NONE otherwise */
    bool empty;                /* zero bytes */
    const char *name;          /* stable short name: the format's sniff kind (recd_sniff_result),
                                  "jsonl", "csv", "empty", "unknown", ... */
    const char *description;   /* one sentence for people */
} rt_sniffed;

void rt_sniff(const uint8_t *buf, size_t len, rt_sniffed *out);

/* A standard recording: what repair and export accept. */
static inline bool rt_sniffed_recording(const rt_sniffed *s)
{
    return s->format && s->standard;
}

#endif
