/* SPDX-License-Identifier: MIT */
/* Tests for daemon/write/writer.c under failing file operations (file_ops.h): a write that fails
 * in a way that may pass (ENOSPC, EROFS, EIO, EACCES) keeps its batch and every batch after it for
 * a retry, creates no second .part, and writes each byte once; a part whose file vanished starts
 * again in a new file (with a preamble) or is given up and its bytes counted as lost; a short
 * write leaves each byte in the file once. The real writer runs on a real loop; only the Nth file
 * operation is made to fail. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "recd/seek_index.h"
#include "recd/synth.h"
#include "write/writer.h"

/* ---- the injecting file operations ---------------------------------------------------------- */

typedef enum fault_op { OP_CREATE, OP_APPEND, OP_PWRITE, OP_SYNC, OP_FINALIZE, OP_STORE, OP_COUNT } fault_op;

static struct {
    unsigned calls[OP_COUNT];
    unsigned fail_from[OP_COUNT]; /* calls fail_from .. fail_until (1-based; 0 = never) */
    unsigned fail_until[OP_COUNT];
    int error[OP_COUNT];
    unsigned sync_delay_ms; /* a slow disk */
    /* A short write at append call short_call (1-based; 0 = never): short_len bytes reach the
     * file, then the rest fails with short_error, or is written when short_error is 0. */
    unsigned short_call;
    size_t short_len;
    int short_error;
    unsigned finalize_flags; /* as the last finalize was called */
} faults;

static int injected(fault_op op)
{
    unsigned n = ++faults.calls[op];
    if (faults.fail_from[op] && n >= faults.fail_from[op] && n <= faults.fail_until[op])
        return faults.error[op];
    return 0;
}

static void fail_calls(fault_op op, unsigned from, unsigned until, int error)
{
    faults.fail_from[op] = from;
    faults.fail_until[op] = until;
    faults.error[op] = error;
}

static int f_create(recd_part *p, int root_fd, const char *rel)
{
    int rc = injected(OP_CREATE);
    if (rc < 0) {
        memset(p, 0, sizeof *p);
        p->fd = -1;
        return rc;
    }
    return recd_part_create(p, root_fd, rel);
}

/* A short write then a failure, made by the kernel inside lib's append: the file size limit
 * (RLIMIT_FSIZE, SIGXFSZ ignored) lets the first pwrite write short_len bytes and fails the next
 * one with EFBIG. Reported as short_error, the error a full disk gives at that point. */
static int short_write_then_fail(recd_part *p, const void *data, size_t len)
{
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    struct rlimit cut = was;
    cut.rlim_cur = (rlim_t)(p->size + faults.short_len);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &cut), 0);
    int rc = recd_part_append(p, data, len);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    assert_int_equal(rc, -EFBIG); /* the kernel did write short, then refused the rest */
    return faults.short_error;
}

static int f_append(recd_part *p, const void *data, size_t len)
{
    int rc = injected(OP_APPEND);
    if (rc < 0)
        return rc;
    if (faults.calls[OP_APPEND] != faults.short_call || len <= faults.short_len)
        return recd_part_append(p, data, len);
    if (faults.short_error)
        return short_write_then_fail(p, data, len);
    /* Success on the rest: what lib's write loop does after a short pwrite. */
    rc = recd_part_append(p, data, faults.short_len);
    return rc < 0 ? rc : recd_part_append(p, (const uint8_t *)data + faults.short_len,
                                          len - faults.short_len);
}

static int f_pwrite(recd_part *p, uint64_t off, const void *data, size_t len)
{
    int rc = injected(OP_PWRITE);
    return rc < 0 ? rc : recd_part_pwrite(p, off, data, len);
}

static int f_sync(recd_part *p)
{
    int rc = injected(OP_SYNC);
    if (faults.sync_delay_ms)
        usleep(faults.sync_delay_ms * 1000u);
    return rc < 0 ? rc : recd_part_sync(p);
}

static int f_finalize(recd_part *p, unsigned flags)
{
    faults.finalize_flags = flags;
    int rc = injected(OP_FINALIZE);
    return rc < 0 ? rc : recd_part_finalize(p, flags);
}

static int f_store_text(int root_fd, const char *rel, const char *text, bool sync)
{
    int rc = injected(OP_STORE);
    return rc < 0 ? rc : recd_confined_store_text(root_fd, rel, text, sync);
}

static const writer_file_ops faulty_ops = {f_create, f_append, f_pwrite, f_sync, f_finalize,
                                           recd_part_close_fd, f_store_text, recd_confined_unlink};

/* ---- a stage on a loop ---------------------------------------------------------------------- */

typedef struct rig {
    uv_loop_t loop;
    writer_stage w;
    writer_queue q;
    writer_result last;
    unsigned jobs;
    char root[4096];
    int root_fd;
} rig;

