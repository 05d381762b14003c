/* SPDX-License-Identifier: MIT */
/* A samp-player session's manifest file (player_store.h). The file is its first line,
 * the lines of committed parts (each ending in a comma), and a tail: the lines of the parts in
 * the window and "]}". A job appends what was committed since the last one, writes the tail
 * again after it and cuts the file there; the first line is written again, as long as before,
 * when the session is complete. A crash in the middle leaves whole lines before a torn end,
 * which the parser reads (recd_player_manifest_parse). A job that fails (the disk is full) loses
 * nothing: its lines wait for the next job, tried again after a backoff, also after the session
 * is gone; only a stop that finds it still failing gives up, and counts what it could not store
 * as lost. */
#include "player_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recd/part_file.h"
#include "record/sessions.h"
#include "support/log.h"

struct player_store {
    uv_work_t req;
    writer_stage *stage;
    session_env *env;  /* the registry's: its clock, metrics and shutdown */
    recd_session *s; /* NULL once released: its accounting went with it */
    char rel[RECD_PATH_MAX];
    char key[RECD_SESSION_KEY_MAX + 1];
    recd_player_manifest m; /* m.parts: the window, the latest parts */
    uint32_t first;         /* the number of m.parts[0] */
    recd_buf commit;        /* lines of parts that left the window, for the next job */
    bool dirty;             /* something changed since the last job took its copy */
    uint64_t accounted;     /* bytes of commit and writing counted in the session's buffer */
    /* The job's copy, and its own state. */
    recd_buf writing, tail;
    char header[RECD_PLAYER_LINE_MAX];
    size_t header_len;
    bool write_header;
    uint64_t committed_off; /* where the tail starts in the file */
    int result;
    bool busy, released, named;
    /* After a failed job: the first line on disk may be stale (written again by the next job),
     * the retry's backoff, and failures since the shutdown began. */
    bool header_due, failing, timer_ready, pending;
    bool removed; /* its file was removed behind recd's back: not written again */
    uv_timer_t retry; /* initialized at the first failure */
    uint32_t retry_delay_ms, stop_failures;
};

static bool kick(player_store *st);

player_store *player_store_new(recd_session *s, const char *rel, int64_t start_time_ms)
{
    player_store *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->m.parts = calloc(PLAYER_STORE_WINDOW, sizeof *st->m.parts);
    if (!st->m.parts) {
        free(st);
        return NULL;
    }
    st->m.cap = PLAYER_STORE_WINDOW;
    snprintf(st->rel, sizeof st->rel, "%s", rel);
    memcpy(st->key, s->key, sizeof st->key);
    memcpy(st->m.session, s->key, sizeof st->m.session);
    st->m.start_time_ms = start_time_ms;
    st->stage = s->env->writer;
    st->env = s->env;
    st->s = s;
    return st;
}

uint32_t player_store_count(const player_store *st) { return st->first + (uint32_t)st->m.nparts; }

recd_player_part *player_store_part(player_store *st, uint32_t n)
{
    return n >= st->first && n - st->first < st->m.nparts ? &st->m.parts[n - st->first] : NULL;
}

static void account(player_store *st, int64_t delta)
{
    st->accounted += (uint64_t)delta;
    if (st->s)
        session_account(st->s, delta);
}

/* The oldest part of a full window leaves it: its line goes to the next job's commit. */
static int commit_oldest(player_store *st)
{
    char line[RECD_PLAYER_LINE_MAX];
    int n = recd_player_part_line(&st->m.parts[0], true, line, sizeof line);
    if (n < 0 || recd_buf_append(&st->commit, line, (size_t)n) < 0)
        return -ENOMEM;
    account(st, n);
    memmove(st->m.parts, st->m.parts + 1, (st->m.nparts - 1) * sizeof *st->m.parts);
    st->m.nparts--;
    st->first++;
    return 0;
}

recd_player_part *player_store_add(player_store *st)
{
    if (player_store_count(st) >= RECD_PLAYER_MANIFEST_MAX_PARTS)
        return NULL;
    if (st->m.nparts == PLAYER_STORE_WINDOW && commit_oldest(st) < 0)
        return NULL;
    recd_player_part *p = &st->m.parts[st->m.nparts++];
    memset(p, 0, sizeof *p);
    return p;
}

/* ---- the job --------------------------------------------------------------------------------- */

static int put_all(int fd, const void *data, size_t len, uint64_t off)
{
    const char *p = data;
    while (len) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n, len -= (size_t)n, off += (uint64_t)n;
    }
    return 0;
}

