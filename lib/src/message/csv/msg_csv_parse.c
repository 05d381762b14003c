/* SPDX-License-Identifier: MIT */
/* RFC 4180 CSV rows from a buffer (hostile input): quoted cells with "" escapes, LF or CRLF line
 * ends, a bounded number of cells per row. Also the matching cell writer. */
#include "message/csv/msg_csv.h"

#include <errno.h>
#include <string.h>

#include "base/why.h"

void msg_csv_reader_init(msg_csv_reader *r, const uint8_t *buf, size_t len)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->line = 1;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
        r->pos = 3; /* UTF-8 byte order mark, as spreadsheets write it */
}

void msg_csv_reader_free(msg_csv_reader *r) { recd_buf_free(&r->scratch); }

static bool at_eol(const msg_csv_reader *r, size_t p)
{
    return p >= r->len || r->buf[p] == '\n' || (r->buf[p] == '\r' && p + 1 < r->len && r->buf[p + 1] == '\n');
}

/* Moves past the line end at pos (LF or CRLF), if any. */
static void skip_eol(msg_csv_reader *r)
{
    if (r->pos < r->len && r->buf[r->pos] == '\r')
        r->pos++;
    if (r->pos < r->len && r->buf[r->pos] == '\n') {
        r->pos++;
        r->line++;
    }
}

static int end_cell(msg_csv_reader *r, size_t n, size_t start)
{
    if (n >= MSG_CSV_MAX_CELLS)
        return -E2BIG;
    r->off[n] = start;
    r->cell_len[n] = r->scratch.len - start;
    return recd_buf_append(&r->scratch, "", 1);
}

int msg_csv_next_row(msg_csv_reader *r, size_t *ncells, uint64_t *row_line, char *why,
                     size_t whylen)
{
    while (r->pos < r->len && at_eol(r, r->pos))
        skip_eol(r); /* blank lines */
    if (r->pos >= r->len)
        return 0;
    recd_buf_reset(&r->scratch);
    *row_line = r->line;
    size_t n = 0;
    for (;;) {
        size_t start = r->scratch.len;
        int rc = 0;
        if (r->pos < r->len && r->buf[r->pos] == '"') {
            uint64_t qline = r->line;
            r->pos++;
            for (;;) {
                if (r->pos >= r->len) {
                    recd_why(why, whylen, "line %llu: unterminated quoted cell",
                             (unsigned long long)qline);
                    return -EBADMSG;
                }
                uint8_t c = r->buf[r->pos];
                if (c == '"') {
                    if (r->pos + 1 < r->len && r->buf[r->pos + 1] == '"') {
                        rc = recd_buf_append(&r->scratch, "\"", 1);
                        r->pos += 2;
                    } else {
                        r->pos++;
                        break;
                    }
                } else {
                    if (c == '\n')
                        r->line++;
                    rc = recd_buf_append(&r->scratch, &c, 1);
                    r->pos++;
                }
                if (rc < 0)
                    return rc;
            }
            if (r->pos < r->len && r->buf[r->pos] != ',' && !at_eol(r, r->pos)) {
                recd_why(why, whylen, "line %llu: text after a closing quote",
                         (unsigned long long)r->line);
                return -EBADMSG;
            }
        } else {
            size_t s = r->pos;
            while (r->pos < r->len && r->buf[r->pos] != ',' && !at_eol(r, r->pos)) {
                uint8_t c = r->buf[r->pos];
                if (c == '"' || c == '\r') {
                    recd_why(why, whylen, "line %llu: %s inside an unquoted cell",
                             (unsigned long long)r->line, c == '"' ? "quote" : "carriage return");
                    return -EBADMSG;
                }
                r->pos++;
            }
            rc = recd_buf_append(&r->scratch, r->buf + s, r->pos - s);
            if (rc < 0)
                return rc;
        }
        rc = end_cell(r, n, start);
        if (rc == -E2BIG) {
            recd_why(why, whylen, "line %llu: more than %d cells", (unsigned long long)*row_line,
                     MSG_CSV_MAX_CELLS);
            return -EBADMSG;
        }
        if (rc < 0)
            return rc;
        n++;
        if (r->pos < r->len && r->buf[r->pos] == ',') {
            r->pos++;
            continue;
        }
        skip_eol(r);
        break;
    }
    *ncells = n;
    return 1;
}

int msg_csv_put_cell(recd_buf *out, const char *s, size_t len, bool first)
{
    int rc = first ? 0 : recd_buf_append(out, ",", 1);
    bool quote = false;
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (rc < 0 || !quote)
        return rc < 0 ? rc : recd_buf_append(out, s, len);
    rc = recd_buf_append(out, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < len && rc == 0; i++) {
        if (s[i] != '"') {
            run++;
            continue;
        }
        rc = recd_buf_append(out, s + i - run, run + 1); /* the quote itself, then its double */
        if (rc == 0)
            rc = recd_buf_append(out, "\"", 1);
        run = 0;
    }
    if (rc == 0)
        rc = recd_buf_append(out, s + len - run, run);
    if (rc == 0)
        rc = recd_buf_append(out, "\"", 1);
    return rc;
}