static void on_done(void *ctx, const writer_result *r)
{
    rig *g = ctx;
    g->last = *r;
    g->jobs++;
}

static rig *rig_new(void)
{
    rig *g = calloc(1, sizeof *g);
    assert_non_null(g);
    memset(&faults, 0, sizeof faults);
    snprintf(g->root, sizeof g->root, "%s", tu_tmpdir());
    g->root_fd = recd_out_root_open(g->root, false);
    assert_true(g->root_fd >= 0);
    assert_int_equal(uv_loop_init(&g->loop), 0);
    assert_int_equal(writer_stage_init(&g->w, &g->loop, g->root_fd), 0);
    g->w.ops = &faulty_ops;
    return g;
}

static void rig_free(rig *g)
{
    writer_queue_discard(&g->q);
    uv_run(&g->loop, UV_RUN_DEFAULT);
    writer_stage_free(&g->w);
    assert_int_equal(uv_loop_close(&g->loop), 0);
    close(g->root_fd);
    tu_rmtree(g->root);
    free(g);
}

/* Starts a job for what is queued and waits for it. */
static const writer_result *run_job(rig *g)
{
    unsigned before = g->jobs;
    assert_int_equal(writer_kick(&g->w, &g->q, on_done, g), 0);
    uv_run(&g->loop, UV_RUN_DEFAULT);
    assert_int_equal(g->jobs, before + 1);
    return &g->last;
}

static void put_batch(rig *g, writer_part *p, char c, size_t len)
{
    char buf[256];
    memset(buf, c, len);
    assert_int_equal(writer_put(&g->w, &g->q, p, buf, len), 0);
    writer_seal(&g->q);
}

/* The names in the root, sorted, joined by spaces. */
static const char *listing(const rig *g)
{
    static char out[1024];
    out[0] = 0;
    struct dirent **names;
    int n = scandir(g->root, &names, NULL, alphasort);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            strncat(out, out[0] ? " " : "", sizeof out - strlen(out) - 1);
            strncat(out, names[i]->d_name, sizeof out - strlen(out) - 1);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

static void check_file(const rig *g, const char *name, const char *expect)
{
    size_t len;
    uint8_t *data = tu_read_file(tu_at(g->root, name), &len);
    assert_non_null(data);
    assert_int_equal(len, strlen(expect));
    assert_memory_equal(data, expect, len);
    free(data);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* Disk full in the middle of a job: the first batch is written, the failed one and the one after
 * it wait for the next job, and nothing is written twice. */
static void full_disk_keeps_batches(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("a.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'a', 3);
    put_batch(g, p, 'b', 4);
    put_batch(g, p, 'c', 5);
    fail_calls(OP_APPEND, 2, 3, -ENOSPC);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    assert_int_equal(r->released, 3);
    assert_int_equal(r->lost, 0);
    assert_non_null(g->q.head);
    r = run_job(g); /* the second try fails too (call 3) */
    assert_int_equal(r->retry_error, -ENOSPC);
    assert_int_equal(r->released, 0);
    r = run_job(g); /* space again */
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->released, 9);
    assert_null(g->q.head);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_string_equal(listing(g), "a.rec");
    check_file(g, "a.rec", "aaabbbbccccc");
    rig_free(g);
}

/* A read-only filesystem from the first write on: no .part at all until it can be created, then
 * one, with everything. */
static void create_fails_then_passes(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("b.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'x', 2);
    fail_calls(OP_CREATE, 1, 4, -EROFS);
    for (int i = 0; i < 4; i++) {
        const writer_result *r = run_job(g);
        assert_int_equal(r->retry_error, -EROFS);
        assert_int_equal(r->released, 0);
        assert_string_equal(listing(g), "");
        put_batch(g, p, (char)('0' + i), 1);
    }
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->finalized, 1);
    assert_string_equal(listing(g), "b.rec");
    check_file(g, "b.rec", "xx0123");
    rig_free(g);
}

/* The output root removed: creating a part fails with ENOENT until a directory is there again;
 * the batches wait and land in the one part that is then created. */
static void missing_root_waits(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("dir/g.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'g', 3);
    fail_calls(OP_CREATE, 1, 3, -ENOENT);
    for (int i = 0; i < 3; i++) {
        const writer_result *r = run_job(g);
        assert_int_equal(r->retry_error, -ENOENT);
        assert_int_equal(r->lost, 0);
        put_batch(g, p, 'h', 1);
    }
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->finalized, 1);
    check_file(g, "dir/g.rec", "ggghhh");
    rig_free(g);
}

/* The first bytes of a part fail (the .part exists, empty): later batches go into that same
 * .part, so no empty parts pile up. */
static void no_empty_parts_pile_up(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("c.rec", 0);
    assert_non_null(p);
    fail_calls(OP_APPEND, 1, 10, -EIO);
    for (int i = 0; i < 10; i++) {
        put_batch(g, p, (char)('a' + i), 1);
        const writer_result *r = run_job(g);
        assert_int_equal(r->retry_error, -EIO);
    }
    assert_string_equal(listing(g), "c.rec.part");
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->finalized, 1);
    check_file(g, "c.rec", "abcdefghij");
    rig_free(g);
}

/* The header patch and the rename at a part's end are retried too, without appending again. */
static void end_of_part_is_retried(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("d.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'z', 4);
    uint8_t *header = malloc(2);
    assert_non_null(header);
    memcpy(header, "HD", 2);
    assert_int_equal(writer_end_part(&g->q, p, header, 2), 0);
    fail_calls(OP_PWRITE, 1, 1, -EACCES);
    fail_calls(OP_FINALIZE, 1, 1, -ENOSPC);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, -EACCES);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(faults.calls[OP_APPEND], 1);
    assert_string_equal(listing(g), "d.rec");
    check_file(g, "d.rec", "HDzz");
    rig_free(g);
}

/* A .part deleted behind recd's back cannot be written again: the part is given up (left to the
 * session to replace), its bytes counted as lost, and the job does not stop. */
static void vanished_part_is_given_up(void **state)
{
    (void)state;
    rig *g = rig_new();
    g->w.ops = &writer_file_ops_real;
    writer_part *p = writer_part_new("e.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'e', 3);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(unlink(tu_at(g->root, "e.rec.part")), 0);
    put_batch(g, p, 'f', 6);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->lost, 6);
    assert_true(r->broken == p);
    assert_null(g->q.head);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->abandoned, 1);
    assert_string_equal(listing(g), "");
    rig_free(g);
}

