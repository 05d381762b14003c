/* SPDX-License-Identifier: MIT */
/* Writer jobs on the libuv thread pool: batches in, file bytes out (see writer.h). */
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seek_sidecar.h"
#include "support/log.h"

typedef struct writer_seg {
    size_t len;
    bool member;      /* compress before writing */
    /* Its seek points: the batch's next npoints (a member's: writer_put_member_points; in plain
     * bytes: writer_put_point, each offset counted from the segment's first byte) */
    uint32_t npoints;
    size_t out_at;    /* where the job rendered it, from the batch's first byte */
} writer_seg;

#define WRITER_HINT_MAX (1u << 20)
#define WRITER_NICE 10

struct writer_batch {
    writer_part *part;
    recd_buf data;
    writer_seg *segs;
    uint32_t nsegs, capsegs;
    bool has_members;
    bool end;
    bool data_done; /* its bytes are in the file: a retry only has the part's end left to do */
    writer_batch *next;
    uint8_t *header; /* patched header written at offset 0 on end */
    size_t header_len;
    /* Its restart point (writer_set_restart), or NULL: restart_plain_len plain bytes, then a
     * member body, in one buffer. */
    recd_buf restart;
    size_t restart_plain_len;
    uint64_t restart_units;
    writer_sidecar *progress; /* writer_set_progress(), or NULL (owned) */
    recd_seek_point *points;  /* its segments' seek points, in order (file offsets: the job) */
    uint32_t npoints, cappoints;
    bool points_lost;         /* a point found no memory: the part's index gives up */
};

typedef struct writer_job {
    uv_work_t req;
    writer_stage *stage;
    writer_queue *queue;
    writer_batch *batches;
    writer_done_fn done;
    void *ctx;
    writer_batch *stopped_at; /* the batch a passing error stopped the job at, or NULL */
    bool fsync;               /* flush.fsync when the job was kicked */
    writer_result result;
} writer_job;

int writer_stage_init(writer_stage *w, uv_loop_t *loop, int root_fd)
{
    memset(w, 0, sizeof *w);
    w->loop = loop;
    w->root_fd = root_fd;
    w->ops = &writer_file_ops_real;
    return uv_mutex_init(&w->lock);
}

static int root_of(const writer_stage *w) { return __atomic_load_n(&w->root_fd, __ATOMIC_ACQUIRE); }

int writer_stage_swap_root(writer_stage *w, int root_fd)
{
    return __atomic_exchange_n(&w->root_fd, root_fd, __ATOMIC_ACQ_REL);
}

void writer_stage_free(writer_stage *w)
{
    for (size_t i = 0; i < w->nidle; i++)
        recd_gzip_deflater_free(w->idle[i]);
    w->nidle = 0;
    buffer_pool_free(&w->buffers);
    uv_mutex_destroy(&w->lock);
}

writer_part *writer_part_new(const char *rel, int gzip_level)
{
    writer_part *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->name = strdup(rel);
    if (!p->name) {
        free(p);
        return NULL;
    }
    p->gzip_level = gzip_level;
    return p;
}

int writer_part_set_preamble(writer_part *p, const void *data, size_t len)
{
    uint8_t *copy = len ? malloc(len) : NULL;
    if (len && !copy)
        return -ENOMEM;
    if (len)
        memcpy(copy, data, len);
    free(p->preamble);
    p->preamble = copy;
    p->preamble_len = (uint32_t)len;
    return 0;
}

static void part_free(writer_part *p)
{
    if (!p)
        return;
    if (p->sidecar)
        p->sidecar->free(p->sidecar);
    seek_sidecar_free(p->seek);
    free(p->progress_name);
    free(p->preamble);
    free(p->name);
    free(p);
}

static void batch_free(buffer_pool *pool, writer_batch *b)
{
    if (pool)
        buffer_pool_release(pool, &b->data);
    else
        recd_buf_free(&b->data);
    free(b->segs);
    free(b->points);
    free(b->header);
    recd_buf_free(&b->restart);
    if (b->progress)
        b->progress->free(b->progress);
    free(b);
}

static void queue_push(writer_queue *q, writer_batch *b)
{
    b->next = NULL;
    if (q->tail)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
}

/* Counts the bytes appended through the cursor into the open batch and its last segment (which
 * the cursor extends), and closes the cursor. */
static void commit_cursor(writer_queue *q)
{
    if (!q->cur)
        return;
    writer_batch *b = q->open;
    size_t n = (size_t)(q->cur - (b->data.data + b->data.len));
    b->data.len += n;
    b->segs[b->nsegs - 1].len += n;
    q->cur = q->end = NULL;
    q->cur_part = NULL;
}

