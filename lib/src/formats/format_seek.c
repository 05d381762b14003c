/* SPDX-License-Identifier: MIT */
/* Seeking through the format table: the sidecar index file (docs/formats/seek-index.md: a header
 * with the data file's identity, then self-checking entries), the seek that uses its longest
 * valid prefix and scans the file beyond it, and the ranged export that starts at a seek point. */
#include "formats/format_seek.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/bytes.h"
#include "recd/seek_index.h"

#define INDEX_MAGIC "RECDSIDX"
#define INDEX_VERSION 1u
#define FORMAT_NAME_SIZE 24u

static uint32_t crc_of(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n); /* crc32(0L, Z_NULL, 0) is 0 */
}

bool recd_seek_index_wanted(const recd_format *f)
{
    return f && f->seek && f->seek->scan && !f->seek->direct;
}

bool recd_seek_index_point_at(const recd_format *f, const uint8_t *unit, size_t len,
                              recd_seek_point *p)
{
    return recd_seek_index_wanted(f) && f->seek->point_at && f->seek->point_at(unit, len, p);
}

int recd_seek_index_header(const recd_format *f, const uint8_t *head, size_t len, recd_buf *out)
{
    if (!recd_seek_index_wanted(f) || strlen(f->name) >= FORMAT_NAME_SIZE)
        return -ENOTSUP;
    size_t stable = f->seek->stable_len(head, len);
    if (stable == 0 || stable > len || stable > UINT32_MAX)
        return -EAGAIN;
    uint8_t h[RECD_SEEK_INDEX_HEADER_SIZE] = {0};
    memcpy(h, INDEX_MAGIC, 8);
    st_le16(h + 8, INDEX_VERSION);
    st_le16(h + 10, RECD_SEEK_INDEX_ENTRY_SIZE);
    st_le32(h + 12, (uint32_t)stable);
    st_le32(h + 16, crc_of(head, stable));
    st_le32(h + 20, RECD_SEEK_INDEX_PROBE_SIZE);
    memcpy(h + 24, f->name, strlen(f->name));
    st_le32(h + 60, crc_of(h, 60));
    return recd_buf_append(out, h, sizeof h);
}

void recd_seek_index_entry(const recd_seek_point *p, const uint8_t *probe,
                           uint8_t out[RECD_SEEK_INDEX_ENTRY_SIZE])
{
    st_le64(out, (uint64_t)p->time);
    st_le64(out + 8, p->offset);
    st_le64(out + 16, (uint64_t)p->aux);
    st_le32(out + 24, crc_of(probe, RECD_SEEK_INDEX_PROBE_SIZE));
    st_le32(out + 28, crc_of(out, 28));
}

static const char *header_problem(const recd_format *f, const uint8_t *data, size_t len,
                                  const uint8_t *h, size_t ilen)
{
    if (ilen < RECD_SEEK_INDEX_HEADER_SIZE)
        return "shorter than its header";
    if (memcmp(h, INDEX_MAGIC, 8) != 0)
        return "not a recd seek index (magic)";
    if (ld_le32(h + 60) != crc_of(h, 60))
        return "header CRC mismatch";
    if (ld_le16(h + 8) != INDEX_VERSION || ld_le16(h + 10) != RECD_SEEK_INDEX_ENTRY_SIZE ||
        ld_le32(h + 20) != RECD_SEEK_INDEX_PROBE_SIZE)
        return "unknown index version";
    char name[FORMAT_NAME_SIZE + 1] = {0};
    memcpy(name, h + 24, FORMAT_NAME_SIZE);
    if (strcmp(name, f->name) != 0)
        return "index of another format";
    uint32_t stable = ld_le32(h + 12);
    if (stable == 0 || stable > len || stable != f->seek->stable_len(data, len) ||
        ld_le32(h + 16) != crc_of(data, stable))
        return "index of another file (identity mismatch)";
    return NULL;
}

/* Entry e (32 bytes) into *p when its CRC checks and its offset lies inside the data, and, with
 * probe, when it points at the data it describes (reading that data: a page per entry). */
static bool entry_ok(const uint8_t *e, const uint8_t *data, size_t len, bool probe,
                     recd_seek_point *p)
{
    if (ld_le32(e + 28) != crc_of(e, 28))
        return false;
    p->time = (int64_t)ld_le64(e);
    p->offset = ld_le64(e + 8);
    p->aux = (int64_t)ld_le64(e + 16);
    if (p->offset > len || len - p->offset < RECD_SEEK_INDEX_PROBE_SIZE)
        return false;
    return !probe || ld_le32(e + 24) == crc_of(data + p->offset, RECD_SEEK_INDEX_PROBE_SIZE);
}

