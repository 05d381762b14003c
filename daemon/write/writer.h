/* SPDX-License-Identifier: MIT */
/* The writer stage. A session's output travels in batches of file bytes (for Recap also
 * uncompressed gzip member bodies) to jobs on the libuv thread pool, at most one job per session
 * at a time, so every file receives its bytes in order without locks. A job creates or reopens
 * the part file, compresses members, appends, and on a part's end patches its header and renames
 * NAME.part to NAME; it closes every file it opened, so open descriptors are bounded by the pool
 * size, not by the number of sessions. The loop thread never compresses and never touches disk. */
#ifndef RECD_DAEMON_WRITER_H
#define RECD_DAEMON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "buffer_pool.h"
#include "file_ops.h"

#include "recd/common.h"
#include "recd/format.h"
#include "recd/gzip_members.h"
#include "recd/part_file.h"

#define WRITER_POOL_MAX 16 /* idle compressors kept for reuse (256 KiB with zlib, 660 with libdeflate) */
/* Large batches end on this boundary of their file: ext4 takes 64 KiB-aligned writes into large
 * page-cache folios, for about a third less kernel time than the same bytes at the offsets where
 * whole .rec blocks end (docs/performance.md). */
#define WRITER_ALIGN (64u * 1024u)

/* Rewrites a part's end header (len bytes, in place) for a file that lacks the part's first
 * units_dropped units: the file started again at a restart point. 0 or a negative errno. */
typedef int (*writer_rebase_fn)(uint8_t *header, size_t len, uint64_t units_dropped);

/* A small text file stored beside a part once the part is finalized (output.part_manifest): the
 * layer above fills it in and the writer owns it with the part. render runs on the thread pool
 * with the part's final name (collision suffix included) and must be pure: the text, malloc'd,
 * or NULL without memory. Stored as final name + suffix, atomically, synced when flush.fsync is
 * on; never for a part that is not finalized. */
typedef struct writer_sidecar writer_sidecar;
struct writer_sidecar {
    const char *suffix; /* ".json" */
    char *(*render)(const writer_sidecar *sc, const char *final_rel);
    void (*free)(writer_sidecar *sc);
};

/* One output file, from its first byte to its rename; owned by the writer once ended. Kept small
 * (an idle session holds one): the recd_part of lib/part_file is rebuilt from it in each job. */
typedef struct writer_part {
    char *name;     /* relative name: as asked for, then as created (collisions get -N) */
    int gzip_level; /* Recap members: the level recorded in the part's header */
    uint8_t gzip_compressor; /* and the recd_gzip_compressor (0, zlib, unless set after new) */
    bool created, broken, finalized;
    bool progress_warned; /* a store of its progress sidecar failed (logged once) */
    bool renamed;         /* a job gave it another name than it had (jobs set, job_after clears) */
    uint64_t size, bytes_written, dev, ino; /* identity and length of the created .part */
    /* Bytes a file of this part starts with (.rec: its header), or NULL: when the .part vanishes
     * (the output root was removed), the bytes still queued go to a new file that starts with
     * them. preamble_due: the new file needs them before the next batch. */
    uint8_t *preamble;
    uint32_t preamble_len;
    bool preamble_due;
    /* A part whose batches carry restart points (writer_set_restart) instead: how many units
     * (Recap ticks) the file now being written lacks at its start, and how its end header is
     * rewritten for that (pure: it runs on the thread pool). */
    uint64_t units_dropped;
    writer_rebase_fn rebase;
    writer_sidecar *sidecar; /* stored once the part is finalized, or NULL (owned) */
    /* writer_part_on_named(): told the part's new name on the loop thread, or NULL */
    void (*on_named)(void *ctx, uint32_t tag, const char *rel, bool final);
    void *on_named_ctx;
    uint32_t on_named_tag;
    char *progress_name; /* its in-progress sidecar as stored (jobs only), or NULL */
    /* Loop thread only. Bytes sealed for the part so far: while no member was queued (packed
     * false) that is the file offset where the open batch will land. */
    uint64_t sealed;
    bool packed;
    struct seek_sidecar *seek; /* its seek index as it grows (seek_sidecar.h), or NULL (owned) */
} writer_part;

typedef struct writer_batch writer_batch;

/* What a session has queued. Touched by the loop thread only; batches handed to a job belong to
 * the job until it completes. */