void writer_seal(writer_queue *q)
{
    commit_cursor(q);
    if (!q->open)
        return;
    size_t len = q->open->data.len;
    if (len) /* a batch that only ends a part says nothing about sizes */
        q->size_hint = len > WRITER_HINT_MAX ? WRITER_HINT_MAX : (uint32_t)len;
    q->open->part->sealed += len;
    q->open->part->packed |= q->open->has_members;
    queue_push(q, q->open);
    q->open = NULL;
    q->open_bytes = 0;
}

size_t writer_open_bytes(const writer_queue *q) { return q->open_bytes; }

bool writer_idle(const writer_queue *q) { return !q->open && !q->head && !q->busy; }

/* The open batch for part p, starting a new one when the part changes. */
static writer_batch *open_batch(writer_stage *w, writer_queue *q, writer_part *p)
{
    commit_cursor(q);
    if (q->open && q->open->part != p)
        writer_seal(q);
    if (w)
        q->pool = &w->buffers;
    if (!q->open) {
        q->open = calloc(1, sizeof *q->open);
        if (!q->open)
            return NULL;
        q->open->part = p;
        /* Batches of a session tend to the same size: growing each from nothing would realloc
         * and copy it a dozen times. Best effort, bounded (see buffer_pool_prepare()): put()
         * grows it further when needed. */
        if (w && q->size_hint)
            buffer_pool_prepare(&w->buffers, &q->open->data, q->size_hint + q->size_hint / 8 + 64);
    }
    return q->open;
}

/* Appends len bytes (len > 0) to the open batch of q for p and returns where they go. */
static uint8_t *append(writer_stage *w, writer_queue *q, writer_part *p, size_t len, bool member)
{
    writer_batch *b = open_batch(w, q, p);
    if (!b)
        return NULL;
    writer_seg *last = b->nsegs ? &b->segs[b->nsegs - 1] : NULL;
    if (!last || last->member || member) {
        if (b->nsegs == b->capsegs) {
            size_t cap = b->capsegs ? b->capsegs * 2 : 4;
            writer_seg *s = realloc(b->segs, cap * sizeof *s);
            if (!s)
                return NULL;
            b->segs = s;
            b->capsegs = (uint32_t)cap;
        }
        last = &b->segs[b->nsegs];
        last->len = 0;
        last->member = member;
        last->npoints = 0;
    }
    if (buffer_pool_reserve(&w->buffers, &b->data, len) < 0)
        return NULL;
    uint8_t *at = b->data.data + b->data.len;
    b->data.len += len;
    q->open_bytes += len;
    if (last == &b->segs[b->nsegs])
        b->nsegs++;
    last->len += len;
    b->has_members |= member;
    return at;
}

/* A cut at cut (a file offset) of b, a single plain segment starting at file offset start, moved
 * to the first point whose probe bytes it would split: the job reads a point's probe in its own
 * batch. */
static uint64_t cut_before_probes(const writer_batch *b, uint64_t start, uint64_t cut)
{
    for (uint32_t i = 0; i < b->npoints; i++) {
        uint64_t at = start + b->points[i].offset;
        if (at < cut && at + RECD_SEEK_INDEX_PROBE_SIZE > cut)
            return at;
    }
    return cut;
}

void writer_seal_aligned(writer_stage *w, writer_queue *q)
{
    commit_cursor(q);
    writer_batch *b = q->open;
    /* Compressed bytes have no offset known here; literal ones fill a single segment. */
    if (!b || b->has_members || b->part->packed || b->nsegs != 1) {
        writer_seal(q);
        return;
    }
    uint64_t start = b->part->sealed, end = start + b->data.len;
    uint64_t cut = cut_before_probes(b, start, end & ~(uint64_t)(WRITER_ALIGN - 1));
    if (cut <= start || cut == end) {
        writer_seal(q);
        return;
    }
    size_t tail = (size_t)(end - cut), keep = (size_t)(cut - start);
    /* The points in the cut bytes go with them, in an array taken before anything moves. */
    uint32_t kept = b->npoints;
    while (kept && b->points[kept - 1].offset >= keep)
        kept--;
    uint32_t moved = b->npoints - kept;
    recd_seek_point *points = moved ? malloc(moved * sizeof *points) : NULL;
    if (moved && !points) {
        writer_seal(q);
        return;
    }
    b->data.len = keep;
    b->segs[0].len = keep;
    b->npoints = b->segs[0].npoints = kept;
    writer_seal(q);
    /* Sealed batches wait in the queue until the next kick, so the cut bytes are still in b's
     * buffer to start the next batch with. */
    uint8_t *at = append(w, q, b->part, tail, false);
    if (at) {
        memcpy(at, b->data.data + keep, tail);
        writer_batch *next = q->open; /* new: its only segment holds the cut bytes */
        for (uint32_t i = 0; i < moved; i++) {
            points[i] = b->points[kept + i];
            points[i].offset -= keep;
        }
        next->points = points;
        next->npoints = next->cappoints = next->segs[0].npoints = moved;
        return;
    }
    free(points);
    b->data.len += tail; /* no memory for them: b keeps them after all */
    b->segs[0].len += tail;
    b->npoints = b->segs[0].npoints = kept + moved;
    b->part->sealed += tail;
}