/* The same with a preamble (a .rec part's header): the bytes still queued when the .part
 * vanished go to a new file under the same name that starts with the preamble; nothing is lost. */
static void vanished_part_starts_again(void **state)
{
    (void)state;
    rig *g = rig_new();
    g->w.ops = &writer_file_ops_real;
    writer_part *p = writer_part_new("v.rec", 0);
    assert_non_null(p);
    assert_int_equal(writer_part_set_preamble(p, "H", 1), 0);
    put_batch(g, p, 'H', 1); /* the first batch brings the header itself */
    put_batch(g, p, 'e', 3);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    check_file(g, "v.rec.part", "Heee");
    assert_int_equal(unlink(tu_at(g->root, "v.rec.part")), 0);
    put_batch(g, p, 'f', 6);
    put_batch(g, p, 'g', 2);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOENT); /* noticed: retried in a new file */
    assert_int_equal(r->lost, 0);
    assert_null(r->broken);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->lost, 0);
    assert_int_equal(r->released, 8);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(r->abandoned, 0);
    assert_string_equal(listing(g), "v.rec");
    check_file(g, "v.rec", "Hffffffgg");
    rig_free(g);
}

static uint64_t rebased_units;
static int record_rebase(uint8_t *header, size_t len, uint64_t units)
{
    (void)header;
    (void)len;
    rebased_units = units;
    return 0;
}

/* A part without a preamble whose batches carry restart points (Recap): when its .part vanishes,
 * the queued batch goes to a new file that starts with that batch's restart point (its plain
 * bytes, then its member compressed), through a create that fails once more (ENOSPC) and is
 * retried; the end header is rebased by the units the new file lacks. Nothing is lost. */
