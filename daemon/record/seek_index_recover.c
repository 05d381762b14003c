/* SPDX-License-Identifier: MIT */
/* Seek indexes after a crash (seek_index_recover.h). A part is read through a read-only mapping;
 * an index is small (32 bytes a keyframe or a second of frames) and read whole, up to a bound. */
#include "seek_index_recover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/format.h"
#include "recd/part_file.h"
#include "recd/seek_index.h"
#include "support/log.h"

#define INDEX_MAX_BYTES (256u << 20) /* 8 M points: more is not an index recd wrote */
#define INDEX_TMP_SUFFIX ".tmp"

typedef struct recover_walk {
    int root_fd;
    const recd_recover_summary *sum;
    int kept, rebuilt, removed, failed;
} recover_walk;

/* A whole regular file at dir/leaf (at most max bytes) into out; 0 or a negative errno. */
static int read_small(int dir, const char *leaf, size_t max, recd_buf *out)
{
    int fd = openat(dir, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL
                                          : (uint64_t)st.st_size > max ? -EFBIG : 0;
    if (rc == 0)
        rc = recd_buf_reserve(out, (size_t)st.st_size);
    while (rc == 0 && out->len < (size_t)st.st_size) {
        ssize_t n = read(fd, out->data + out->len, (size_t)st.st_size - out->len);
        if (n <= 0)
            rc = n < 0 ? -errno : -EIO;
        else
            out->len += (size_t)n;
    }
    close(fd);
    return rc;
}

/* data as rel's new index: the bytes into rel.tmp, then renamed over rel. */
static int store_index(int dir, const char *leaf, const recd_buf *data)
{
    char tmp[RECD_PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s%s", leaf, INDEX_TMP_SUFFIX);
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                    RECD_OUT_FILE_MODE);
    if (fd < 0)
        return -errno;
    size_t done = 0;
    int rc = 0;
    while (rc == 0 && done < data->len) {
        ssize_t n = write(fd, data->data + done, data->len - done);
        rc = n < 0 ? (errno == EINTR ? 0 : -errno) : 0;
        done += n > 0 ? (size_t)n : 0;
    }
    if (rc == 0 && fdatasync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0 && renameat(dir, tmp, dir, leaf) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dir, tmp, 0);
    return rc;
}

/* old's valid prefix for data, with the points after it appended, into out: true when old's
 * header matches data (else out is left empty and the index is rebuilt). */
static bool extend(const recd_format *f, const uint8_t *data, size_t len, const recd_buf *old,
                   recd_buf *out)
{
    recd_seek_index_status st;
    if (!old->len || recd_seek_index_check(f, data, len, old->data, old->len, &st) < 0 ||
        !st.header_ok)
        return false;
    size_t keep = RECD_SEEK_INDEX_HEADER_SIZE + st.valid * RECD_SEEK_INDEX_ENTRY_SIZE;
    recd_seek_index_writer w = {.header_done = true, .have_last = st.valid > 0, .last = st.last,
                                .last_kept = st.last.time, .kept_any = st.valid > 0,
                                .entries = st.valid};
    if (recd_buf_append(out, old->data, keep) < 0 ||
        recd_seek_index_grow(f, data, len, &w, out) < 0) {
        out->len = 0;
        return false;
    }
    return true;
}

/* Gives final_rel (a finalized part) a current index: the valid prefix of old (its index as
 * left, may be empty) with the points after it, when old is this part's; else one built from the
 * part. 1 kept, 2 rebuilt, 0 when the part's format has none, or a negative errno. */
static int settle(int root_fd, const char *final_rel, const recd_buf *old)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, final_rel, false, &leaf, NULL, 0);
    if (dir < 0)
        return dir;
    int fd = openat(dir, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    int rc = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
    void *map = MAP_FAILED;
    if (rc == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        rc = map == MAP_FAILED ? -errno : 0;
    }
    if (fd >= 0)
        close(fd);
    const recd_format *f = map != MAP_FAILED ? recd_format_sniff(map, (size_t)st.st_size, NULL) : NULL;
    if (rc == 0 && recd_seek_index_wanted(f)) {
        size_t len = (size_t)st.st_size;
        char name[RECD_PATH_MAX + 8];
        snprintf(name, sizeof name, "%s%s", leaf, RECD_SEEK_INDEX_SUFFIX);
        recd_buf fresh = {0};
        bool kept = extend(f, map, len, old, &fresh);
        rc = kept ? 0 : recd_format_index_build(f, map, len, &fresh);
        rc = rc < 0 ? rc : store_index(dir, name, &fresh) < 0 ? -EIO : kept ? 1 : 2;
        recd_buf_free(&fresh);
    }
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    close(dir);
    return rc;
}