/* The next append's cache lines, fetched now for writing: with many sessions interleaved, appends
 * to one batch are too far apart for the hardware prefetcher to follow, and a store that misses
 * holds up every later load that needs store forwarding (docs/performance.md). */
static void prefetch_next(const uint8_t *next, const uint8_t *end)
{
    if (end - next >= 2 * 64) {
        __builtin_prefetch(next + 64, 1);
        __builtin_prefetch(next + 127, 1);
    }
}

static int put(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len,
               bool member)
{
    if (len == 0)
        return open_batch(w, q, p) ? 0 : -ENOMEM;
    uint8_t *at = append(w, q, p, len, member);
    if (!at)
        return -ENOMEM;
    memcpy(at, data, len);
    return 0;
}

int writer_put(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len)
{
    return put(w, q, p, data, len, false);
}

uint8_t *writer_reserve(writer_stage *w, writer_queue *q, writer_part *p, size_t len)
{
    if (len == 0)
        return NULL;
    uint8_t *at;
    if (q->cur && q->cur_part == p && (size_t)(q->end - q->cur) >= len) {
        at = q->cur; /* the common case: the session's own cache line, then the data */
        q->cur += len;
        q->open_bytes += len;
    } else {
        if (!(at = append(w, q, p, len, false)))
            return NULL;
        writer_batch *b = q->open;
        q->cur = b->data.data + b->data.len; /* room after this append, in the same segment */
        q->end = b->data.data + b->data.cap;
        q->cur_part = p;
    }
    prefetch_next(q->cur, q->end);
    return at;
}

int writer_put_member(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len)
{
    return put(w, q, p, data, len, true);
}

/* n seek points for b's last segment; without memory (points NULL included) the part's index
 * is given up instead. */
static void add_points(writer_batch *b, const recd_seek_point *points, size_t n)
{
    if (!points) {
        b->points_lost = true;
        return;
    }
    if (b->npoints + n > b->cappoints) {
        size_t cap = b->cappoints ? b->cappoints : 8;
        while (cap < b->npoints + n)
            cap *= 2;
        recd_seek_point *np = cap <= UINT32_MAX ? realloc(b->points, cap * sizeof *np) : NULL;
        if (!np) {
            b->points_lost = true;
            return;
        }
        b->points = np;
        b->cappoints = (uint32_t)cap;
    }
    memcpy(b->points + b->npoints, points, n * sizeof *points);
    b->npoints += (uint32_t)n;
    b->segs[b->nsegs - 1].npoints += (uint32_t)n;
}

/* Only a part whose index is fed has a use for points handed over. */
static bool takes_points(const writer_part *p) { return p->seek && p->seek->fed; }

int writer_put_member_points(writer_stage *w, writer_queue *q, writer_part *p, const void *data,
                             size_t len, const recd_seek_point *points, size_t n)
{
    int rc = put(w, q, p, data, len, true);
    if (rc < 0 || len == 0 || n == 0 || !takes_points(p))
        return rc;
    add_points(q->open, points, n); /* the member is its last segment */
    return 0;
}

void writer_put_point(writer_queue *q, const writer_part *p, const uint8_t *at,
                      const recd_seek_point *pt)
{
    writer_batch *b = q->open;
    if (!takes_points(p) || !b || b->part != p || !b->nsegs)
        return;
    writer_seg *last = &b->segs[b->nsegs - 1];
    /* The bytes handed out so far: the cursor's too, which extend the last segment. */
    const uint8_t *end = q->cur && q->cur_part == p ? q->cur : b->data.data + b->data.len;
    const uint8_t *seg = b->data.data + (b->data.len - last->len);
    if (last->member || at < seg || at + RECD_SEEK_INDEX_PROBE_SIZE > end) {
        b->points_lost = true; /* not the bytes just handed out: a caller's mistake */
        return;
    }
    recd_seek_point in_seg = *pt;
    in_seg.offset = (uint64_t)(at - seg);
    add_points(b, &in_seg, 1);
}

