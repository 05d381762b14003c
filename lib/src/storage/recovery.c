/* SPDX-License-Identifier: MIT */
/* Crash recovery: walk the output tree, have each .part planned from its content by the planner
 * given (the format table's, formats/format_recover.c), then truncate/patch, rename, remove or
 * quarantine it as planned. */
#include "storage/recovery_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd_io.h"

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

static int read_all(int fd, uint8_t *buf, size_t len, size_t *got)
{
    *got = 0;
    while (*got < len) {
        ssize_t n = pread(fd, buf + *got, len - *got, (off_t)*got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break; /* shrank meanwhile: plan what is there */
        *got += (size_t)n;
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

static int content_load(int fd, uint64_t size, part_content *c)
{
    memset(c, 0, sizeof *c);
    if (size > SIZE_MAX - 1)
        return -EFBIG;
    if (size > RECOVER_READ_MAX) {
        void *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
            return -errno;
        madvise(map, (size_t)size, MADV_SEQUENTIAL); /* a hint: read ahead, drop behind */
        c->data = map;
        c->len = (size_t)size;
        c->mapped = true;
        return 0;
    }
    c->data = malloc(size ? (size_t)size : 1);
    if (!c->data)
        return -ENOMEM;
    return read_all(fd, c->data, (size_t)size, &c->len);
}

static void content_free(part_content *c)
{
    if (c->mapped)
        munmap(c->data, c->len);
    else
        free(c->data);
    memset(c, 0, sizeof *c);
}

/* Renames dir/leaf to new_leaf (never replacing) and records the new relative name. */
static int rename_entry(recd_recover_file *f, const recd_walk_entry *e, const char *new_leaf,
                        bool sync)
{
    char chosen[RECD_PATH_MAX];
    int rc = recd_rename_noreplace(e->dir_fd, e->leaf, new_leaf, chosen, sizeof chosen);
    if (rc < 0) {
        file_failed(f, rc, "cannot rename to '%s': %s", new_leaf, recd_strerror(rc));
        return rc;
    }
    if (sync)
        fsync(e->dir_fd); /* best effort: the rename itself succeeded */
    size_t dir_len = (size_t)(e->leaf - e->rel);
    int n = snprintf(f->final, sizeof f->final, "%.*s%s", (int)dir_len, e->rel, chosen);
    if (n < 0 || (size_t)n >= sizeof f->final)
        f->final[0] = '\0'; /* renamed, but the name does not fit the report */
    return 0;
}

/* Opens, reads, plans and applies one .part; fills f. */
static void recover_one(recover_ctx *c, const recd_walk_entry *e, recd_recover_file *f)
{
    const recd_recover_options *opt = c->opt;
    uint64_t max = opt->max_file_size ? opt->max_file_size : UINT64_MAX;
    int flags = (opt->dry_run ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = openat(e->dir_fd, e->leaf, flags);
    if (fd < 0) {
        file_failed(f, -errno, "cannot open: %s", strerror(errno));
        return;
    }
    struct stat st;
    part_content content = {0};
    if (fstat(fd, &st) < 0) {
        file_failed(f, -errno, "cannot stat: %s", strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        file_failed(f, -EINVAL, "not a regular file");
        goto out;
    }
    if (st.st_nlink != 1) {
        /* A hard link could make us truncate a file that lives elsewhere. */
        file_failed(f, -EPERM, "has %ju links; refusing to modify a shared file",
                    (uintmax_t)st.st_nlink);
        goto out;
    }
    f->size_before = (uint64_t)st.st_size;
    if ((uint64_t)st.st_size > max) {
        file_failed(f, -EFBIG, "%ju bytes is over the %llu-byte recovery limit",
                    (uintmax_t)st.st_size, (unsigned long long)max);
        goto out;
    }
    int rc = content_load(fd, (uint64_t)st.st_size, &content);
    if (rc < 0) {
        file_failed(f, rc, "cannot read %ju bytes: %s", (uintmax_t)st.st_size, recd_strerror(rc));
        goto out;
    }
    uint8_t *buf = content.data;
    size_t got = content.len;
    f->size_before = got;
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
    f->bytes_dropped = plan.action == RECD_RECOVER_QUARANTINED ? 0 : got - f->size_after;
    if (plan.action == RECD_RECOVER_QUARANTINED)
        f->size_after = got;
    if (opt->dry_run)
        goto out;
    if (plan.action == RECD_RECOVER_FINALIZED) {
        if (plan.keep < got && ftruncate(fd, (off_t)plan.keep) < 0) {
            file_failed(f, -errno, "cannot truncate: %s", strerror(errno));
            goto out;
        }
        if (plan.header_len && (rc = recd__pwrite_all(fd, buf, (size_t)plan.header_len, 0)) < 0) {
            file_failed(f, rc, "cannot patch the header: %s", recd_strerror(rc));
            goto out;
        }
        if (opt->sync && fdatasync(fd) < 0) {
            file_failed(f, -errno, "fdatasync failed: %s", strerror(errno));
            goto out;
        }
    }
    close(fd);
    fd = -1;
    char new_leaf[RECD_PATH_NAME_MAX + 8];
    if (plan.action == RECD_RECOVER_REMOVED) {
        if (unlinkat(e->dir_fd, e->leaf, 0) < 0)
            file_failed(f, -errno, "cannot remove: %s", strerror(errno));
    } else if (plan.action == RECD_RECOVER_FINALIZED) {
        int keep = (int)(strlen(e->leaf) - strlen(RECD_PART_SUFFIX));
        snprintf(new_leaf, sizeof new_leaf, "%.*s", keep, e->leaf);
        rename_entry(f, e, new_leaf, opt->sync);
    } else {
        snprintf(new_leaf, sizeof new_leaf, "%s" RECD_RECOVER_BAD_SUFFIX, e->leaf);
        rename_entry(f, e, new_leaf, opt->sync);
    }
out:
    if (fd >= 0)
        close(fd);
    content_free(&content);
}

static int add_file(recd_recover_summary *s, recd_recover_file **out)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        recd_recover_file *n = realloc(s->files, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        s->files = n;
        s->cap = cap;
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
        if (strcmp(f->kind, "recap") == 0)
            s->ticks_kept += f->units_kept;
        else
            s->blocks_kept += f->units_kept;
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
    if (!out)
        return -EINVAL;
    recd_recover_options defaults = {0};
    recover_ctx c = {opt ? opt : &defaults, out, plan};
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