static void vanished_part_starts_at_its_restart_point(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("r.recap", 6);
    assert_non_null(p);
    writer_part_set_rebase(p, record_rebase);
    rebased_units = 0;
    assert_int_equal(writer_put(&g->w, &g->q, p, "HDR", 3), 0);
    assert_int_equal(writer_put_member(&g->w, &g->q, p, "aaaa", 4), 0);
    writer_seal(&g->q);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(unlink(tu_at(g->root, "r.recap.part")), 0);

    recd_buf plain = {0}, member = {0};
    assert_int_equal(recd_buf_append(&plain, "NEW", 3), 0);
    assert_int_equal(recd_buf_append(&member, "ss", 2), 0);
    assert_int_equal(writer_set_restart(&g->w, &g->q, p, &plain, &member, 7), 1);
    assert_null(plain.data); /* moved into the batch */
    assert_int_equal(writer_put_member(&g->w, &g->q, p, "bbbb", 4), 0);
    recd_buf late = {0}, late_member = {0};
    assert_int_equal(recd_buf_append(&late_member, "x", 1), 0);
    assert_int_equal(writer_set_restart(&g->w, &g->q, p, &late, &late_member, 9), 0); /* begun */
    recd_buf_free(&late_member);
    writer_seal(&g->q);

    fail_calls(OP_CREATE, 2, 2, -ENOSPC);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOENT); /* noticed: started again */
    assert_int_equal(r->lost, 0);
    assert_null(r->broken);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->lost, 0);
    assert_int_equal(r->released, 4 + 3 + 2); /* the batch and its restart point */
    uint8_t *end_header = malloc(3);
    memcpy(end_header, "END", 3);
    assert_int_equal(writer_end_part(&g->q, p, end_header, 3), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(rebased_units, 7);

    recd_buf want = {0};
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    assert_non_null(d);
    assert_int_equal(recd_buf_append(&want, "END", 3), 0);
    assert_int_equal(recd_gzip_member_write(d, 6, "ss", 2, &want), 0);
    assert_int_equal(recd_gzip_member_write(d, 6, "bbbb", 4, &want), 0);
    recd_gzip_deflater_free(d);
    size_t len;
    uint8_t *got = tu_read_file(tu_at(g->root, "r.recap"), &len);
    assert_non_null(got);
    assert_int_equal(len, want.len);
    assert_memory_equal(got, want.data, len);
    free(got);
    recd_buf_free(&want);
    assert_string_equal(listing(g), "r.recap");
    rig_free(g);
}

/* A part without preamble or restart point whose file vanished before any of it was written (its
 * first append failed): the batch brings the file's start, so it goes to a new file as it is. */
static void vanished_empty_part_starts_again(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("n.recap", 6);
    assert_non_null(p);
    put_batch(g, p, 'h', 5);
    fail_calls(OP_APPEND, 1, 1, -ENOSPC);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    assert_int_equal(unlink(tu_at(g->root, "n.recap.part")), 0);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOENT); /* noticed: started again */
    assert_int_equal(r->lost, 0);
    assert_null(r->broken);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->released, 5);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    check_file(g, "n.recap", "hhhhh");
    rig_free(g);
}

static void on_loop_tick(uv_timer_t *t) { (*(unsigned *)t->data)++; }

/* flush.fsync: each job syncs each part it appended to once, a part's rename syncs its directory,
 * a slow fsync holds up only the pool thread (the loop's timer keeps firing), and a failed one
 * is counted without losing or rewriting anything. */
static void fsync_per_job(void **state)
{
    (void)state;
    rig *g = rig_new();
    g->w.fsync = true;
    writer_part *p = writer_part_new("f.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'a', 2);
    put_batch(g, p, 'b', 2);
    const writer_result *r = run_job(g);
    assert_int_equal(r->failures, 0);
    assert_int_equal(faults.calls[OP_SYNC], 1);

    faults.sync_delay_ms = tu_scaled_ms(300);
    unsigned ticks = 0;
    uv_timer_t timer;
    assert_int_equal(uv_timer_init(&g->loop, &timer), 0);
    timer.data = &ticks;
    uv_timer_start(&timer, on_loop_tick, 10, 10);
    put_batch(g, p, 'c', 2);
    assert_int_equal(writer_kick(&g->w, &g->q, on_done, g), 0);
    while (g->jobs < 2)
        uv_run(&g->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&timer, NULL);
    assert_true(ticks >= 3); /* the loop went on while the disk was slow */
    assert_int_equal(faults.calls[OP_SYNC], 2);

    faults.sync_delay_ms = 0;
    fail_calls(OP_SYNC, 3, 3, -EIO);
    put_batch(g, p, 'd', 2);
    r = run_job(g);
    assert_int_equal(r->failures, 1);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->released, 2);

    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(faults.finalize_flags, RECD_PART_FINALIZE_SYNC);
    check_file(g, "f.rec", "aabbccdd");
    rig_free(g);
}

/* A short write in the middle of a batch, then ENOSPC: the half-written bytes are cut from the
 * .part, the batch waits, and the retry writes it once; a short write whose rest succeeds is one
 * append. Either way the file is byte-exact. */
static void short_write_is_exact(void **state)
{
    (void)state;
    rig *g = rig_new();
    writer_part *p = writer_part_new("s.rec", 0);
    assert_non_null(p);
    put_batch(g, p, 'a', 10);
    put_batch(g, p, 'b', 20);
    put_batch(g, p, 'c', 5);
    faults.short_call = 2;
    faults.short_len = 7;
    faults.short_error = -ENOSPC;
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    assert_int_equal(r->released, 10);
    assert_int_equal(r->lost, 0);
    check_file(g, "s.rec.part", "aaaaaaaaaa"); /* the 7 bytes of 'b' are gone again */
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->released, 25);

    faults.short_call = faults.calls[OP_APPEND] + 1;
    faults.short_len = 3;
    faults.short_error = 0;
    put_batch(g, p, 'd', 8);
    r = run_job(g);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->released, 8);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_string_equal(listing(g), "s.rec");
    check_file(g, "s.rec", "aaaaaaaaaabbbbbbbbbbbbbbbbbbbbcccccdddddddd");
    rig_free(g);
}