int writer_set_restart(writer_stage *w, writer_queue *q, writer_part *p, recd_buf *plain,
                       recd_buf *member, uint64_t units_dropped)
{
    commit_cursor(q);
    if (q->open && q->open->part == p && (q->open->data.len || q->open->restart.len))
        return 0;
    writer_batch *b = open_batch(w, q, p);
    if (!b)
        return -ENOMEM;
    recd_buf all = *plain;
    if (recd_buf_append(&all, member->data, member->len) < 0)
        return -ENOMEM;
    b->restart = all;
    b->restart_plain_len = plain->len;
    b->restart_units = units_dropped;
    memset(plain, 0, sizeof *plain);
    recd_buf_free(member);
    return 1;
}

void writer_part_set_rebase(writer_part *p, writer_rebase_fn rebase) { p->rebase = rebase; }

void writer_part_on_named(writer_part *p, void (*fn)(void *ctx, uint32_t tag, const char *rel,
                                                     bool final),
                          void *ctx, uint32_t tag)
{
    p->on_named = fn;
    p->on_named_ctx = ctx;
    p->on_named_tag = tag;
}

void writer_part_set_seek_format(writer_part *p, const recd_format *f)
{
    seek_sidecar_free(p->seek);
    p->seek = seek_sidecar_new(f); /* NULL without memory: the part has no index, nothing else */
}

void writer_part_feed_seek(writer_part *p) { seek_sidecar_set_fed(p->seek); }

void writer_part_set_sidecar(writer_part *p, writer_sidecar *sc)
{
    if (p->sidecar && p->sidecar != sc)
        p->sidecar->free(p->sidecar);
    p->sidecar = sc;
}

void writer_set_progress(writer_queue *q, writer_part *p, writer_sidecar *sc)
{
    commit_cursor(q);
    writer_batch *b = q->open;
    if (!b || b->part != p || !b->data.len) {
        sc->free(sc);
        return;
    }
    if (b->progress)
        b->progress->free(b->progress);
    b->progress = sc;
}

int writer_end_part(writer_queue *q, writer_part *p, uint8_t *header, size_t header_len)
{
    writer_batch *b = open_batch(NULL, q, p);
    if (!b)
        return -ENOMEM;
    b->end = true;
    b->header = header;
    b->header_len = header ? header_len : 0;
    writer_seal(q);
    return 0;
}

/* ---- the job (thread pool) ------------------------------------------------------------------ */

/* The part file the job is working on: lib's recd_part, rebuilt from a writer_part. */
typedef struct open_part {
    writer_part *owner;
    recd_part file;
    bool dirty; /* appended to by this job and not synced */
} open_part;

static recd_gzip_deflater *deflater_take(writer_stage *w)
{
    recd_gzip_deflater *d = NULL;
    uv_mutex_lock(&w->lock);
    if (w->nidle)
        d = w->idle[--w->nidle];
    uv_mutex_unlock(&w->lock);
    return d ? d : recd_gzip_deflater_new();
}

static void deflater_give(writer_stage *w, recd_gzip_deflater *d)
{
    if (!d)
        return;
    uv_mutex_lock(&w->lock);
    if (w->nidle < WRITER_POOL_MAX) {
        w->idle[w->nidle++] = d;
        d = NULL;
    }
    uv_mutex_unlock(&w->lock);
    recd_gzip_deflater_free(d);
}

/* Writes back what the job learnt about its current part and closes its file. */
static void part_release(const writer_file_ops *ops, open_part *op)
{
    writer_part *p = op->owner;
    if (!p)
        return;
    ops->close_fd(&op->file);
    if (p->created && strcmp(p->name, op->file.name) != 0) {
        char *name = strdup(op->file.name);
        if (name) {
            free(p->name);
            p->name = name;
            p->renamed = true;
        }
    }
    p->size = op->file.size;
    p->bytes_written = op->file.bytes_written;
    p->dev = op->file.dev;
    p->ino = op->file.ino;
    p->finalized = op->file.finalized;
    op->owner = NULL;
}

static void part_acquire(writer_stage *w, open_part *op, writer_part *p)
{
    if (op->owner == p)
        return;
    part_release(w->ops, op);
    memset(&op->file, 0, sizeof op->file);
    op->file.root_fd = root_of(w);
    op->dirty = false;
    op->file.fd = -1;
    snprintf(op->file.name, sizeof op->file.name, "%s", p->name);
    op->file.size = p->size;
    op->file.bytes_written = p->bytes_written;
    op->file.dev = p->dev;
    op->file.ino = p->ino;
    op->file.finalized = p->finalized;
    op->owner = p;
}