static void count(recover_walk *w, int rc, const char *rel)
{
    if (rc == 1)
        w->kept++;
    else if (rc == 2)
        w->rebuilt++;
    else if (rc < 0) {
        w->failed++;
        log_warn("recovery: no seek index for %s: %s (`rectool index` makes one)", rel,
                 recd_strerror(rc));
    }
}

static const recd_recover_file *recovered_as(const recd_recover_summary *sum, const char *part)
{
    for (size_t i = 0; sum && i < sum->count; i++)
        if (strcmp(sum->files[i].part, part) == 0)
            return &sum->files[i];
    return NULL;
}

static bool exists_rel(int root_fd, const char *rel)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, rel, false, &leaf, NULL, 0);
    struct stat st;
    bool yes = dir >= 0 && fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (dir >= 0)
        close(dir);
    return yes;
}

static int visit(void *ctx, const recd_walk_entry *e)
{
    recover_walk *w = ctx;
    static const char suffix[] = RECD_PART_SUFFIX RECD_SEEK_INDEX_SUFFIX;
    size_t n = strlen(e->rel), m = sizeof suffix - 1;
    if (e->type != RECD_WALK_FILE || n <= m || n >= RECD_PATH_MAX ||
        strcmp(e->rel + n - m, suffix) != 0)
        return 0;
    char part[RECD_PATH_MAX], stem[RECD_PATH_MAX];
    snprintf(part, sizeof part, "%.*s", (int)(n - strlen(RECD_SEEK_INDEX_SUFFIX)), e->rel);
    snprintf(stem, sizeof stem, "%.*s", (int)(n - m), e->rel);
    if (exists_rel(w->root_fd, part))
        return 0; /* recovery left the .part: its index waits with it */
    const recd_recover_file *f = recovered_as(w->sum, part);
    const char *final_rel = f && f->action == RECD_RECOVER_FINALIZED ? f->final
                            : !f && exists_rel(w->root_fd, stem) ? stem /* died after the rename */
                                                                 : NULL;
    if (final_rel) {
        recd_buf old = {0};
        if (read_small(e->dir_fd, e->leaf, INDEX_MAX_BYTES, &old) < 0)
            old.len = 0; /* rebuilt */
        count(w, settle(w->root_fd, final_rel, &old), final_rel);
        recd_buf_free(&old);
    }
    if (unlinkat(e->dir_fd, e->leaf, 0) == 0)
        w->removed += final_rel == NULL;
    return 0;
}

int seek_indexes_recover(int root_fd, const recd_recover_summary *sum)
{
    recover_walk w = {.root_fd = root_fd, .sum = sum};
    int rc = recd_confined_walk(root_fd, 0, visit, &w);
    if (rc < 0)
        return rc;
    recd_buf none = {0};
    for (size_t i = 0; sum && i < sum->count; i++) { /* finalized without an index left */
        const recd_recover_file *f = &sum->files[i];
        char idx[RECD_PATH_MAX + 8];
        snprintf(idx, sizeof idx, "%s%s", f->final, RECD_SEEK_INDEX_SUFFIX);
        if (f->action == RECD_RECOVER_FINALIZED && !exists_rel(root_fd, idx))
            count(&w, settle(root_fd, f->final, &none), f->final);
    }
    if (w.kept || w.rebuilt || w.removed || w.failed)
        log_notice("recovery: seek indexes: %d kept, %d rebuilt, %d removed, %d failed", w.kept,
                   w.rebuilt, w.removed, w.failed);
    return w.kept + w.rebuilt;
}