/* ---- sidecars (output.part_manifest) ------------------------------------------------------- */

typedef struct test_sidecar {
    writer_sidecar sc;
    unsigned *freed;
} test_sidecar;

static char *sidecar_render(const writer_sidecar *sc, const char *final_rel)
{
    (void)sc;
    size_t n = strlen(final_rel) + 16;
    char *text = malloc(n);
    if (text)
        snprintf(text, n, "file=%s\n", final_rel);
    return text;
}

static void sidecar_free(writer_sidecar *sc)
{
    test_sidecar *t = (test_sidecar *)sc;
    (*t->freed)++;
    free(t);
}

static writer_sidecar *sidecar_new(unsigned *freed)
{
    test_sidecar *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->sc.suffix = ".json";
    t->sc.render = sidecar_render;
    t->sc.free = sidecar_free;
    t->freed = freed;
    return &t->sc;
}

/* The sidecar appears only after the part's rename, named after its final name (collision
 * suffix included), and is freed with the part. */
static void sidecar_after_finalize(void **state)
{
    (void)state;
    rig *g = rig_new();
    unsigned freed = 0;
    FILE *f = fopen(tu_at(g->root, "t.rec"), "w"); /* taken: the part becomes t-1.rec */
    assert_non_null(f);
    fclose(f);
    writer_part *p = writer_part_new("t.rec", 0);
    assert_non_null(p);
    writer_part_set_sidecar(p, sidecar_new(&freed));
    put_batch(g, p, 's', 3);
    const writer_result *r = run_job(g);
    assert_int_equal(r->sidecars, 0);
    assert_string_equal(listing(g), "t-1.rec.part t.rec"); /* not finalized: no sidecar */
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(r->sidecars, 1);
    assert_int_equal(r->sidecar_failures, 0);
    assert_string_equal(listing(g), "t-1.rec t-1.rec.json t.rec");
    check_file(g, "t-1.rec.json", "file=t-1.rec\n");
    assert_int_equal(freed, 1);
    rig_free(g);
}

/* A sidecar that cannot be stored is counted; the part stays finalized. */
static void sidecar_failure_is_counted(void **state)
{
    (void)state;
    rig *g = rig_new();
    unsigned freed = 0;
    writer_part *p = writer_part_new("u.rec", 0);
    assert_non_null(p);
    writer_part_set_sidecar(p, sidecar_new(&freed));
    put_batch(g, p, 'u', 2);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    fail_calls(OP_STORE, 1, 1, -ENOSPC);
    const writer_result *r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(r->retry_error, 0);
    assert_int_equal(r->sidecars, 0);
    assert_int_equal(r->sidecar_failures, 1);
    assert_string_equal(listing(g), "u.rec");
    check_file(g, "u.rec", "uu");
    assert_int_equal(freed, 1);
    rig_free(g);
}

/* A part left as .part (its end failed for good) gets no sidecar, and one whose end is retried
 * gets it only once it is finalized. */
static void no_sidecar_without_finalize(void **state)
{
    (void)state;
    rig *g = rig_new();
    unsigned freed = 0;
    writer_part *p = writer_part_new("v.rec", 0);
    assert_non_null(p);
    writer_part_set_sidecar(p, sidecar_new(&freed));
    put_batch(g, p, 'v', 2);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    fail_calls(OP_FINALIZE, 1, 1, -EINVAL);
    const writer_result *r = run_job(g);
    assert_int_equal(r->abandoned, 1);
    assert_int_equal(r->sidecars + r->sidecar_failures, 0);
    assert_string_equal(listing(g), "v.rec.part");
    assert_int_equal(freed, 1);

    writer_part *q = writer_part_new("w.rec", 0);
    assert_non_null(q);
    writer_part_set_sidecar(q, sidecar_new(&freed));
    put_batch(g, q, 'w', 2);
    assert_int_equal(writer_end_part(&g->q, q, NULL, 0), 0);
    fail_calls(OP_FINALIZE, 2, 2, -ENOSPC);
    r = run_job(g);
    assert_int_equal(r->retry_error, -ENOSPC);
    assert_int_equal(r->sidecars, 0);
    assert_string_equal(listing(g), "v.rec.part w.rec.part");
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(r->sidecars, 1);
    assert_string_equal(listing(g), "v.rec.part w.rec w.rec.json");
    assert_int_equal(freed, 2);
    rig_free(g);
}