/* Literal bytes copied, member bodies compressed, in order, into out. */
static int render(writer_job *j, writer_batch *b, recd_gzip_deflater **d, recd_buf *out)
{
    size_t off = 0;
    int rc = 0;
    out->len = 0;
    for (size_t i = 0; rc == 0 && i < b->nsegs; i++) {
        writer_seg *s = &b->segs[i];
        s->out_at = out->len;
        if (s->member) {
            if (!*d)
                *d = deflater_take(j->stage);
            size_t before = out->len;
            rc = recd_gzip_member_write_with(*d, b->part->gzip_compressor, b->part->gzip_level,
                                             b->data.data + off, s->len, out);
            j->result.members_in += s->len;
            j->result.members_out += out->len - before;
        } else {
            rc = recd_buf_append(out, b->data.data + off, s->len);
        }
        off += s->len;
    }
    return rc;
}

/* Errors that may pass while recd waits: the disk fills and empties, a filesystem is remounted,
 * a directory is made again. Anything else (the file was replaced, a name is too long) will
 * fail the same way at every try. */
static bool may_pass(int rc)
{
    switch (-rc) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EROFS:
    case EACCES:
    case EPERM:
    case ENOENT:
    case EAGAIN:
    case EINTR:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case EBUSY:
        return true;
    default:
        return false;
    }
}

static const char *part_label(const open_part *op)
{
    return op->file.name[0] ? op->file.name : op->owner->name;
}

/* The part's file has vanished (the output root or the .part was removed): what was written to
 * it is gone, but the bytes still queued are not. The part starts again as a new file, its
 * preamble first, and the batch is retried there. */
static void start_part_again(writer_job *j, open_part *op, const char *why)
{
    writer_part *p = op->owner;
    log_err("writer: '%s.part' has vanished (%s): what was written to it (%llu bytes) is gone; "
            "the bytes still queued for it go to a new file",
            op->file.name, why, (unsigned long long)op->file.size);
    j->stage->ops->close_fd(&op->file);
    if (p->progress_name) { /* it described the vanished file */
        j->stage->ops->remove_text(root_of(j->stage), p->progress_name);
        free(p->progress_name);
        p->progress_name = NULL;
    }
    p->preamble_due = op->file.size > 0; /* an empty file lacked even the batch that brings it */
    op->owner = NULL; /* forget the vanished file: nothing of it is written back */
    op->dirty = false;
    p->created = false;
    p->size = p->bytes_written = p->dev = p->ino = 0;
}

/* A write of batch b's bytes (queued bytes) failed: the job stops here to try again later (1),
 * or the part is broken and the bytes are lost (0). A part whose file has vanished (ENOENT after
 * it was created) cannot be written again: with a preamble or b's restart point, or when nothing
 * of it was written yet (b brings the file's start), it starts again in a new file (1); otherwise
 * it is broken. */
static int write_failed(writer_job *j, open_part *op, const writer_batch *b, int rc,
                        const char *what, uint64_t bytes)
{
    j->result.failures++;
    const char *why = op->file.error[0] ? op->file.error : recd_strerror(rc);
    bool can_start_again = op->owner->preamble || b->restart.len || op->file.size == 0;
    if (rc == -ENOENT && op->owner->created && can_start_again && bytes) {
        j->result.retry_error = rc;
        j->result.vanished++;
        start_part_again(j, op, why);
        return 1;
    }
    if (may_pass(rc) && !(rc == -ENOENT && op->owner->created)) {
        j->result.retry_error = rc;
        log_err("writer: %s '%s': %s (kept, retrying)", what, part_label(op), why);
        return 1;
    }
    op->owner->broken = true;
    j->result.lost += bytes;
    log_err("writer: %s '%s': %s", what, part_label(op), why);
    return 0;
}

/* The start of a part's new file after its old one vanished: b's restart point (a header and a
 * full state, compressed here) or else the part's preamble. */
static int start_file(writer_job *j, const writer_batch *b, open_part *op, recd_gzip_deflater **d,
                      recd_buf *out)
{
    writer_part *p = op->owner;
    if (!b->restart.len) {
        p->units_dropped = 0;
        int rc = j->stage->ops->append(&op->file, p->preamble, p->preamble_len);
        if (rc == 0)
            j->result.written += p->preamble_len;
        return rc;
    }
    out->len = 0;
    int rc = recd_buf_append(out, b->restart.data, b->restart_plain_len);
    if (rc == 0) {
        if (!*d)
            *d = deflater_take(j->stage);
        rc = *d ? recd_gzip_member_write_with(*d, p->gzip_compressor, p->gzip_level,
                                              b->restart.data + b->restart_plain_len,
                                              b->restart.len - b->restart_plain_len, out)
                : -ENOMEM;
    }
    if (rc == 0)
        rc = j->stage->ops->append(&op->file, out->data, out->len);
    if (rc < 0)
        return rc;
    j->result.written += out->len;
    p->units_dropped = b->restart_units;
    return 0;
}

/* b is in the file from file_at on, as written (rendered when it has members): its seek points,
 * in the units of the file now written (which lacks the part's first units_dropped after a
 * restart), go to the part's fed seek index. */
