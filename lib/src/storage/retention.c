/* SPDX-License-Identifier: MIT */
/* Retention: scan the finalized files recd marked as its own (own_mark.h), mark by age /
 * per-session count / total size, delete oldest first, prune emptied directories. */
#include "recd/retention.h"

#include "base/buf_grow.h"
#include "recd/format.h"
#include "recd/own_mark.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct candidate {
    char *path;
    size_t dir_len; /* length of the parent path: the session */
    uint64_t size;
    int64_t mtime_ns;
    recd_retention_reason reason; /* 0 = kept */
} candidate;

typedef struct scan {
    candidate *c;
    size_t n, cap;
    recd_retention_result *out;
} scan;

const char *recd_retention_reason_name(recd_retention_reason r)
{
    switch (r) {
    case RECD_RETENTION_AGE: return "age";
    case RECD_RETENTION_SESSION_COUNT: return "count";
    case RECD_RETENTION_TOTAL_SIZE: return "size";
    }
    return "unknown";
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* A file of a format recd writes, by its extension (the format table's; foreign replays are only
 * read, so never candidates). */
static bool is_written_format(const char *leaf)
{
    const char *dot = strrchr(leaf, '.');
    if (!dot || dot == leaf)
        return false;
    const recd_format *f;
    for (size_t i = 0; (f = recd_format_by_extension(dot + 1, i)) != NULL; i++)
        if (recd_format_is_recorded(f))
            return true;
    return false;
}

/* Recordings and recovery's quarantined NAME.part.bad (or NAME.part-N.bad), and of those only the
 * ones carrying recd's mark: nothing else is ever deleted, whatever else an operator keeps under
 * the root, whatever its extension (a part's manifest and seek index go with their part). */
static bool is_recording(const char *leaf)
{
    return is_written_format(leaf) || (ends_with(leaf, ".bad") && strstr(leaf, RECD_PART_SUFFIX) != NULL);
}

/* NAME + suffix, a file recd stored beside the part NAME, goes with the part. 0 when there is
 * none. */
static int unlink_beside(int root_fd, const char *rel, const char *suffix)
{
    char path[RECD_PATH_MAX + 8];
    if ((size_t)snprintf(path, sizeof path, "%s%s", rel, suffix) >= sizeof path)
        return 0;
    int rc = recd_confined_unlink(root_fd, path);
    return rc == -ENOENT ? 0 : rc;
}

/* What recd keeps beside a part: NAME.json, its manifest (output.part_manifest), and NAME.idx,
 * its seek index (RECD_SEEK_INDEX_SUFFIX, docs/formats/seek-index.md). */
static int unlink_manifest(int root_fd, const char *rel)
{
    int rc = unlink_beside(root_fd, rel, ".json");
    int rc2 = unlink_beside(root_fd, rel, ".idx");
    return rc < 0 ? rc : rc2;
}

static int on_entry(void *ctx, const recd_walk_entry *e)
{
    scan *s = ctx;
    if (e->type != RECD_WALK_FILE)
        return 0;
    if (ends_with(e->leaf, RECD_PART_SUFFIX)) {
        s->out->parts_skipped++;
        return 0;
    }
    if (!is_recording(e->leaf)) {
        s->out->others_skipped++;
        return 0;
    }
    if (!recd_own_mark_matches(e->dir_fd, e->leaf, e->rel)) {
        s->out->unmarked_skipped++; /* a recording's name, but not one recd wrote here */
        return 0;
    }
    if (s->n == s->cap) {
        candidate *c = recd__array_room(s->c, &s->cap, s->n, sizeof *c, 64);
        if (!c)
            return -ENOMEM;
        s->c = c;
    }
    char *path = strdup(e->rel);
    if (!path)
        return -ENOMEM;
    candidate *c = &s->c[s->n++];
    c->path = path;
    c->dir_len = e->leaf > e->rel ? (size_t)(e->leaf - e->rel) - 1 : 0;
    c->size = e->size;
    c->mtime_ns = e->mtime_ns;
    c->reason = 0;
    s->out->files_scanned++;
    s->out->bytes_scanned += e->size;
    return 0;
}

static int cmp_age(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int cmp_session(const candidate *x, const candidate *y)
{
    size_t n = x->dir_len < y->dir_len ? x->dir_len : y->dir_len;
    int c = memcmp(x->path, y->path, n);
    if (c != 0)
        return c;
    return x->dir_len < y->dir_len ? -1 : x->dir_len > y->dir_len;
}

static int cmp_session_age(const void *a, const void *b)
{
    int c = cmp_session(a, b);
    return c ? c : cmp_age(a, b);
}

/* Keeps the newest max unmarked files of each session. Leaves c sorted by session. */
static void mark_session_counts(candidate *c, size_t n, uint32_t max)
{
    if (n > 1)
        qsort(c, n, sizeof *c, cmp_session_age);
    for (size_t g = 0; g < n;) {
        size_t end = g + 1, kept = 0;
        while (end < n && cmp_session(&c[g], &c[end]) == 0)
            end++;
        for (size_t k = g; k < end; k++)
            kept += c[k].reason == 0;
        for (size_t k = g; k < end && kept > max; k++) { /* oldest first */
            if (c[k].reason == 0) {
                c[k].reason = RECD_RETENTION_SESSION_COUNT;
                kept--;
            }
        }
        g = end;
    }
}

static void mark_age(candidate *c, size_t n, int64_t max_age_s, int64_t now_s)
{
    if (max_age_s <= 0 || now_s < INT64_MIN + max_age_s)
        return;
    int64_t cutoff_s = now_s - max_age_s;
    for (size_t i = 0; i < n; i++) {
        int64_t sec = c[i].mtime_ns / 1000000000 - (c[i].mtime_ns % 1000000000 < 0);
        if (sec < cutoff_s)
            c[i].reason = RECD_RETENTION_AGE;
    }
}

static void mark_total(candidate *c, size_t n, uint64_t max)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].reason == 0)
            total += c[i].size;
    for (size_t i = 0; i < n && total > max; i++) {
        if (c[i].reason == 0) {
            c[i].reason = RECD_RETENTION_TOTAL_SIZE;
            total -= c[i].size;
        }
    }
}