/* Bytes for p and, before the seal, a progress sidecar for them. */
static void put_progress_batch(rig *g, writer_part *p, char c, size_t len, unsigned *freed)
{
    char buf[256];
    memset(buf, c, len);
    assert_int_equal(writer_put(&g->w, &g->q, p, buf, len), 0);
    writer_set_progress(&g->q, p, sidecar_new(freed));
    writer_seal(&g->q);
}

/* A progress sidecar lies beside the .part once its batch is written (under the name the part
 * was created with), only the newest of a job is stored, and the part's end removes it. One
 * for a batch of another part, or for no bytes, is dropped. */
static void progress_beside_the_part(void **state)
{
    (void)state;
    rig *g = rig_new();
    unsigned freed = 0;
    FILE *f = fopen(tu_at(g->root, "t.rec"), "w"); /* taken: the part becomes t-1.rec */
    assert_non_null(f);
    fclose(f);
    writer_part *p = writer_part_new("t.rec", 0);
    assert_non_null(p);
    writer_set_progress(&g->q, p, sidecar_new(&freed)); /* nothing open: dropped */
    assert_int_equal(freed, 1);
    put_progress_batch(g, p, 'a', 2, &freed);
    put_progress_batch(g, p, 'b', 2, &freed);
    fail_calls(OP_STORE, 2, 2, -ENOSPC); /* would fail a second store in this job */
    const writer_result *r = run_job(g);
    assert_int_equal(r->sidecar_failures, 0); /* the first batch's was superseded: one store */
    assert_string_equal(listing(g), "t-1.rec.part t-1.rec.part.json t.rec");
    check_file(g, "t-1.rec.part.json", "file=t-1.rec\n");
    put_progress_batch(g, p, 'c', 1, &freed);
    r = run_job(g);
    assert_int_equal(r->sidecar_failures, 1); /* the second store: counted, the data written */
    assert_int_equal(r->retry_error, 0);
    check_file(g, "t-1.rec.part", "aabbc");
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_string_equal(listing(g), "t-1.rec t.rec");
    assert_int_equal(freed, 4);
    rig_free(g);
}

/* A part that ends in the same job stores no progress; one whose file vanished loses the progress
 * of the vanished file; one left as .part keeps it for recovery. */
static void progress_follows_the_file(void **state)
{
    (void)state;
    rig *g = rig_new();
    g->w.ops = &writer_file_ops_real;
    unsigned freed = 0;
    writer_part *p = writer_part_new("e.rec", 0);
    assert_non_null(p);
    put_progress_batch(g, p, 'e', 2, &freed);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    run_job(g);
    assert_string_equal(listing(g), "e.rec");

    writer_part *v = writer_part_new("v.rec", 0);
    assert_non_null(v);
    assert_int_equal(writer_part_set_preamble(v, "H", 1), 0);
    put_progress_batch(g, v, 'H', 1, &freed);
    run_job(g);
    assert_string_equal(listing(g), "e.rec v.rec.part v.rec.part.json");
    assert_int_equal(unlink(tu_at(g->root, "v.rec.part")), 0);
    put_batch(g, v, 'f', 2);
    const writer_result *r = run_job(g);
    assert_int_equal(r->retry_error, -ENOENT);
    assert_string_equal(listing(g), "e.rec"); /* it described the vanished file */
    run_job(g);
    assert_string_equal(listing(g), "e.rec v.rec.part");

    g->w.ops = &faulty_ops;
    writer_part *w = writer_part_new("w.rec", 0);
    assert_non_null(w);
    put_progress_batch(g, w, 'w', 2, &freed);
    run_job(g);
    assert_int_equal(writer_end_part(&g->q, w, NULL, 0), 0);
    fail_calls(OP_FINALIZE, 1, 1, -EINVAL);
    r = run_job(g);
    assert_int_equal(r->abandoned, 1);
    assert_string_equal(listing(g), "e.rec v.rec.part w.rec.part w.rec.part.json");
    assert_int_equal(writer_end_part(&g->q, v, NULL, 0), 0);
    run_job(g);
    assert_int_equal(freed, 3);
    rig_free(g);
}

typedef struct named_log {
    unsigned calls;
    uint32_t tag;
    char rel[64];
    bool final;
} named_log;

static void record_name(void *ctx, uint32_t tag, const char *rel, bool final)
{
    named_log *n = ctx;
    n->calls++;
    n->tag = tag;
    snprintf(n->rel, sizeof n->rel, "%s", rel);
    n->final = final;
}

/* A part created under a collision suffix is reported once, after its job; one finalized under
 * another name than its .part had is reported as final; a part that keeps its name, never. */