static void feed_points(writer_batch *b, writer_part *p, uint64_t file_at, const uint8_t *written)
{
    if (b->points_lost)
        seek_sidecar_lose_point(p->seek);
    const recd_seek_point *pt = b->points;
    int64_t dropped = (int64_t)p->units_dropped;
    size_t seg_at = 0; /* where segment i was written, from the batch's first byte */
    for (uint32_t i = 0; i < b->nsegs && b->npoints; i++) {
        const writer_seg *s = &b->segs[i];
        if (b->has_members)
            seg_at = s->out_at;
        for (uint32_t k = 0; k < s->npoints; k++) {
            recd_seek_point q = pt[k];
            if (q.time < dropped || q.aux < dropped)
                continue; /* before the restart: not in this file */
            q.time -= dropped;
            q.aux -= dropped;
            size_t at = seg_at + (s->member ? 0 : (size_t)q.offset);
            q.offset = file_at + at;
            if (s->member) /* a member is written whole */
                seek_sidecar_point(p->seek, &q, written + at);
            else /* plain bytes: the unit may go on in the next batch */
                seek_sidecar_point_started(p->seek, &q, written + at);
        }
        pt += s->npoints;
        seg_at += s->len; /* plain bytes are written as queued */
    }
}

/* 1 when the job must stop at b (the write may succeed later), else 0. */
static int write_batch(writer_job *j, writer_batch *b, open_part *op, recd_gzip_deflater **d,
                       recd_buf *out)
{
    writer_part *p = b->part;
    const writer_file_ops *ops = j->stage->ops;
    if (p->broken) {
        j->result.lost += b->data.len;
        return 0;
    }
    if (!b->data.len || b->data_done)
        return 0;
    part_acquire(j->stage, op, p);
    op->file.error[0] = '\0';
    int rc;
    if (!p->created) {
        rc = ops->create(&op->file, op->file.root_fd, p->name);
        if (rc < 0)
            return write_failed(j, op, b, rc, "cannot create", b->data.len);
        p->created = true;
    }
    if (p->preamble_due) {
        seek_sidecar_restart(p->seek);
        uint64_t file_at = op->file.size;
        rc = start_file(j, b, op, d, out);
        if (rc < 0)
            return write_failed(j, op, b, rc, "cannot start again", b->data.len);
        p->preamble_due = false;
        op->dirty = true;
        if (b->restart.len) { /* its member holds the file's first keyframe */
            recd_seek_point first = {0, file_at + b->restart_plain_len, 0};
            seek_sidecar_point(p->seek, &first, out->data + b->restart_plain_len);
        }
    }
    const void *src = b->data.data;
    size_t n = b->data.len;
    if (b->has_members) {
        uint64_t in = j->result.members_in, out_bytes = j->result.members_out;
        rc = render(j, b, d, out);
        if (rc < 0) {
            j->result.members_in = in; /* compressed again by the retry */
            j->result.members_out = out_bytes;
            return write_failed(j, op, b, rc, "cannot compress for", b->data.len);
        }
        src = out->data;
        n = out->len;
    }
    uint64_t file_at = op->file.size;
    rc = ops->append(&op->file, src, n);
    if (rc < 0)
        return write_failed(j, op, b, rc, "cannot append to", b->data.len);
    if (b->npoints || b->points_lost)
        feed_points(b, p, file_at, src);
    b->data_done = true;
    op->dirty = true;
    j->result.written += n;
    seek_sidecar_update(p->seek, op->file.root_fd, &op->file, false); /* after its data */
    return 0;
}

/* After the part's rename: its sidecar as final name + suffix. A failure is logged and counted,
 * never retried (the part itself is complete), and leaves no sidecar behind. */
static void store_sidecar(writer_job *j, writer_part *p, const char *final_rel)
{
    writer_sidecar *sc = p->sidecar;
    if (!sc)
        return;
    char rel[RECD_PATH_MAX + 16];
    int n = snprintf(rel, sizeof rel, "%s%s", final_rel, sc->suffix);
    int rc = n < 0 || (size_t)n >= sizeof rel ? -ENAMETOOLONG : 0;
    char *text = rc == 0 ? sc->render(sc, final_rel) : NULL;
    if (rc == 0 && !text)
        rc = -ENOMEM;
    if (rc == 0)
        rc = j->stage->ops->store_text(root_of(j->stage), rel, text, j->fsync);
    free(text);
    if (rc < 0) {
        j->result.sidecar_failures++;
        log_warn("writer: cannot store '%s%s' beside the finalized part: %s", final_rel,
                 sc->suffix, recd_strerror(rc));
        return;
    }
    j->result.sidecars++;
}

/* The part's in-progress sidecar is no longer wanted: the part was finalized. A failure leaves a
 * stale one, which the next start's recovery removes (a finalized part beside it). */
