/* SPDX-License-Identifier: MIT */
/* Internal: an RFC 4180 CSV row reader over a buffer, and CSV cell writing. */
#ifndef RECD_MSG_CSV_H
#define RECD_MSG_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#define MSG_CSV_MAX_CELLS 256

typedef struct msg_csv_reader {
    const uint8_t *buf;
    size_t len, pos;
    uint64_t line;    /* physical line of the next byte, from 1 */
    recd_buf scratch; /* unescaped cells of the current row, each NUL-terminated */
    size_t off[MSG_CSV_MAX_CELLS];
    size_t cell_len[MSG_CSV_MAX_CELLS];
} msg_csv_reader;

void msg_csv_reader_init(msg_csv_reader *r, const uint8_t *buf, size_t len);
void msg_csv_reader_free(msg_csv_reader *r);
/* Reads the next non-empty row. Returns 1 with *ncells and *row_line set, 0 at the end, or
 * -EBADMSG (why says what and where) / -ENOMEM. */
int msg_csv_next_row(msg_csv_reader *r, size_t *ncells, uint64_t *row_line, char *why,
                     size_t whylen);
static inline const char *msg_csv_cell(const msg_csv_reader *r, size_t i)
{
    return (const char *)r->scratch.data + r->off[i];
}

/* Appends one cell, quoted when it holds a comma, quote, CR or LF. */
int msg_csv_put_cell(recd_buf *out, const char *s, size_t len, bool first);

#endif