static bool entry_valid(const uint8_t *e, const uint8_t *data, size_t len, recd_seek_point *p)
{
    return entry_ok(e, data, len, true, p);
}

/* The index's header and its longest prefix of entries that check; probes: the data each
 * points at is read too (else only the index is, and a seek checks the entry it uses). */
static int check_entries(const recd_format *f, const uint8_t *data, size_t len,
                         const uint8_t *index, size_t ilen, bool probes, recd_seek_index_status *st)
{
    memset(st, 0, sizeof *st);
    if (!recd_seek_index_wanted(f))
        return -ENOTSUP;
    st->why = index ? header_problem(f, data, len, index, ilen) : "no index";
    if (st->why)
        return 0;
    st->header_ok = true;
    size_t body = ilen - RECD_SEEK_INDEX_HEADER_SIZE;
    st->entries = body / RECD_SEEK_INDEX_ENTRY_SIZE;
    const uint8_t *e = index + RECD_SEEK_INDEX_HEADER_SIZE;
    recd_seek_point p;
    for (; st->valid < st->entries; st->valid++, e += RECD_SEEK_INDEX_ENTRY_SIZE) {
        if (!entry_ok(e, data, len, probes, &p))
            break;
        if (st->valid > 0 && (p.offset < st->last.offset || p.time < st->last.time))
            break; /* points only go forward */
        st->last = p;
    }
    st->tail_garbage = st->valid < st->entries || body % RECD_SEEK_INDEX_ENTRY_SIZE != 0;
    return 0;
}

int recd_seek_index_check(const recd_format *f, const uint8_t *data, size_t len,
                          const uint8_t *index, size_t ilen, recd_seek_index_status *st)
{
    return check_entries(f, data, len, index, ilen, true, st);
}

/* How many of the first n entries have a time <= t, by bisection (entries are in time order). */
static size_t entries_up_to(const uint8_t *e, size_t n, int64_t t)
{
    size_t lo = 0, hi = n; /* the answer is below hi */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)ld_le64(e + mid * RECD_SEEK_INDEX_ENTRY_SIZE) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The valid entry with the greatest time <= t. */
static bool index_lookup(const uint8_t *index, size_t valid, const uint8_t *data, size_t len,
                         int64_t t, recd_seek_point *out)
{
    const uint8_t *e = index + RECD_SEEK_INDEX_HEADER_SIZE;
    size_t lo = entries_up_to(e, valid, t);
    if (lo == 0)
        return false;
    return entry_valid(e + (lo - 1) * RECD_SEEK_INDEX_ENTRY_SIZE, data, len, out);
}

typedef struct seek_walk {
    int64_t time;
    recd_seek_point best;
    bool found;
} seek_walk;

static int walk_point(void *ctx, const recd_seek_point *p)
{
    seek_walk *w = ctx;
    if (w->found && p->time > w->time)
        return 1; /* past it: the previous point is the answer */
    w->best = *p;
    w->found = true;
    return 0;
}

/* The entry recd_format_seek's bisection over the valid prefix finds, checking only the entries
 * up to it and the one after it (not the whole index, as the prefix's length needs): true when
 * entries [0, c] are valid and ordered, c's time is <= t and its probe matches, and entry c + 1
 * is absent, not valid (*last: c ends the prefix) or later than t. False: the whole check
 * decides. */
static bool lookup_lazily(const recd_format *f, const uint8_t *buf, size_t len,
                          const uint8_t *index, size_t ilen, int64_t t, recd_seek_point *out,
                          bool *last)
{
    if (!index || header_problem(f, buf, len, index, ilen))
        return false;
    size_t n = (ilen - RECD_SEEK_INDEX_HEADER_SIZE) / RECD_SEEK_INDEX_ENTRY_SIZE;
    const uint8_t *e = index + RECD_SEEK_INDEX_HEADER_SIZE;
    size_t lo = entries_up_to(e, n, t);
    if (lo == 0)
        return false;
    recd_seek_point p, prev = {0};
    for (size_t k = 0; k < lo; k++, prev = p)
        if (!entry_ok(e + k * RECD_SEEK_INDEX_ENTRY_SIZE, buf, len, false, &p) ||
            (k > 0 && (p.offset < prev.offset || p.time < prev.time)))
            return false;
    if (prev.time > t || !entry_valid(e + (lo - 1) * RECD_SEEK_INDEX_ENTRY_SIZE, buf, len, out))
        return false;
    *last = lo == n || !entry_ok(e + lo * RECD_SEEK_INDEX_ENTRY_SIZE, buf, len, false, &p) ||
            p.offset < prev.offset || p.time < prev.time;
    return *last || p.time > t;
}