static void remove_progress(writer_job *j, writer_part *p)
{
    if (!p->progress_name)
        return;
    int rc = j->stage->ops->remove_text(root_of(j->stage), p->progress_name);
    if (rc < 0 && rc != -ENOENT)
        log_warn("writer: cannot remove '%s': %s", p->progress_name, recd_strerror(rc));
    free(p->progress_name);
    p->progress_name = NULL;
}

static void sync_part(writer_job *j, open_part *op);

/* After b's bytes are written (and synced with flush.fsync): b's progress sidecar as the .part's
 * name + ".part" + suffix. Skipped when a later batch of this job supersedes it (it ends the part
 * or brings a newer one). A failure is logged once per part and counted. */
static void store_progress(writer_job *j, const writer_batch *b, open_part *op)
{
    writer_part *p = b->part;
    if (!b->progress || p->broken || !p->created || !b->data_done || op->owner != p)
        return;
    for (const writer_batch *c = b->next; c; c = c->next)
        if (c->part == p && (c->end || c->progress))
            return;
    sync_part(j, op);
    writer_sidecar *sc = b->progress;
    char rel[RECD_PATH_MAX + 24];
    int n = snprintf(rel, sizeof rel, "%s%s%s", op->file.name, RECD_PART_SUFFIX, sc->suffix);
    int rc = n < 0 || (size_t)n >= sizeof rel ? -ENAMETOOLONG : 0;
    char *text = rc == 0 ? sc->render(sc, op->file.name) : NULL;
    if (rc == 0 && !text)
        rc = -ENOMEM;
    if (rc == 0)
        rc = j->stage->ops->store_text(root_of(j->stage), rel, text, j->fsync);
    free(text);
    if (rc == 0 && (!p->progress_name || strcmp(p->progress_name, rel) != 0)) {
        free(p->progress_name);
        p->progress_name = strdup(rel); /* without memory: stale at the end, recovery removes it */
    }
    if (rc < 0) {
        j->result.sidecar_failures++;
        if (!p->progress_warned)
            log_warn("writer: cannot store '%s' beside the part being written: %s", rel,
                     recd_strerror(rc));
        p->progress_warned = true;
    }
}

/* 1 when the job must stop at b (the end may succeed later), else 0. */
static int end_part(writer_job *j, writer_batch *b, open_part *op)
{
    writer_part *p = b->part;
    if (!p->created)
        return 0; /* nothing was ever written: no file */
    part_acquire(j->stage, op, p);
    if (p->broken) {
        j->result.abandoned++;
        log_warn("writer: '%s.part' is left for recovery at the next start after a write error",
                 op->file.name);
        return 0;
    }
    op->file.error[0] = '\0';
    int rc = 0;
    if (b->header_len && p->units_dropped && p->rebase &&
        p->rebase(b->header, b->header_len, p->units_dropped) < 0) {
        log_err("writer: '%s': the end header cannot be fitted to the file that started again; "
                "it keeps its first header (frame count 0: readers recount)", op->file.name);
        b->header_len = 0;
    }
    if (b->header_len) {
        rc = j->stage->ops->pwrite(&op->file, 0, b->header, b->header_len);
        if (rc == 0)
            j->result.written += b->header_len;
    }
    if (rc == 0)
        seek_sidecar_update(p->seek, op->file.root_fd, &op->file, true);
    if (rc == 0)
        rc = j->stage->ops->finalize(&op->file, j->fsync ? RECD_PART_FINALIZE_SYNC : 0);
    if (rc < 0) {
        if (write_failed(j, op, b, rc, "cannot finalize", 0))
            return 1;
        j->result.abandoned++;
        return 0;
    }
    op->dirty = false;
    j->result.finalized++;
    log_debug("finalized %s (%llu bytes)", op->file.name, (unsigned long long)op->file.size);
    store_sidecar(j, p, op->file.name);
    seek_sidecar_finalize(p->seek, op->file.root_fd, op->file.name);
    remove_progress(j, p);
    return 0;
}

/* The threadpool threads that run writer jobs drop below the loop's priority: when the CPUs are
 * busy, reading input (UDP has no backpressure: the kernel drops what is not read in time) comes
 * before writing it out, which the buffers absorb. Linux applies the nice value per thread; the
 * daemon runs nothing latency-bound on the threadpool. */
static void lower_priority_once(void)
{
    static _Thread_local bool done;
    if (done)
        return;
    done = true;
#ifdef __linux__
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WRITER_NICE);
#endif
}

/* flush.fsync: the part the job wrote to reaches the disk before the job moves on. The bytes are
 * the kernel's already, so a failure is logged and counted, not retried: after a failed
 * fdatasync the page cache cannot be trusted to still hold them. */
