/* SPDX-License-Identifier: MIT */
/* Crash recovery: walk the output tree, have each .part planned from its content by the planner
 * given (the format table's, formats/format_recover.c), then truncate/patch, rename, remove or
 * quarantine it as planned. */
#include "storage/recovery_file_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf_grow.h"
#include "recd/part_file.h"

const char *recd_recover_action_name(recd_recover_action a)
{
    switch (a) {
    case RECD_RECOVER_FINALIZED: return "finalized";
    case RECD_RECOVER_REMOVED: return "removed";
    case RECD_RECOVER_QUARANTINED: return "quarantined";
    case RECD_RECOVER_FAILED: return "failed";
    }
    return "unknown";
}

int recd_recover__decide(recd_recover_plan *plan, recd_recover_action action, const char *kind,
                         const char *fmt, ...)
{
    plan->action = action;
    snprintf(plan->kind, sizeof plan->kind, "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->reason, sizeof plan->reason, fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- Applying plans to files ---------------------------------------------------------------- */

typedef struct recover_ctx {
    const recd_recover_options *opt;
    recd_recover_summary *sum;
    recd_recover_planner plan;
    const recovery_file_ops *ops;
} recover_ctx;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && memcmp(s + n - m, suffix, m) == 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void file_failed(recd_recover_file *f, int err, const char *fmt, ...)
{
    f->action = RECD_RECOVER_FAILED;
    f->error = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

/* Reads len bytes from the start; a short read is continued, an early end is an error (recovery
 * runs before any writer, so a part that seems to shrink is not to be cut to what was read). */
static int read_all(const recovery_file_ops *ops, int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = ops->pread_at(ops->data, fd, buf + got, len - got, got);
        if (n == -EINTR)
            continue;
        if (n < 0)
            return (int)n;
        if (n == 0)
            return -EIO; /* the end came before the size fstat gave */
        got += (size_t)n;
    }
    return 0;
}

/* Writes len bytes at off, continuing short writes; -EIO when nothing is written. */
static int write_all(const recovery_file_ops *ops, int fd, const uint8_t *buf, size_t len,
                     uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = ops->pwrite_at(ops->data, fd, buf + done, len - done, off + done);
        if (n == -EINTR)
            continue;
        if (n < 0)
            return (int)n;
        if (n == 0)
            return -EIO;
        done += (size_t)n;
    }
    return 0;
}

/* Parts up to this size are read into memory; larger ones are mapped (copy on write, so a plan
 * may patch its header in place), so recovery needs no memory in proportion to a part. */
#define RECOVER_READ_MAX (UINT64_C(64) << 20)

/* The content of a part: read into a buffer or mapped. */
typedef struct part_content {
    uint8_t *data;
    size_t len;
    bool mapped;
} part_content;

static int content_load(const recovery_file_ops *ops, int fd, uint64_t size, part_content *c)
{
    memset(c, 0, sizeof *c);
    if (size > SIZE_MAX - 1)
        return -EFBIG;
    if (size > RECOVER_READ_MAX) {
        void *map = NULL;
        int rc = ops->map(ops->data, fd, (size_t)size, &map);
        if (rc < 0)
            return rc;
        c->data = map;
        c->len = (size_t)size;
        c->mapped = true;
        return 0;
    }
    c->data = malloc(size ? (size_t)size : 1);
    if (!c->data)
        return -ENOMEM;
    c->len = (size_t)size;
    return read_all(ops, fd, c->data, (size_t)size);
}

static void content_free(const recovery_file_ops *ops, part_content *c)
{
    if (c->mapped)
        ops->unmap(ops->data, c->data, c->len);
    else
        free(c->data);
    memset(c, 0, sizeof *c);
}

/* Renames dir/leaf to new_leaf (never replacing) and records the new relative name. */
static int rename_entry(const recovery_file_ops *ops, recd_recover_file *f,
                        const recd_walk_entry *e, const char *new_leaf, bool sync)
{
    char chosen[RECD_PATH_MAX];
    int rc = ops->rename_noreplace(ops->data, e->dir_fd, e->leaf, new_leaf, chosen, sizeof chosen);
    if (rc < 0) {
        file_failed(f, rc, "cannot rename to '%s': %s", new_leaf, recd_strerror(rc));
        return rc;
    }
    if (sync)
        ops->sync_dir(ops->data, e->dir_fd); /* best effort: the rename itself succeeded */
    size_t dir_len = (size_t)(e->leaf - e->rel);
    int n = snprintf(f->final, sizeof f->final, "%.*s%s", (int)dir_len, e->rel, chosen);
    if (n < 0 || (size_t)n >= sizeof f->final)
        f->final[0] = '\0'; /* renamed, but the name does not fit the report */
    return 0;
}

/* Opens, reads, plans and applies one .part; fills f. A failure at any step leaves the part a
 * .part that the next run plans again from its content: the tail cut off is never a whole
 * record, and the header patch is redone from what decodes. */
static void recover_one(recover_ctx *c, const recd_walk_entry *e, recd_recover_file *f)
{
    const recd_recover_options *opt = c->opt;
    const recovery_file_ops *ops = c->ops;
    uint64_t max = opt->max_file_size ? opt->max_file_size : UINT64_MAX;
    int flags = (opt->dry_run ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = ops->open_at(ops->data, e->dir_fd, e->leaf, flags);
    if (fd < 0) {
        file_failed(f, fd, "cannot open: %s", recd_strerror(fd));
        return;
    }
    recovery_file_stat st;
    part_content content = {0};
    int rc = ops->stat_fd(ops->data, fd, &st);
    if (rc < 0) {
        file_failed(f, rc, "cannot stat: %s", recd_strerror(rc));
        goto out;
    }
    if (!st.is_regular) {
        file_failed(f, -EINVAL, "not a regular file");
        goto out;
    }
    if (st.nlink != 1) {
        /* A hard link could make us truncate a file that lives elsewhere. */
        file_failed(f, -EPERM, "has %lu links; refusing to modify a shared file", st.nlink);
        goto out;
    }
    f->size_before = st.size;
    if (st.size > max) {
        file_failed(f, -EFBIG, "%llu bytes is over the %llu-byte recovery limit",
                    (unsigned long long)st.size, (unsigned long long)max);
        goto out;
    }
    rc = content_load(ops, fd, st.size, &content);
    if (rc < 0) {
        file_failed(f, rc, "cannot read %llu bytes: %s", (unsigned long long)st.size,
                    recd_strerror(rc));
        goto out;
    }
    uint8_t *buf = content.data;
    size_t got = content.len;
    recd_recover_plan plan;
    rc = c->plan(buf, got, &plan);
    if (rc < 0) {
        file_failed(f, rc, "cannot plan: %s", recd_strerror(rc));
        goto out;
    }
    f->action = plan.action;
    snprintf(f->kind, sizeof f->kind, "%s", plan.kind);
    snprintf(f->message, sizeof f->message, "%s", plan.reason);
    f->size_after = plan.action == RECD_RECOVER_FINALIZED ? plan.keep : 0;
    f->units_kept = plan.action == RECD_RECOVER_FINALIZED ? plan.units : 0;
    f->unit = plan.unit;
    f->bytes_dropped = plan.action == RECD_RECOVER_QUARANTINED ? 0 : got - f->size_after;
    if (plan.action == RECD_RECOVER_QUARANTINED)
        f->size_after = got;
    if (opt->dry_run)
        goto out;
    if (plan.action == RECD_RECOVER_FINALIZED) {
        if (plan.keep < got && (rc = ops->truncate(ops->data, fd, plan.keep)) < 0) {
            file_failed(f, rc, "cannot truncate to %llu bytes: %s",
                        (unsigned long long)plan.keep, recd_strerror(rc));
            goto out;
        }
        if (plan.header_len &&
            (rc = write_all(ops, fd, buf, (size_t)plan.header_len, 0)) < 0) {
            file_failed(f, rc, "cannot patch the header: %s", recd_strerror(rc));
            goto out;
        }
        if (opt->sync && (rc = ops->datasync(ops->data, fd)) < 0) {
            file_failed(f, rc, "fdatasync failed: %s", recd_strerror(rc));
            goto out;
        }
    }
    ops->close_fd(ops->data, fd);
    fd = -1;
    char new_leaf[RECD_PATH_NAME_MAX + 8];
    if (plan.action == RECD_RECOVER_REMOVED) {
        if ((rc = ops->unlink_at(ops->data, e->dir_fd, e->leaf)) < 0)
            file_failed(f, rc, "cannot remove: %s", recd_strerror(rc));
    } else if (plan.action == RECD_RECOVER_FINALIZED) {
        int keep = (int)(strlen(e->leaf) - strlen(RECD_PART_SUFFIX));
        snprintf(new_leaf, sizeof new_leaf, "%.*s", keep, e->leaf);
        rename_entry(ops, f, e, new_leaf, opt->sync);
    } else {
        snprintf(new_leaf, sizeof new_leaf, "%s" RECD_RECOVER_BAD_SUFFIX, e->leaf);
        rename_entry(ops, f, e, new_leaf, opt->sync);
    }
out:
    if (fd >= 0)
        ops->close_fd(ops->data, fd);
    content_free(ops, &content);
}

static int add_file(recd_recover_summary *s, recd_recover_file **out)
{
    if (s->count == s->cap) {
        recd_recover_file *n = recd__array_room(s->files, &s->cap, s->count, sizeof *n, 16);
        if (!n)
            return -ENOMEM;
        s->files = n;
    }
    *out = &s->files[s->count++];
    memset(*out, 0, sizeof **out);
    return 0;
}

static int on_entry(void *ctx, const recd_walk_entry *e)
{
    recover_ctx *c = ctx;
    recd_recover_summary *s = c->sum;
    switch (e->type) {
    case RECD_WALK_SYMLINK: s->symlinks_skipped++; return 0;
    case RECD_WALK_TOO_DEEP: s->too_deep++; return 0;
    case RECD_WALK_BAD_NAME: s->bad_names++; return 0;
    case RECD_WALK_FILE:
    case RECD_WALK_OTHER: break;
    }
    if (!ends_with(e->leaf, RECD_PART_SUFFIX))
        return 0;
    recd_recover_file *f;
    if (add_file(s, &f) < 0)
        return -ENOMEM;
    snprintf(f->part, sizeof f->part, "%s", e->rel);
    s->found++;
    if (e->type == RECD_WALK_OTHER)
        file_failed(f, -EINVAL, "not a regular file");
    else
        recover_one(c, e, f);
    switch (f->action) {
    case RECD_RECOVER_FINALIZED:
        s->finalized++;
        s->bytes_dropped += f->bytes_dropped;
        s->records_kept += f->units_kept;
        break;
    case RECD_RECOVER_REMOVED:
        s->removed++;
        s->bytes_dropped += f->bytes_dropped;
        break;
    case RECD_RECOVER_QUARANTINED: s->quarantined++; break;
    case RECD_RECOVER_FAILED: s->failed++; break;
    }
    return 0;
}

int recd_recover__root(int root_fd, const recd_recover_options *opt, recd_recover_summary *out,
                       recd_recover_planner plan)
{
    return recd_recover__root_ops(root_fd, opt, out, plan, &recovery_file_ops_system);
}

int recd_recover__root_ops(int root_fd, const recd_recover_options *opt, recd_recover_summary *out,
                           recd_recover_planner plan, const recovery_file_ops *ops)
{
    if (!out || !ops)
        return -EINVAL;
    recd_recover_options defaults = {0};
    recover_ctx c = {opt ? opt : &defaults, out, plan, ops};
    int rc = recd_confined_walk(root_fd, c.opt->max_depth, on_entry, &c);
    return rc < 0 ? rc : (int)(out->found > INT32_MAX ? INT32_MAX : out->found);
}

void recd_recover_summary_free(recd_recover_summary *s)
{
    if (!s)
        return;
    free(s->files);
    memset(s, 0, sizeof *s);
}