static int add_item(recd_retention_result *r, const candidate *c, int error)
{
    if (r->count == r->cap) {
        recd_retention_item *n = recd__array_room(r->items, &r->cap, r->count, sizeof *n, 16);
        if (!n)
            return -ENOMEM;
        r->items = n;
    }
    recd_retention_item *it = &r->items[r->count++];
    memset(it, 0, sizeof *it);
    strncpy(it->path, c->path, sizeof it->path - 1); /* walked paths fit RECD_PATH_MAX */
    it->size = c->size;
    it->mtime_ns = c->mtime_ns;
    it->reason = c->reason;
    it->error = error;
    return 0;
}

/* Deletes the marked candidates (oldest first) and prunes the directories they leave empty. */
static int apply(int root_fd, candidate *c, size_t n, bool dry_run, recd_retention_result *r)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i].reason == 0) {
            r->bytes_kept += c[i].size;
            continue;
        }
        int err = dry_run ? 0 : recd_confined_unlink(root_fd, c[i].path);
        if (err == -ENOENT)
            err = 0; /* already gone: the goal is met */
        if (add_item(r, &c[i], err) < 0)
            return -ENOMEM;
        if (err < 0) {
            r->errors++;
            r->bytes_kept += c[i].size;
        } else {
            r->deleted++;
            r->bytes_deleted += c[i].size;
            if (!dry_run && unlink_manifest(root_fd, c[i].path) < 0)
                r->errors++; /* the part is gone, its manifest stays */
        }
    }
    if (dry_run)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].reason == 0 || c[i].dir_len == 0)
            continue;
        c[i].path[c[i].dir_len] = '\0';
        int removed = recd_confined_prune_dirs(root_fd, c[i].path);
        if (removed > 0)
            r->dirs_removed += (size_t)removed;
    }
    return 0;
}

int recd_retention_run(int root_fd, const recd_retention_policy *policy, recd_retention_result *out)
{
    if (!policy || !out)
        return -EINVAL;
    scan s = {NULL, 0, 0, out};
    int rc = recd_confined_walk(root_fd, policy->max_depth, on_entry, &s);
    if (rc == 0) {
        mark_age(s.c, s.n, policy->max_age_s, policy->now_s ? policy->now_s : (int64_t)time(NULL));
        if (policy->max_files_per_session > 0)
            mark_session_counts(s.c, s.n, policy->max_files_per_session);
        if (s.n > 1)
            qsort(s.c, s.n, sizeof *s.c, cmp_age);
        if (policy->max_total_bytes > 0)
            mark_total(s.c, s.n, policy->max_total_bytes);
        rc = apply(root_fd, s.c, s.n, policy->dry_run, out);
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.c[i].path);
    free(s.c);
    if (rc < 0)
        return rc;
    return out->count > INT32_MAX ? INT32_MAX : (int)out->count;
}

void recd_retention_result_free(recd_retention_result *r)
{
    if (!r)
        return;
    free(r->items);
    memset(r, 0, sizeof *r);
}
