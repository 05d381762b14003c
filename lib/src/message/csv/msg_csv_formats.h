/* SPDX-License-Identifier: MIT */
/* Internal: the CSV hooks of a format (struct recd_format_csv, hung off its descriptor as `csv`):
 * the header's columns, the column that tells the format apart in a header, and how a row is read
 * and written. Each format defines its hooks beside its rows; msg_csv_read.c and msg_csv_write.c
 * find them through the format list. */
#ifndef RECD_MSG_CSV_FORMATS_H
#define RECD_MSG_CSV_FORMATS_H

#include <jansson.h>

#include "message/csv/msg_csv.h"
#include "message/msg_stream.h"
#include "recd/format.h"
#include "recd/message.h"

/* A document being read: its rows, the messages handed on, and how header columns map to the
 * format's columns. */
typedef struct msg_csv_doc {
    msg_csv_reader r;
    msg_stream st;
    recd_msg_format format;
    size_t ncols;
    int col_field[MSG_CSV_MAX_CELLS]; /* header column -> the format's column index */
    char *err;
    size_t errlen;
} msg_csv_doc;

struct recd_format_csv {
    /* A header with this column is this format's, unless a format of lower header_rank claims it
     * too (one format's header may hold another's signature column). NULL: the format is the one left when no
     * other claims the header; one format says so. */
    const char *signature;
    unsigned header_rank;
    /* Its rows hold the open and the close (else the reader opens the session from the header
     * and closes it after the last row, and the writer writes no row for them). */
    bool own_open;
    /* Fills names with its columns in their written order; returns how many. */
    size_t (*columns)(const char *names[MSG_CSV_MAX_CELLS]);
    /* One data row (the doc's current row) into messages handed on: 0, -EBADMSG, -ENOMEM. */
    int (*read_row)(msg_csv_doc *d, uint64_t line);
    /* The row for m, or nothing for a message that needs none: 0, -EINVAL (m does not belong to
     * a writer of this format, or cannot be written), -ENOMEM. */
    int (*write_row)(const recd_csv_writer *w, const recd_msg *m, recd_buf *out);
};

/* The descriptor of f when it has CSV hooks, or NULL. */
const recd_format *msg_csv_format_of(recd_msg_format f);
/* The format of a header row (names: its ncells cells). */
const recd_format *msg_csv_header_format(const char *const *names, size_t ncells);

/* Helpers the entries share (msg_csv_rows.c). */
/* "line N: column C: why" into the doc's err; -EBADMSG. */
int msg_csv_bad(msg_csv_doc *d, uint64_t line, const char *column, const char *why);
/* A row read as the JSON object obj (owned: freed here) of the message type kind: unless rc (the
 * reading's result) is already an error, it becomes a message, read as JSON lines are, and goes to
 * the doc's stream. 0 or a negative errno, with "line N: ..." in the doc's err. */
int msg_csv_deliver_json(msg_csv_doc *d, uint64_t line, int rc, json_t *obj, const char *kind,
                         size_t kind_len);
/* A JSON integer or real from a numeric cell, NULL when it is not a number (or no memory). */
json_t *msg_csv_number_json(const char *cell, size_t len);
/* Cells after the first: a number, a JSON text, n empty cells. */
int msg_csv_put_f64_cell(recd_buf *out, double d);
int msg_csv_put_f32_cell(recd_buf *out, float f);
int msg_csv_put_int_cell(recd_buf *out, uint64_t v);
int msg_csv_put_json_cell(recd_buf *out, const recd_buf *json);
int msg_csv_put_empty_cells(recd_buf *out, size_t n);
/* The message's fields as one JSON object cell (msg_json_object with omit), empty for {}: the
 * last column of a row whose message has no columns of its own. */
int msg_csv_put_fields_cell(recd_buf *out, const recd_msg *m, unsigned omit);

#endif
