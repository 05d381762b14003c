/* SPDX-License-Identifier: MIT */
/* The fake writer stage for record-layer tests (see fake_writer.h). */
#include "fake_writer.h"

#include <stdlib.h>
#include <string.h>

#define FAKE_MAX 64

static fake_file files[FAKE_MAX];
static char sealed_marker; /* q->head points here while sealed work waits: the record layer
                              looks at head to know whether to kick again */
static size_t nfiles;

/* What a queue has sealed and not yet handed to a job. */
static struct fake_queue {
    writer_queue *q;
    uint64_t sealed;
    unsigned ends;
} queues[FAKE_MAX];
static size_t nqueues;

static struct fake_job {
    writer_queue *q;
    writer_done_fn done;
    void *ctx;
    uint64_t released;
    unsigned finalized;
} jobs[FAKE_MAX];
static size_t njobs;

static fake_file *file_of(const writer_part *p)
{
    for (size_t i = 0; i < nfiles; i++)
        if (files[i].part == p)
            return &files[i];
    return NULL;
}

static struct fake_queue *queue_of(writer_queue *q)
{
    for (size_t i = 0; i < nqueues; i++)
        if (queues[i].q == q)
            return &queues[i];
    if (nqueues == FAKE_MAX)
        abort();
    queues[nqueues].q = q;
    return &queues[nqueues++];
}

size_t fake_writer_files(void) { return nfiles; }
fake_file *fake_writer_file(size_t i) { return i < nfiles ? &files[i] : NULL; }
size_t fake_writer_jobs(void) { return njobs; }

size_t fake_writer_run(void)
{
    size_t ran = 0;
    while (njobs) {
        struct fake_job j = jobs[0];
        memmove(jobs, jobs + 1, --njobs * sizeof *jobs);
        j.q->busy = false;
        writer_result r;
        memset(&r, 0, sizeof r);
        r.released = j.released;
        r.written = j.released;
        r.finalized = j.finalized;
        j.done(j.ctx, &r); /* may kick the next job, or free the session */
        ran++;
    }
    return ran;
}

void fake_writer_reset(void)
{
    for (size_t i = 0; i < nfiles; i++) {
        recd_buf_free(&files[i].bytes);
        recd_buf_free(&files[i].members);
        free(files[i].header);
        free(files[i].sidecar);
        free(files[i].part->name);
        free(files[i].part);
    }
    memset(files, 0, sizeof files);
    nfiles = nqueues = njobs = 0;
}

writer_part *writer_part_new(const char *rel, int gzip_level)
{
    if (nfiles == FAKE_MAX)
        return NULL;
    writer_part *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->name = strdup(rel);
    p->gzip_level = gzip_level;
    files[nfiles++].part = p;
    return p;
}

/* No file of the fake vanishes: a preamble is never needed. */
int writer_part_set_preamble(writer_part *p, const void *data, size_t len)
{
    (void)p;
    (void)data;
    (void)len;
    return 0;
}

/* Nor is a restart point. */
int writer_set_restart(writer_stage *w, writer_queue *q, writer_part *p, recd_buf *plain,
                       recd_buf *member, uint64_t units_dropped)
{
    (void)w;
    (void)q;
    (void)p;
    (void)plain;
    (void)member;
    (void)units_dropped;
    return 0;
}

void writer_part_set_rebase(writer_part *p, writer_rebase_fn rebase)
{
    (void)p;
    (void)rebase;
}

/* Rendered at once (the fake never renames a part) and kept as text. */
/* The fake never renames a part. */
void writer_part_on_named(writer_part *p, void (*fn)(void *ctx, uint32_t tag, const char *rel,
                                                     bool final),
                          void *ctx, uint32_t tag)
{
    (void)p, (void)fn, (void)ctx, (void)tag;
}

/* Progress sidecars describe the .part on disk, which the fake does not have. */
void writer_set_progress(writer_queue *q, writer_part *p, writer_sidecar *sc)
{
    (void)q;
    (void)p;
    sc->free(sc);
}

