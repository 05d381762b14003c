/* SPDX-License-Identifier: MIT */
/* recd_csv_read: a whole CSV document (hostile input) into messages. The header row decides the
 * format; its CSV hooks (msg_csv_formats.h) read the rows, field by field or as JSON objects that
 * go through the JSON reader (msg_csv_deliver_json), so both encodings share one set of rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message/csv/msg_csv_formats.h"
#include "base/text.h"
#include "base/why.h"

/* ---- header ---------------------------------------------------------------------------------- */

static int read_header(msg_csv_doc *d, size_t ncells, uint64_t line)
{
    const char *names[MSG_CSV_MAX_CELLS];
    for (size_t i = 0; i < ncells; i++)
        names[i] = msg_csv_cell(&d->r, i);
    const recd_format *format = msg_csv_header_format(names, ncells);
    const struct recd_format_csv *e = format->csv;
    d->format = format->msg_format;
    const char *named[MSG_CSV_MAX_CELLS];
    size_t n = e->columns(named);
    bool seen[MSG_CSV_MAX_CELLS] = {false};
    for (size_t i = 0; i < ncells; i++) {
        size_t f = 0;
        while (f < n && strcmp(named[f], names[i]) != 0)
            f++;
        if (f == n || strlen(names[i]) != d->r.cell_len[i]) {
            char safe[48], why[160];
            text_safe_excerpt(names[i], d->r.cell_len[i], safe);
            snprintf(why, sizeof why, "line %llu: unknown column \"%s\" for %s CSV",
                     (unsigned long long)line, safe, recd_msg_format_name(d->format));
            recd_why(d->err, d->errlen, "%s", why);
            return -EBADMSG;
        }
        if (seen[f]) {
            recd_why(d->err, d->errlen, "line %llu: column \"%s\" appears twice",
                     (unsigned long long)line, names[i]);
            return -EBADMSG;
        }
        seen[f] = true;
        d->col_field[i] = (int)f;
    }
    for (size_t f = 0; f < n; f++) {
        if (!seen[f]) {
            recd_why(d->err, d->errlen, "line %llu: missing column \"%s\" (%s CSV)",
                     (unsigned long long)line, named[f],
                     recd_msg_format_name(d->format));
            return -EBADMSG;
        }
    }
    d->ncols = ncells;
    return 0;
}

/* ---- document -------------------------------------------------------------------------------- */

static int read_rows(msg_csv_doc *d)
{
    size_t ncells;
    uint64_t line;
    char why[200] = "";
    int rc = msg_csv_next_row(&d->r, &ncells, &line, why, sizeof why);
    if (rc == 0) {
        recd_why(d->err, d->errlen, "no header row: the input is empty");
        return -EBADMSG;
    }
    if (rc < 0)
        goto fail;
    if ((rc = read_header(d, ncells, line)) < 0)
        return rc;
    const struct recd_format_csv *e = msg_csv_format_of(d->format)->csv;
    bool own_open = e->own_open;
    if (!own_open) {
        recd_msg open;
        recd_msg_init(&open, RECD_MSG_OPEN, d->format);
        if ((rc = msg_stream_deliver(&d->st, &open, line, d->err, d->errlen)) < 0)
            return rc;
    }
    uint64_t last_line = line;
    while ((rc = msg_csv_next_row(&d->r, &ncells, &line, why, sizeof why)) > 0) {
        last_line = line;
        if (ncells != d->ncols) {
            recd_why(d->err, d->errlen, "line %llu: %zu cells, the header has %zu",
                     (unsigned long long)line, ncells, d->ncols);
            return -EBADMSG;
        }
        rc = e->read_row(d, line);
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        goto fail;
    if (!d->st.opened) {
        recd_why(d->err, d->errlen, "no open row");
        return -EBADMSG;
    }
    if (!own_open && !d->st.closed) {
        recd_msg close;
        recd_msg_init(&close, RECD_MSG_CLOSE, d->format);
        return msg_stream_deliver(&d->st, &close, last_line, d->err, d->errlen);
    }
    return 0;
fail:
    if (rc == -EBADMSG && d->err)
        recd_why(d->err, d->errlen, "%s", why);
    else if (rc == -ENOMEM)
        recd_why(d->err, d->errlen, "out of memory");
    return rc;
}

int recd_csv_read(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                  size_t errlen)
{
    msg_csv_doc *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    msg_csv_reader_init(&d->r, buf, len);
    d->st.on_msg = on_msg;
    d->st.ctx = ctx;
    d->err = err;
    d->errlen = errlen;
    if (err && errlen)
        err[0] = 0;
    int rc = read_rows(d);
    msg_csv_reader_free(&d->r);
    free(d);
    return rc;
}