static void sync_part(writer_job *j, open_part *op)
{
    if (!j->fsync || !op->owner || !op->dirty)
        return;
    op->dirty = false;
    op->file.error[0] = '\0';
    int rc = j->stage->ops->sync(&op->file);
    if (rc < 0) {
        j->result.failures++;
        log_err("writer: cannot sync '%s': %s", part_label(op),
                op->file.error[0] ? op->file.error : recd_strerror(rc));
    }
}

static void job_work(uv_work_t *req)
{
    lower_priority_once();
    writer_job *j = req->data;
    uint64_t t0 = uv_hrtime();
    recd_gzip_deflater *d = NULL;
    recd_buf out = {0};
    open_part op;
    op.owner = NULL;
    op.dirty = false;
    for (writer_batch *b = j->batches; b; b = b->next) {
        if (op.owner != b->part)
            sync_part(j, &op);
        if (write_batch(j, b, &op, &d, &out) || (b->end && end_part(j, b, &op))) {
            j->stopped_at = b;
            break;
        }
        store_progress(j, b, &op);
    }
    sync_part(j, &op);
    /* Files are opened per job and closed after it: descriptors stay bounded by the pool. */
    part_release(j->stage->ops, &op);
    for (writer_batch *b = j->batches; b != j->stopped_at; b = b->next) {
        if (b->end)
            continue;
        bool ended_later = false;
        for (writer_batch *c = b->next; c != j->stopped_at; c = c->next)
            ended_later |= c->end && c->part == b->part;
        if (ended_later)
            continue;
        j->result.last = b->part;
        j->result.last_size = b->part->size;
        if (b->part->broken)
            j->result.broken = b->part;
    }
    deflater_give(j->stage, d);
    recd_buf_free(&out);
    j->result.seconds = (double)(uv_hrtime() - t0) / 1e9;
}

static void job_after(uv_work_t *req, int status)
{
    writer_job *j = req->data;
    (void)status; /* jobs are never cancelled */
    writer_queue *q = j->queue;
    if (j->stopped_at) {
        /* Not consumed: back to the front of the queue, before what was sealed meanwhile. */
        writer_batch *last = j->stopped_at;
        while (last->next)
            last = last->next;
        last->next = q->head;
        if (!q->head)
            q->tail = last;
        q->head = j->stopped_at;
    }
    writer_batch *b = j->batches;
    while (b != j->stopped_at) {
        writer_batch *next = b->next;
        writer_part *p = b->part;
        if (p->renamed && p->on_named) {
            p->renamed = false;
            p->on_named(p->on_named_ctx, p->on_named_tag, p->name, p->finalized);
        }
        j->result.released += b->data.len + b->restart.len;
        if (b->part == j->result.last)
            j->result.last_released += b->data.len;
        if (b->end)
            part_free(b->part);
        batch_free(&j->stage->buffers, b);
        b = next;
    }
    q->busy = false;
    j->stage->jobs_running--;
    writer_done_fn done = j->done;
    void *ctx = j->ctx;
    writer_result r = j->result;
    free(j);
    done(ctx, &r);
}

int writer_kick(writer_stage *w, writer_queue *q, writer_done_fn done, void *ctx)
{
    if (q->busy || !q->head)
        return 0;
    writer_job *j = calloc(1, sizeof *j);
    if (!j)
        return -ENOMEM;
    j->stage = w;
    j->queue = q;
    j->batches = q->head;
    j->done = done;
    j->ctx = ctx;
    j->fsync = w->fsync;
    j->req.data = j;
    int rc = uv_queue_work(w->loop, &j->req, job_work, job_after);
    if (rc < 0) {
        free(j);
        return rc;
    }
    q->head = q->tail = NULL;
    q->busy = true;
    w->jobs_running++;
    return 0;
}

static bool on_disk(const writer_part *p) { return p && p->created && !p->finalized; }

unsigned writer_queue_parts_on_disk(const writer_queue *q)
{
    unsigned n = 0;
    const writer_part *last = NULL; /* a part's batches follow each other */
    for (const writer_batch *b = q->head; b; b = b->next) {
        if (b->part != last && on_disk(b->part))
            n++;
        last = b->part;
    }
    if (q->open && q->open->part != last && on_disk(q->open->part))
        n++;
    return n;
}

uint64_t writer_queue_discard(writer_queue *q)
{
    uint64_t bytes = 0;
    writer_seal(q);
    writer_batch *b = q->head;
    while (b) {
        writer_batch *next = b->next;
        bytes += b->data.len + b->restart.len;
        if (b->end)
            part_free(b->part);
        batch_free(q->pool, b);
        b = next;
    }
    q->head = q->tail = NULL;
    return bytes;
}