int recd_format_seek(const recd_format *f, const uint8_t *buf, size_t len, const uint8_t *index,
                     size_t index_len, int64_t time, recd_seek_point *out)
{
    if (!f || !f->seek)
        return -ENOTSUP;
    if (f->seek->direct)
        return f->seek->direct(buf, len, time, out);
    seek_walk w = {time, {0}, false};
    bool last;
    if (recd_seek_index_wanted(f) &&
        lookup_lazily(f, buf, len, index, index_len, time, &w.best, &last)) {
        if (!last && f->seek->index_step == 0) {
            *out = w.best; /* every point is indexed and a later one is past time */
            return 0;
        }
        w.found = true;
        int rc = f->seek->scan(buf, len, &w.best, walk_point, &w);
        if (rc < 0)
            return rc;
        *out = w.best;
        return 0;
    }
    recd_seek_index_status st;
    check_entries(f, buf, len, index, index_len, false, &st); /* probes: the entry used only */
    bool looked_up = st.valid > 0 && index_lookup(index, st.valid, buf, len, time, &w.best);
    if (st.valid > 0 && !looked_up) { /* its probe failed: the prefix ends earlier */
        check_entries(f, buf, len, index, index_len, true, &st);
        looked_up = st.valid > 0 && index_lookup(index, st.valid, buf, len, time, &w.best);
    }
    if (looked_up) {
        w.found = true;
        bool later_entry = w.best.offset != st.last.offset || w.best.time != st.last.time;
        if (later_entry && f->seek->index_step == 0) {
            *out = w.best; /* every point is indexed and a later one is past time */
            return 0;
        }
    }
    int rc = f->seek->scan(buf, len, w.found ? &w.best : NULL, walk_point, &w);
    if (rc < 0)
        return rc;
    if (!w.found)
        return -EBADMSG;
    *out = w.best;
    return 0;
}

typedef struct index_build {
    const uint8_t *data;
    recd_buf *out;
    int64_t step;
    bool any;
    int64_t last;
} index_build;

static int build_point(void *ctx, const recd_seek_point *p)
{
    index_build *b = ctx;
    if (b->any && p->time - b->last < b->step)
        return 0;
    b->any = true;
    b->last = p->time;
    uint8_t e[RECD_SEEK_INDEX_ENTRY_SIZE];
    recd_seek_index_entry(p, b->data + p->offset, e);
    return recd_buf_append(b->out, e, sizeof e);
}

int recd_format_index_build(const recd_format *f, const uint8_t *buf, size_t len, recd_buf *out)
{
    if (!recd_seek_index_wanted(f))
        return -ENOTSUP;
    int rc = recd_seek_index_header(f, buf, len, out);
    if (rc == -EAGAIN)
        return -EBADMSG;
    index_build b = {buf, out, f->seek->index_step, false, 0};
    return rc < 0 ? rc : f->seek->scan(buf, len, NULL, build_point, &b);
}

typedef struct beyond_count {
    bool have_last;
    int64_t last, step;
    size_t n;
} beyond_count;

static int count_point(void *ctx, const recd_seek_point *p)
{
    beyond_count *b = ctx;
    if (b->have_last && p->time - b->last < b->step)
        return 0; /* a sparse index keeps one point a step */
    b->n++;
    return 1; /* one is enough: the index misses points */
}

bool recd_seek_index_stale(const recd_format *f, const uint8_t *data, size_t len,
                           const uint8_t *index, size_t ilen)
{
    recd_seek_index_status st;
    if (recd_seek_index_check(f, data, len, index, ilen, &st) < 0)
        return false;
    if (!st.header_ok || st.tail_garbage)
        return true;
    beyond_count b = {st.valid > 0, st.last.time, f->seek->index_step, 0};
    int rc = f->seek->scan(data, len, st.valid ? &st.last : NULL, count_point, &b);
    return rc < 0 || b.n > 0;
}