typedef struct writer_queue {
    writer_batch *open;        /* collecting bytes; NULL when nothing is pending */
    /* Where plain appends for cur_part go next: open's buffer from cur to end, filled without
     * touching the batch itself (one cache line less per sample with thousands of sessions).
     * The bytes before cur join the batch's counts whenever anything else looks at it. cur is
     * NULL when there is no such room. */
    uint8_t *cur, *end;
    const writer_part *cur_part;
    size_t open_bytes; /* everything appended to open, through the cursor or not */
    writer_batch *head, *tail; /* sealed, waiting for the next job */
    bool busy;                 /* a job is in flight */
    uint32_t size_hint;        /* size the last batch reached: the next one starts that large */
    struct buffer_pool *pool;  /* where its batch buffers go back (they may be pool slots) */
} writer_queue;

/* Shared by all jobs: the output root, a pool of reusable compressors and one of batch buffers. */
typedef struct writer_stage {
    uv_loop_t *loop;
    int root_fd; /* read by jobs on the pool: see writer_stage_swap_root() */
    const writer_file_ops *ops; /* writer_file_ops_real; tests install failing ones */
    bool fsync; /* flush.fsync: jobs kicked from now on sync what they write (loop thread) */
    uv_mutex_t lock;
    recd_gzip_deflater *idle[WRITER_POOL_MAX];
    size_t nidle;
    uint64_t jobs_running;
    buffer_pool buffers; /* batch buffers, recycled on the loop thread */
} writer_stage;

typedef struct writer_result {
    uint64_t released;         /* queued bytes the job consumed (written or not), restart points
                                  included */
    uint64_t written;          /* bytes that reached files, header patches included */
    unsigned finalized;        /* parts renamed to their final name */
    unsigned failures;         /* batches or parts that failed (logged by the job) */
    /* A write failed in a way that may pass (disk full, read-only, I/O error, a directory
     * missing): the job stopped at that batch and it went back, with every batch after it, to
     * the front of the queue for a later job. 0 when everything was consumed. */
    int retry_error;
    unsigned abandoned;        /* parts left as .part after an error that cannot pass */
    unsigned sidecars;         /* sidecars stored beside parts finalized */
    unsigned sidecar_failures; /* sidecars that could not be stored (logged by the job) */
    unsigned vanished;         /* parts whose file vanished and that started again in a new one */
    uint64_t lost;             /* queued bytes of such parts that never reached their file */
    const writer_part *broken; /* a part that failed and was not ended, or NULL */
    const writer_part *last;   /* the last part written and not ended, or NULL */
    uint64_t last_size;        /* its size on disk */
    uint64_t last_released;    /* queued bytes of that part the job consumed */
    uint64_t members_in;       /* uncompressed member bytes the job compressed ... */
    uint64_t members_out;      /* ... and what they became */
    double seconds;            /* time the job spent */
} writer_result;

typedef void (*writer_done_fn)(void *ctx, const writer_result *r);

int writer_stage_init(writer_stage *w, uv_loop_t *loop, int root_fd);
void writer_stage_free(writer_stage *w);
/* The output root was opened again (the old one was removed): jobs started from now on use
 * root_fd. Returns the old fd, which jobs already running may still use: close it only once
 * jobs_running is 0. Loop thread only. */
int writer_stage_swap_root(writer_stage *w, int root_fd);

/* A new part that will be created as rel + ".part" by the first job that has bytes for it. */
writer_part *writer_part_new(const char *rel, int gzip_level);

/* Sets p's preamble (copied; see writer_part). 0 or -ENOMEM. Loop thread, before p's first
 * job. */
int writer_part_set_preamble(writer_part *p, const void *data, size_t len);

/* A restart point, for parts whose bytes depend on what came before (Recap members carry deltas
 * against the reader's state): should p's file vanish while the open batch is still queued, the
 * new file starts with plain (a header) and then member (an uncompressed gzip member body, which
 * the job compresses: a full state), and lacks the part's first units_dropped units, which
 * rebase (writer_part_set_rebase) writes into its end header. It belongs to the batch that
 * starts here, so it is taken only when p's open batch holds nothing yet: 1 when taken (plain and
 * member are moved into the batch and zeroed), 0 when not needed (the batch began earlier and has
 * its own), -ENOMEM. Its bytes count in the batch's released bytes. */
int writer_set_restart(writer_stage *w, writer_queue *q, writer_part *p, recd_buf *plain,
                       recd_buf *member, uint64_t units_dropped);
void writer_part_set_rebase(writer_part *p, writer_rebase_fn rebase);
/* Tells fn(ctx, tag, rel, final) on the loop thread, once the job that did it completes, that
 * the part got another name than it was asked for: its file was created under a collision
 * suffix (rel is the name without ".part"), or finalized under one (final true). ctx must live
 * until the part's end has been written. Loop thread, before the part's first job. */
void writer_part_on_named(writer_part *p, void (*fn)(void *ctx, uint32_t tag, const char *rel,
                                                     bool final),
                          void *ctx, uint32_t tag);