static void on_named_reports_new_names(void **state)
{
    (void)state;
    rig *g = rig_new();
    FILE *f = fopen(tu_at(g->root, "t.rec"), "w"); /* taken: the part's file is t-1.rec.part */
    assert_non_null(f);
    fclose(f);
    named_log n = {0};
    writer_part *p = writer_part_new("t.rec", 0);
    assert_non_null(p);
    writer_part_on_named(p, record_name, &n, 7);
    put_batch(g, p, 'a', 2);
    run_job(g);
    assert_int_equal(n.calls, 1);
    assert_int_equal(n.tag, 7);
    assert_string_equal(n.rel, "t-1.rec");
    assert_false(n.final);
    put_batch(g, p, 'b', 2);
    run_job(g);
    assert_int_equal(n.calls, 1); /* no new name */
    f = fopen(tu_at(g->root, "t-1.rec"), "w"); /* taken before the part's end: t-1-1.rec */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    run_job(g);
    assert_int_equal(n.calls, 2);
    assert_true(n.final);
    check_file(g, n.rel, "aabb");

    named_log m = {0};
    writer_part *q = writer_part_new("u.rec", 0);
    assert_non_null(q);
    writer_part_on_named(q, record_name, &m, 0);
    put_batch(g, q, 'u', 1);
    assert_int_equal(writer_end_part(&g->q, q, NULL, 0), 0);
    run_job(g);
    assert_int_equal(m.calls, 0);
    rig_free(g);
}

/* ---- a seek index fed with the points of plain bytes ---------------------------------------- */

/* The start of the packet after the one at pos of a CARLA log (5-byte packet headers). */
static size_t next_packet(const recd_buf *log, size_t pos)
{
    uint32_t size = (uint32_t)log->data[pos + 1] | (uint32_t)log->data[pos + 2] << 8 |
                    (uint32_t)log->data[pos + 3] << 16 | (uint32_t)log->data[pos + 4] << 24;
    return pos + 5 + size;
}

/* A synthetic CARLA log whose map name is stretched so that a frame starts gap bytes before the
 * first WRITER_ALIGN boundary: the last frame that can, or (first) the first frame, which its
 * index keeps. */
static void stretched_log(recd_buf *log, size_t gap, bool first)
{
    recd_synth_params sp = {recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, 30000, 7};
    recd_buf raw = {0};
    assert_int_equal(recd_synth_write(&sp, recd_buf_sink(&raw), NULL), 0);
    size_t map_len = raw.data[26] | (size_t)raw.data[27] << 8, head = 28 + map_len;
    size_t target = head;
    for (size_t pos = head; !first && pos <= WRITER_ALIGN - gap; pos = next_packet(&raw, pos))
        if (raw.data[pos] == 0)
            target = pos;
    size_t stretch = WRITER_ALIGN - gap - target;
    assert_true(raw.len > 3 * WRITER_ALIGN && map_len + stretch <= 0xFFFF);
    assert_int_equal(recd_buf_append(log, raw.data, 26), 0);
    uint8_t len2[2] = {(uint8_t)(map_len + stretch), (uint8_t)((map_len + stretch) >> 8)};
    assert_int_equal(recd_buf_append(log, len2, 2), 0);
    assert_int_equal(recd_buf_append(log, raw.data + 28, map_len), 0);
    for (size_t i = 0; i < stretch; i++)
        assert_int_equal(recd_buf_append(log, "x", 1), 0);
    assert_int_equal(recd_buf_append(log, raw.data + head, raw.len - head), 0);
    recd_buf_free(&raw);
}

/* Every entry of t.log.part.idx as it stands points at a frame that is whole in t.log.part (a
 * scan finds no other), however a batch ended inside the next frame. */
static void entries_point_at_whole_frames(const rig *g, const recd_buf *log)
{
    size_t len, ilen;
    uint8_t *part = tu_read_file(tu_at(g->root, "t.log.part"), &len);
    uint8_t *idx = tu_read_file(tu_at(g->root, "t.log.part.idx"), &ilen);
    for (size_t e = RECD_SEEK_INDEX_HEADER_SIZE; idx && e + RECD_SEEK_INDEX_ENTRY_SIZE <= ilen;
         e += RECD_SEEK_INDEX_ENTRY_SIZE) {
        size_t at = 0;
        memcpy(&at, idx + e + 8, sizeof at < 8 ? sizeof at : 8); /* little-endian hosts */
        size_t end = at;
        while (log->data[end] != 1)
            end = next_packet(log, end);
        assert_true(next_packet(log, end) <= len);
    }
    free(part);
    free(idx);
}

/* A CARLA part whose index is fed with its frames (writer_put_point), as the daemon's CARLA
 * session feeds it: sealed at 64 KiB boundaries (points move with the bytes carried over, and a
 * cut that would split a frame's probe is made before the frame instead), with a full disk on
 * one append that the next job retries. Its NAME.part.idx only ever points at whole frames, and
 * its NAME.idx is what `rectool index` builds. */