int recd_format__export_range(const recd_format *f, const uint8_t *buf, size_t len,
                              const uint8_t *index, size_t index_len, const recd_seek_read *r,
                              recd_msg_fn on_msg, void *ctx, char *err, size_t errlen)
{
    if (!f || !f->seek || !f->seek->export_from)
        return 0;
    recd_seek_point p;
    int rc = recd_format_seek(f, buf, len, index, index_len, r->from, &p);
    if (rc < 0)
        return rc == -ENOMEM ? rc : 0; /* nothing to start at: the whole file says why */
    rc = f->seek->export_from(buf, len, &p, r, on_msg, ctx, err, errlen);
    return rc < 0 ? rc : rc == RECD_SEEK_READ_WHOLE ? 0 : 1;
}

size_t recd_format__index_spread(const recd_format *f, const uint8_t *buf, size_t len,
                                 const uint8_t *index, size_t index_len, int64_t from, int64_t to,
                                 recd_seek_point *out, size_t max, size_t *in_range)
{
    recd_seek_index_status st;
    *in_range = 0;
    if (!max || check_entries(f, buf, len, index, index_len, false, &st) < 0 || st.valid == 0)
        return 0;
    const uint8_t *e = index + RECD_SEEK_INDEX_HEADER_SIZE;
    size_t first = 0, end = st.valid; /* entries [first, end) lie in [from, to] */
    while (first < end && (int64_t)ld_le64(e + first * RECD_SEEK_INDEX_ENTRY_SIZE) < from)
        first++;
    while (end > first && to >= 0 && (int64_t)ld_le64(e + (end - 1) * RECD_SEEK_INDEX_ENTRY_SIZE) > to)
        end--;
    *in_range = end - first;
    /* The first entry of each start offset: two picks in one gzip member would decode it twice. */
    size_t *starts = malloc((end - first + 1) * sizeof *starts), ns = 0;
    if (!starts)
        return 0;
    for (size_t k = first; k < end; k++)
        if (ns == 0 || ld_le64(e + k * RECD_SEEK_INDEX_ENTRY_SIZE + 8) !=
                           ld_le64(e + starts[ns - 1] * RECD_SEEK_INDEX_ENTRY_SIZE + 8))
            starts[ns++] = k;
    size_t n = 0;
    for (size_t k = 0; k < max && k < ns; k++) {
        size_t at = starts[ns <= max ? k : k * (ns - 1) / (max > 1 ? max - 1 : 1)];
        if (entry_valid(e + at * RECD_SEEK_INDEX_ENTRY_SIZE, buf, len, &out[n]))
            n++; /* an entry whose data moved is left out: the spread is a sample, not a cut */
    }
    free(starts);
    return n;
}

typedef struct grow_ctx {
    const recd_format *f;
    const uint8_t *data;
    recd_seek_index_writer *w;
    recd_buf *out;
} grow_ctx;

int recd_seek_index_add(const recd_format *f, recd_seek_index_writer *w, const recd_seek_point *p,
                        const uint8_t *probe, recd_buf *out)
{
    w->last = *p;
    w->have_last = true;
    if (w->kept_any && p->time - w->last_kept < f->seek->index_step)
        return 0;
    uint8_t e[RECD_SEEK_INDEX_ENTRY_SIZE];
    recd_seek_index_entry(p, probe, e);
    int rc = recd_buf_append(out, e, sizeof e);
    if (rc == 0) {
        w->kept_any = true;
        w->last_kept = p->time;
        w->entries++;
    }
    return rc;
}

static int grow_point(void *ctx, const recd_seek_point *p)
{
    grow_ctx *g = ctx;
    return recd_seek_index_add(g->f, g->w, p, g->data + p->offset, g->out);
}

int recd_seek_index_grow(const recd_format *f, const uint8_t *data, size_t len,
                         recd_seek_index_writer *w, recd_buf *out)
{
    if (!recd_seek_index_wanted(f))
        return -ENOTSUP;
    if (!w->header_done) {
        int rc = recd_seek_index_header(f, data, len, out);
        if (rc < 0)
            return rc;
        w->header_done = true;
    }
    grow_ctx g = {f, data, w, out};
    int rc = f->seek->scan(data, len, w->have_last ? &w->last : NULL, grow_point, &g);
    return rc == -EBADMSG ? 0 : rc; /* nothing to index yet */
}