/* The first store takes rel, or rel-1, rel-2 ... when another recording of the key has it. */
static int store_first(player_store *st)
{
    recd_buf all = {0};
    int rc = recd_buf_append(&all, st->header, st->header_len);
    if (rc == 0 && st->writing.len)
        rc = recd_buf_append(&all, st->writing.data, st->writing.len);
    if (rc == 0)
        rc = recd_buf_append(&all, st->tail.data, st->tail.len); /* with its NUL */
    char chosen[RECD_PATH_MAX];
    if (rc == 0)
        rc = recd_confined_store_text_new(st->stage->root_fd, st->rel, (const char *)all.data, true,
                                          chosen, sizeof chosen);
    free(all.data);
    if (rc < 0)
        return rc;
    memcpy(st->rel, chosen, sizeof st->rel);
    st->named = true;
    st->committed_off = st->header_len + st->writing.len;
    return 0;
}

static int store_more(player_store *st)
{
    const char *leaf;
    int dir = recd_confined_parent(st->stage->root_fd, st->rel, false, &leaf, NULL, 0);
    if (dir < 0)
        return dir;
    int fd = openat(dir, leaf, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    int rc = fd < 0 ? -errno : 0;
    close(dir);
    if (rc < 0)
        return rc;
    size_t tail_len = st->tail.len - 1; /* without its NUL */
    if (st->writing.len)
        rc = put_all(fd, st->writing.data, st->writing.len, st->committed_off);
    if (rc == 0)
        rc = put_all(fd, st->tail.data, tail_len, st->committed_off + st->writing.len);
    if (rc == 0 && ftruncate(fd, (off_t)(st->committed_off + st->writing.len + tail_len)) < 0)
        rc = -errno;
    if (rc == 0 && st->write_header)
        rc = put_all(fd, st->header, st->header_len, 0);
    if (rc == 0 && fdatasync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0)
        st->committed_off += st->writing.len;
    return rc;
}

static void store_work(uv_work_t *req)
{
    player_store *st = req->data;
    st->result = st->named ? store_more(st) : store_first(st);
}

/* ---- the store's lifetime and its retries -------------------------------------------------- */

static void timer_closed(uv_handle_t *h) { free(h->data); }

static void store_free(player_store *st)
{
    recd_buf_free(&st->commit);
    recd_buf_free(&st->writing);
    recd_buf_free(&st->tail);
    recd_player_manifest_free(&st->m);
    if (st->pending) { /* the shutdown may be waiting for it */
        recd_sessions *reg = sessions_of(st->env);
        reg->stores_pending--;
        if (reg->on.gone)
            reg->on.gone(reg->on.data);
    }
    if (st->timer_ready)
        uv_close((uv_handle_t *)&st->retry, timer_closed);
    else
        free(st);
}

static bool retry_waits(player_store *st)
{
    return st->timer_ready && uv_is_active((const uv_handle_t *)&st->retry);
}

/* A released store is freed once nothing is left to store. False when it was. */
static bool free_if_done(player_store *st)
{
    if (!st->released || st->busy || st->dirty || retry_waits(st))
        return true;
    store_free(st);
    return false;
}

static void retry_due(uv_timer_t *t)
{
    player_store *st = t->data;
    if (kick(st))
        free_if_done(st);
}

/* The stop found the store still failing: what it could not store is lost, counted as
 * recd_lost_bytes_total and in the stop message. */
static void give_up(player_store *st, int error)
{
    recd_sessions *reg = sessions_of(st->env);
    uint64_t lost = st->writing.len + st->commit.len + (st->tail.len ? st->tail.len - 1 : 0) +
                    (st->named ? 0 : st->header_len);
    lost = lost ? lost : 1;
    log_err("session '%s': its manifest %s still cannot be stored at shutdown (%s): %llu bytes "
            "of it are lost; %s",
            st->key, st->rel, recd_strerror(error), (unsigned long long)lost,
            st->named ? "the file lists the parts stored before, and recovery at the next start "
                        "completes it"
                      : "no manifest file was created (its parts are complete)");
    reg->bytes_lost += lost;
    recd_metrics_bytes_lost(st->env->metrics, lost);
    account(st, -(int64_t)st->accounted);
    store_free(st);
}

/* A job could not be queued or failed (the disk is full, read-only ...): what it was writing
 * stays for the next one, tried again after a backoff as the writer's are (sessions.c), and
 * counted as a write error (/healthz fails for a while). False when st was given up and freed. */
static bool store_failed(player_store *st, int error)
{
    recd_sessions *reg = sessions_of(st->env);
    reg->last_write_error_ms = sessions_now_ms(reg);
    recd_metrics_write_errors(st->env->metrics, error, 1);
    st->dirty = true;
    if (reg->stopping && ++st->stop_failures >= WRITE_RETRY_AT_STOP && st->released) {
        give_up(st, error);
        return false;
    }
    if (!st->failing)
        log_warn("session '%s': cannot store its manifest %s: %s (its lines are kept and the "
                 "store retried)",
                 st->key, st->rel, recd_strerror(error));
    st->failing = true;
    uint32_t cap = reg->stopping ? WRITE_RETRY_STOP_MAX_MS : WRITE_RETRY_MAX_MS;
    uint32_t delay = st->retry_delay_ms ? st->retry_delay_ms * 2 : WRITE_RETRY_FIRST_MS;
    st->retry_delay_ms = delay > cap ? cap : delay;
    if (!st->timer_ready) {
        uv_timer_init(st->env->loop, &st->retry);
        st->retry.data = st;
        st->timer_ready = true;
    }
    uv_timer_start(&st->retry, retry_due, st->retry_delay_ms, 0);
    return true;
}

/* The file (or its folder) was removed behind recd's back once it existed: the lines it held
 * are gone, and a file of only the later ones would mislead, so it is not written again. */
static void store_removed(player_store *st, int error)
{
    recd_sessions *reg = sessions_of(st->env);
    reg->last_write_error_ms = sessions_now_ms(reg);
    recd_metrics_write_errors(st->env->metrics, error, 1);
    log_warn("session '%s': its manifest %s was removed behind recd's back: it is not written "
             "again (its parts are not affected)",
             st->key, st->rel);
    st->removed = true;
    account(st, -(int64_t)st->writing.len);
    recd_buf_reset(&st->writing);
}

static void store_done(uv_work_t *req, int status)
{
    player_store *st = req->data;
    st->stage->jobs_running--; /* the root fd may be retired once no job uses it */
    st->busy = false;
    int rc = status < 0 ? status : st->result;
    if (rc < 0 && st->named && (rc == -ENOENT || rc == -ENOTDIR)) {
        store_removed(st, rc);
    } else if (rc < 0) {
        /* committed_off did not move: the next job writes these lines there again. */
        st->header_due = st->header_due || st->write_header;
        if (!store_failed(st, rc))
            return;
    } else {
        account(st, -(int64_t)st->writing.len);
        recd_buf_reset(&st->writing);
        st->header_due = false;
        if (st->failing)
            log_notice("session '%s': its manifest %s is stored again", st->key, st->rel);
        st->failing = false;
        st->retry_delay_ms = 0;
    }
    if (kick(st))
        free_if_done(st);
}

/* The job's copy: the commit taken over (after what a failed job left), the tail and the first
 * line rendered. Nothing changes when it fails. */
static int take_copy(player_store *st)
{
    char line[RECD_PLAYER_LINE_MAX];
    recd_buf_reset(&st->tail);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->m.nparts; i++) {
        int n = recd_player_part_line(&st->m.parts[i], i + 1 < st->m.nparts, line, sizeof line);
        rc = n < 0 ? n : recd_buf_append(&st->tail, line, (size_t)n);
    }
    if (rc == 0)
        rc = recd_buf_append(&st->tail, "]}\n", 4); /* with its NUL */
    int n = rc == 0 ? recd_player_manifest_header(&st->m, line, sizeof line) : rc;
    if (n < 0)
        return n;
    if (!st->writing.len) {
        recd_buf swap = st->writing;
        st->writing = st->commit;
        st->commit = swap;
    } else if (st->commit.len) {
        if ((rc = recd_buf_append(&st->writing, st->commit.data, st->commit.len)) < 0)
            return rc;
        recd_buf_reset(&st->commit);
    }
    st->write_header = !st->named || st->header_due || (size_t)n != st->header_len ||
                       memcmp(line, st->header, (size_t)n);
    memcpy(st->header, line, (size_t)n + 1);
    st->header_len = (size_t)n;
    return 0;
}

/* Starts a job for what changed, unless one runs or a retry waits for its time. False when the
 * store was given up and freed (a released one, at shutdown). */
static bool kick(player_store *st)
{
    if (st->removed) {
        account(st, -(int64_t)st->commit.len);
        recd_buf_reset(&st->commit);
        st->dirty = false;
    }
    if (st->busy || !st->dirty || retry_waits(st))
        return true;
    st->dirty = false;
    int rc = take_copy(st);
    if (rc == 0) {
        st->req.data = st;
        st->busy = true;
        st->stage->jobs_running++;
        rc = uv_queue_work(st->stage->loop, &st->req, store_work, store_done);
        if (rc < 0) {
            st->stage->jobs_running--;
            st->busy = false;
        }
    }
    return rc == 0 || store_failed(st, rc);
}

void player_store_save(player_store *st, bool complete)
{
    st->m.complete = st->m.complete || complete;
    st->dirty = true;
    kick(st);
}

void player_store_release(player_store *st)
{
    if (st->s)
        session_account(st->s, -(int64_t)st->accounted);
    st->s = NULL;
    st->released = true;
    if (!free_if_done(st))
        return;
    st->pending = true; /* still storing: the shutdown waits for it */
    sessions_of(st->env)->stores_pending++;
}
