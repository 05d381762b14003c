/* SPDX-License-Identifier: MIT */
/* CSV writer: the header row, then each message's row as its format's CSV hooks write it
 * (msg_csv_formats.h; the layouts are in docs/protocol.md). */
#include <errno.h>
#include <string.h>

#include "message/csv/msg_csv_formats.h"

int recd_csv_writer_init(recd_csv_writer *w, recd_msg_format format)
{
    memset(w, 0, sizeof *w);
    if (!msg_csv_format_of(format))
        return -EINVAL;
    w->format = format;
    return 0;
}

static int put_header(recd_csv_writer *w, recd_buf *out)
{
    const char *names[MSG_CSV_MAX_CELLS];
    size_t n = msg_csv_format_of(w->format)->csv->columns(names);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = msg_csv_put_cell(out, names[i], strlen(names[i]), i == 0);
    if (rc == 0)
        rc = recd_buf_append(out, "\n", 1);
    if (rc == 0)
        w->header_written = true;
    return rc;
}

int recd_csv_write(recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    if (!msg_csv_format_of(w->format))
        return -EINVAL;
    size_t start = out->len;
    bool header_now = !w->header_written;
    int rc = header_now ? put_header(w, out) : 0;
    if (rc == 0)
        rc = msg_csv_format_of(w->format)->csv->write_row(w, m, out);
    if (rc < 0) {
        out->len = start;
        if (header_now)
            w->header_written = false;
    }
    return rc;
}
