/* Crash recovery: plan each .part from its content (.rec whole blocks, .recap complete gzip
 * members + header patch), then truncate/patch, rename, remove or quarantine it. */
#include "recd/recovery.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "formats/rec/rec_format.h"
#include "formats/recap/recap_format.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"

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

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int decide(recd_recover_plan *plan, recd_recover_action action, const char *kind,
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

/* A .rec header as recd writes it: 1000, then type 1 or 2, little-endian. */
static bool rec_header_prefix(const uint8_t *buf, size_t len)
{
    static const uint8_t sig[4] = {0xE8, 0x03, 0x00, 0x00};
    for (size_t i = 0; i < len && i < RECD_REC_HEADER_SIZE; i++) {
        if (i < 4 && buf[i] != sig[i])
            return false;
        if (i == 4 && buf[i] != RECD_REC_TYPE_VEHICLE && buf[i] != RECD_REC_TYPE_ONFOOT)
            return false;
        if (i > 4 && buf[i] != 0)
            return false;
    }
    return true;
}

int recd_rec__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (!rec_header_prefix(buf, len))
        return decide(plan, RECD_RECOVER_QUARANTINED, "unknown",
                      "starts like a .rec but the header is not 1000 + type 1/2");
    if (len < RECD_REC_HEADER_SIZE)
        return decide(plan, RECD_RECOVER_REMOVED, "samp-rec",
                      "only %zu bytes of a .rec header", len);
    /* The block size follows the header type recd wrote, as open.mp reads it. */
    bool vehicle = ld_le32(buf + 4) == RECD_REC_TYPE_VEHICLE;
    const char *kind = vehicle ? "samp-vehicle" : "samp-onfoot";
    size_t bs = vehicle ? RECD_REC_VEHICLE_BLOCK_SIZE : RECD_REC_ONFOOT_BLOCK_SIZE;
    size_t blocks = (len - RECD_REC_HEADER_SIZE) / bs;
    size_t keep = RECD_REC_HEADER_SIZE + blocks * bs;
    if (blocks == 0)
        return decide(plan, RECD_RECOVER_REMOVED, kind, "header only, %zu bytes of a first block",
                      len - keep);
    plan->keep = keep;
    plan->units = blocks;
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(buf, keep, &info, NULL);
    if (info.block_size == bs && recd_rec_valid_prefix(&info) == keep)
        return decide(plan, RECD_RECOVER_FINALIZED, kind,
                      "%zu whole blocks, %zu trailing bytes dropped, %u..%u ms", blocks,
                      len - keep, (unsigned)info.first_time_ms, (unsigned)info.last_time_ms);
    /* Kept anyway: the header type is what players of the file go by. */
    return decide(plan, RECD_RECOVER_FINALIZED, kind,
                  "%zu whole blocks, %zu trailing bytes dropped; the probe reads it as %s",
                  blocks, len - keep, recd_rec_layout_name(info.layout));
}

int recd_recap__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    static const char magic[] = RECD_RECAP_MAGIC;
    if (memcmp(buf, magic, len < 4 ? len : 4) != 0)
        return decide(plan, RECD_RECOVER_QUARANTINED, "unknown", "not a Recap magic");
    recd_recap_header h;
    int hr = recd_recap_header_decode(buf, len, &h, NULL);
    if (hr == -EAGAIN)
        return decide(plan, RECD_RECOVER_REMOVED, "recap", "only %zu bytes of a Recap header", len);
    if (hr < 0)
        return decide(plan, RECD_RECOVER_QUARANTINED, "recap", "invalid Recap header: %s",
                      recd_strerror(hr));
    recd_recap_decode_result res;
    memset(&res, 0, sizeof res);
    int rc = recd_recap_decode(buf, len, NULL, NULL, &res, NULL);
    if (rc < 0 && rc != -EBADMSG)
        return rc;
    if (!res.header_valid)
        return decide(plan, RECD_RECOVER_QUARANTINED, "recap", "the Recap header does not decode");
    if (res.members == 0 || res.valid_end <= res.data_offset)
        return decide(plan, RECD_RECOVER_REMOVED, "recap",
                      "header only, %llu bytes of a first gzip member",
                      (unsigned long long)(len - res.data_offset));
    uint32_t frames = res.ticks <= UINT32_MAX ? (uint32_t)res.ticks : 0;
    int64_t end_ms = res.header.start_ms;
    uint64_t span = res.ticks * RECD_RECAP_TICK_MS;
    if (res.ticks <= UINT64_MAX / RECD_RECAP_TICK_MS && span <= (uint64_t)INT64_MAX &&
        end_ms <= INT64_MAX - (int64_t)span)
        end_ms += (int64_t)span;
    rc = recd_recap_header_patch(buf, (size_t)res.data_offset, frames, end_ms);
    if (rc < 0)
        return decide(plan, RECD_RECOVER_QUARANTINED, "recap", "cannot patch the header: %s",
                      recd_strerror(rc));
    plan->keep = res.valid_end;
    plan->units = res.ticks;
    plan->header_len = res.data_offset;
    return decide(plan, RECD_RECOVER_FINALIZED, "recap",
                  "%llu complete gzip members, %llu ticks, %llu trailing bytes dropped",
                  (unsigned long long)res.members, (unsigned long long)res.ticks,
                  (unsigned long long)(len - res.valid_end));
}

int recd_recover_plan_buffer(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (!plan || (!buf && len))
        return -EINVAL;
    memset(plan, 0, sizeof *plan);
    if (len == 0)
        return decide(plan, RECD_RECOVER_REMOVED, "empty", "empty file");
    int claimed = recd_format_recover(buf, len, plan);
    if (claimed != 0)
        return claimed < 0 ? claimed : 0;
    return decide(plan, RECD_RECOVER_QUARANTINED, "unknown",
                  "neither a .rec nor a Recap header (first byte 0x%02x)", buf[0]);
}

/* ---- Applying plans to files ---------------------------------------------------------------- */

typedef struct recover_ctx {
    const recd_recover_options *opt;
    recd_recover_summary *sum;
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

static int write_all_at(int fd, const uint8_t *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
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
    rc = recd_recover_plan_buffer(buf, got, &plan);
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
        if (plan.header_len && (rc = write_all_at(fd, buf, (size_t)plan.header_len, 0)) < 0) {
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

int recd_recover_root(int root_fd, const recd_recover_options *opt, recd_recover_summary *out)
{
    if (!out)
        return -EINVAL;
    recd_recover_options defaults = {0};
    recover_ctx c = {opt ? opt : &defaults, out};
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