/* p's file is of format f: when f seeks by keyframe or frame, jobs keep its seek index
 * NAME.part.idx as it grows and rename it with the part (seek_sidecar.h). Loop thread, before
 * p's first job. */
void writer_part_set_seek_format(writer_part *p, const recd_format *f);

/* p's seek index is fed by the layer above, which encodes the part and knows its seek points:
 * they come with its members (writer_put_member_points) or its plain bytes (writer_put_point), a
 * restart point's member is one at time 0, and the part is never read back to find them. Loop
 * thread, after writer_part_set_seek_format and before p's first job. */
void writer_part_feed_seek(writer_part *p);

/* Gives p a sidecar (replacing and freeing any earlier one). Loop thread, before the part is
 * ended. */
void writer_part_set_sidecar(writer_part *p, writer_sidecar *sc);

/* Gives the open batch, when it holds bytes of p, a progress sidecar (taken: freed when there is
 * no such batch): once a job has written the batch, synced with flush.fsync, it is stored as the
 * part's file name + ".part" + suffix ("NAME.part.json" beside "NAME.part"), rendered with the
 * part's final name, replacing the one before. The part's end removes it, so one is left only
 * beside a .part that recovery finalizes, saying what the part held at its last store. Loop
 * thread; call it just before writer_seal (the bytes it describes end where the batch ends). */
void writer_set_progress(writer_queue *q, writer_part *p, writer_sidecar *sc);

/* Appends file bytes for part p (a new batch starts when p differs from the open batch's part).
 * 0 or -ENOMEM. */
int writer_put(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len);
/* Like writer_put, but hands out the len bytes to fill instead of copying them in: valid until
 * the next call for q. NULL when out of memory. */
uint8_t *writer_reserve(writer_stage *w, writer_queue *q, writer_part *p, size_t len);
/* Appends an uncompressed gzip member body that the job compresses at p's level. */
int writer_put_member(writer_stage *w, writer_queue *q, writer_part *p, const void *data, size_t len);
/* Like writer_put_member, for a member holding n seek points of p's file (time and aux set; the
 * offset is the member's, which the job learns as it writes it). A part whose index is fed
 * (writer_part_feed_seek) gets its entries from them; points NULL with n > 0: the member's
 * points found no memory, and the part's index is given up. */
int writer_put_member_points(writer_stage *w, writer_queue *q, writer_part *p, const void *data,
                             size_t len, const recd_seek_point *points, size_t n);
/* A seek point of p's file in plain bytes the layer above wrote, for a part whose index is fed
 * (writer_part_feed_seek; others ignore it): at is a byte of the room writer_reserve or writer_put
 * last handed out for p, and its first RECD_SEEK_INDEX_PROBE_SIZE bytes are written by now; pt
 * gives the time and aux, the job the file offset. Points come in file order. Without memory
 * the part's index is given up. */
void writer_put_point(writer_queue *q, const writer_part *p, const uint8_t *at,
                      const recd_seek_point *pt);
/* Ends p after everything queued for it: header (if given, len bytes written at offset 0 after
 * the data) then rename. Takes ownership of header (malloc'd, may be NULL). The caller must not
 * use p afterwards. 0 or -ENOMEM (then nothing changed and header is still the caller's). */
int writer_end_part(writer_queue *q, writer_part *p, uint8_t *header, size_t header_len);
/* The open batch is complete: queue it for the next job. */
void writer_seal(writer_queue *q);
/* Like writer_seal, for a batch sealed because it is large: when its part holds file bytes only,
 * the batch ends at the last WRITER_ALIGN boundary of the file it reaches, and the bytes after
 * that boundary start the next open batch. Seals for time, flush messages and part ends use
 * writer_seal and end where the data ends. Falls back to writer_seal when the carried bytes find
 * no memory. */
void writer_seal_aligned(writer_stage *w, writer_queue *q);
/* Bytes in the open batch (not yet sealed). */
size_t writer_open_bytes(const writer_queue *q);
bool writer_idle(const writer_queue *q); /* nothing queued and no job in flight */

/* Starts a job for the sealed batches when none is in flight. done(ctx, result) runs on the loop
 * thread when the job completes. 0, or a negative errno (the batches stay queued). */
int writer_kick(writer_stage *w, writer_queue *q, writer_done_fn done, void *ctx);

/* Parts queued in q (their batches not yet written) whose .part file exists: created by a job
 * and not yet finalized. Only when no job is in flight. */
unsigned writer_queue_parts_on_disk(const writer_queue *q);

/* Frees everything queued (only when no job is in flight), parts included. Returns the bytes
 * that were queued. Used when a session is dropped without writing (out of memory, or writes
 * still failing at shutdown). */
uint64_t writer_queue_discard(writer_queue *q);

#endif