static void fed_part(size_t gap, bool first)
{
    rig *g = rig_new();
    const recd_format *f = recd_format_find("carla");
    recd_buf log = {0};
    stretched_log(&log, gap, first);
    writer_part *p = writer_part_new("t.log", 0);
    assert_non_null(p);
    writer_part_set_seek_format(p, f);
    writer_part_feed_seek(p);
    size_t pos = 28 + (log.data[26] | (size_t)log.data[27] << 8);
    assert_int_equal(writer_put(&g->w, &g->q, p, log.data, pos), 0);
    fail_calls(OP_APPEND, 3, 3, -ENOSPC);
    unsigned points = 0, retries = 0;
    bool first_cut = true;
    while (pos < log.len) {
        size_t end = pos;
        while (log.data[end] != 1) /* to the frame's end packet */
            end = next_packet(&log, end);
        end = next_packet(&log, end);
        uint8_t *at = writer_reserve(&g->w, &g->q, p, end - pos);
        assert_non_null(at);
        memcpy(at, log.data + pos, end - pos);
        recd_seek_point pt;
        assert_true(recd_seek_index_point_at(f, at, end - pos, &pt));
        writer_put_point(&g->q, p, at, &pt);
        points++;
        pos = end;
        /* Later seals carry half a batch over: kept points move too. */
        if (writer_open_bytes(&g->q) < WRITER_ALIGN + (first_cut ? 0 : WRITER_ALIGN / 2))
            continue;
        writer_seal_aligned(&g->w, &g->q);
        const writer_result *r = run_job(g);
        if (first_cut) /* a frame whose probe the cut would split goes to the next batch */
            assert_int_equal(r->written, gap < RECD_SEEK_INDEX_PROBE_SIZE ? WRITER_ALIGN - gap
                                                                         : WRITER_ALIGN);
        first_cut = false;
        retries += r->retry_error == -ENOSPC;
        entries_point_at_whole_frames(g, &log);
    }
    writer_seal(&g->q);
    assert_int_equal(writer_end_part(&g->q, p, NULL, 0), 0);
    const writer_result *r = run_job(g);
    assert_int_equal(r->finalized, 1);
    assert_int_equal(retries, 1);
    assert_true(points > 100);
    assert_string_equal(listing(g), "t.log t.log.idx");
    size_t len, ilen;
    uint8_t *data = tu_read_file(tu_at(g->root, "t.log"), &len);
    uint8_t *idx = tu_read_file(tu_at(g->root, "t.log.idx"), &ilen);
    assert_non_null(data);
    assert_non_null(idx);
    assert_int_equal(len, log.len);
    assert_memory_equal(data, log.data, len);
    recd_buf built = {0};
    assert_int_equal(recd_format_index_build(f, data, len, &built), 0);
    assert_true(built.len > RECD_SEEK_INDEX_HEADER_SIZE + 10 * RECD_SEEK_INDEX_ENTRY_SIZE);
    assert_int_equal(ilen, built.len);
    assert_memory_equal(idx, built.data, ilen);
    recd_buf_free(&built);
    free(data);
    free(idx);
    recd_buf_free(&log);
    rig_free(g);
}

/* The first cut would split a frame's probe. */
static void fed_points_index_is_a_scans(void **state)
{
    (void)state;
    fed_part(8, false);
}

/* The first batch ends inside a frame the index keeps (the first one): its entry waits for the
 * rest of the frame. */
static void fed_entry_waits_for_its_frame(void **state)
{
    (void)state;
    fed_part(100, true);
}

int main(void)
{
    signal(SIGXFSZ, SIG_IGN); /* short_write_then_fail(): EFBIG instead of the signal */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_disk_keeps_batches),
        cmocka_unit_test(create_fails_then_passes),
        cmocka_unit_test(no_empty_parts_pile_up),
        cmocka_unit_test(missing_root_waits),
        cmocka_unit_test(end_of_part_is_retried),
        cmocka_unit_test(vanished_part_is_given_up),
        cmocka_unit_test(vanished_part_starts_again),
        cmocka_unit_test(vanished_part_starts_at_its_restart_point),
        cmocka_unit_test(vanished_empty_part_starts_again),
        cmocka_unit_test(fsync_per_job),
        cmocka_unit_test(short_write_is_exact),
        cmocka_unit_test(sidecar_after_finalize),
        cmocka_unit_test(sidecar_failure_is_counted),
        cmocka_unit_test(no_sidecar_without_finalize),
        cmocka_unit_test(progress_beside_the_part),
        cmocka_unit_test(progress_follows_the_file),
        cmocka_unit_test(on_named_reports_new_names),
        cmocka_unit_test(fed_points_index_is_a_scans),
        cmocka_unit_test(fed_entry_waits_for_its_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