void writer_part_set_seek_format(writer_part *p, const recd_format *f)
{
    (void)p; /* the seek index is the writer job's (tests/integration/daemon_seek_index.sh) */
    (void)f;
}

void writer_part_set_sidecar(writer_part *p, writer_sidecar *sc)
{
    fake_file *f = file_of(p);
    if (f) {
        free(f->sidecar);
        f->sidecar = sc->render(sc, p->name);
    }
    sc->free(sc);
}

uint8_t *writer_reserve(writer_stage *w, writer_queue *q, writer_part *p, size_t len)
{
    (void)w;
    fake_file *f = file_of(p);
    if (!f || recd_buf_reserve(&f->bytes, len) < 0)
        return NULL;
    uint8_t *at = f->bytes.data + f->bytes.len;
    f->bytes.len += len;
    q->open_bytes += len;
    return at;
}

int writer_put_member(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len)
{
    (void)w;
    fake_file *f = file_of(p);
    if (!f || recd_buf_append(&f->members, data, len) < 0)
        return -1;
    q->open_bytes += len;
    return 0;
}

int writer_put_member_points(writer_stage *w, writer_queue *q, writer_part *p, const void *data,
                             size_t len, const recd_seek_point *points, size_t n)
{
    (void)points; /* the seek index is the writer job's (tests/integration/daemon_seek_index.sh) */
    (void)n;
    return writer_put_member(w, q, p, data, len);
}

void writer_part_feed_seek(writer_part *p) { (void)p; }

void writer_put_point(writer_queue *q, const writer_part *p, const uint8_t *at,
                      const recd_seek_point *pt)
{
    (void)q; /* as for members: the index is the job's (tests/integration/daemon_seek_index.sh) */
    (void)p;
    (void)at;
    (void)pt;
}

int writer_end_part(writer_queue *q, writer_part *p, uint8_t *header, size_t header_len)
{
    fake_file *f = file_of(p);
    if (!f)
        return -1;
    f->ended = true;
    f->header = header;
    f->header_len = header_len;
    queue_of(q)->ends++;
    q->head = q->tail = (writer_batch *)(void *)&sealed_marker;
    return 0;
}

void writer_seal(writer_queue *q)
{
    struct fake_queue *fq = queue_of(q);
    fq->sealed += q->open_bytes;
    q->open_bytes = 0;
    if (fq->sealed || fq->ends)
        q->head = q->tail = (writer_batch *)(void *)&sealed_marker;
}

void writer_seal_aligned(writer_stage *w, writer_queue *q)
{
    (void)w;
    writer_seal(q);
}

size_t writer_open_bytes(const writer_queue *q) { return q->open_bytes; }

bool writer_idle(const writer_queue *q)
{
    for (size_t i = 0; i < nqueues; i++)
        if (queues[i].q == q && (queues[i].sealed || queues[i].ends))
            return false;
    return !q->busy && q->open_bytes == 0;
}

int writer_kick(writer_stage *w, writer_queue *q, writer_done_fn done, void *ctx)
{
    (void)w;
    struct fake_queue *fq = queue_of(q);
    if (q->busy || (!fq->sealed && !fq->ends))
        return 0;
    if (njobs == FAKE_MAX)
        abort();
    jobs[njobs++] = (struct fake_job){q, done, ctx, fq->sealed, fq->ends};
    fq->sealed = 0;
    fq->ends = 0;
    q->head = q->tail = NULL;
    q->busy = true;
    return 0;
}

uint64_t writer_queue_discard(writer_queue *q)
{
    struct fake_queue *fq = queue_of(q);
    uint64_t n = fq->sealed + q->open_bytes;
    fq->sealed = 0;
    fq->ends = 0;
    q->open_bytes = 0;
    q->head = q->tail = NULL;
    /* The queue belongs to a session being freed: forget it, so a new one at the same address
     * starts clean. */
    fq->q = NULL;
    return n;
}

/* Fake parts are never files: none is left on disk. */
unsigned writer_queue_parts_on_disk(const writer_queue *q)
{
    (void)q;
    return 0;
}
