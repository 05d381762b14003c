/* SPDX-License-Identifier: MIT */
/* NAME.part.idx as NAME.part grows, then NAME.idx (seek_sidecar.h). The part is read back through
 * a read-only mapping: only its header and, unless the points are fed, the pages after the last
 * indexed point are touched. */
#include "seek_sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/log.h"

seek_sidecar *seek_sidecar_new(const recd_format *f)
{
    if (!recd_seek_index_wanted(f))
        return NULL;
    seek_sidecar *s = calloc(1, sizeof *s);
    if (s)
        s->format = f;
    return s;
}

void seek_sidecar_free(seek_sidecar *s)
{
    if (!s)
        return;
    free(s->rel);
    recd_buf_free(&s->pending);
    free(s);
}

void seek_sidecar_set_fed(seek_sidecar *s)
{
    if (s)
        s->fed = true;
}

void seek_sidecar_lose_point(seek_sidecar *s)
{
    if (s && s->fed)
        s->point_lost = true;
}

static void add_point(seek_sidecar *s, const recd_seek_point *p, const uint8_t *probe)
{
    if (recd_seek_index_add(s->format, &s->w, p, probe, &s->pending) < 0)
        s->point_lost = true; /* the next update gives up (it knows the part's name) */
}

/* The held entry's unit is whole: a later one started, or the part ended. */
static void release_held(seek_sidecar *s) { s->held = false; }

void seek_sidecar_point(seek_sidecar *s, const recd_seek_point *p, const uint8_t *probe)
{
    if (!s || !s->fed || s->failed)
        return;
    release_held(s);
    add_point(s, p, probe);
}

void seek_sidecar_point_started(seek_sidecar *s, const recd_seek_point *p, const uint8_t *probe)
{
    if (!s || !s->fed || s->failed)
        return;
    release_held(s);
    size_t before = s->pending.len;
    add_point(s, p, probe);
    if (s->pending.len > before && before <= UINT32_MAX) { /* kept (not thinned out) */
        s->held = true;
        s->held_at = (uint32_t)before;
    }
}

static void give_up(seek_sidecar *s, const char *what, const char *name, int rc)
{
    if (!s->failed)
        log_warn("writer: seek index of '%s' not kept (%s: %s); `rectool index` can rebuild it",
                 name, what, recd_strerror(rc));
    s->failed = true;
}

/* Opens rel (under the root) with flags; an fd or a negative errno. */
static int open_confined(int root_fd, const char *rel, int flags)
{
    const char *leaf;
    char why[256];
    int dfd = recd_confined_parent(root_fd, rel, false, &leaf, why, sizeof why);
    if (dfd < 0)
        return dfd;
    int fd = openat(dfd, leaf, flags | O_NOFOLLOW | O_CLOEXEC, RECD_OUT_FILE_MODE);
    int err = fd < 0 ? -errno : 0;
    close(dfd);
    return fd < 0 ? err : fd;
}

static int append_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Fed: the header (the first time) and the points handed over since the last store. */
static int fed_growth(seek_sidecar *s, const uint8_t *map, size_t len, recd_buf *more)
{
    if (!s->w.header_done) {
        int rc = recd_seek_index_header(s->format, map, len, more);
        if (rc < 0)
            return rc;
        s->w.header_done = true;
    }
    size_t ready = s->held ? s->held_at : s->pending.len;
    int rc = recd_buf_append(more, s->pending.data, ready);
    if (rc == 0 && ready) {
        memmove(s->pending.data, s->pending.data + ready, s->pending.len - ready);
        s->pending.len -= ready;
        s->held_at = 0;
    }
    return rc;
}

/* The new index bytes of the part's content map[0..len) into the sidecar. */
static int store_growth(seek_sidecar *s, int root_fd, const uint8_t *map, size_t len)
{
    recd_buf more = {0};
    int rc = s->fed ? fed_growth(s, map, len, &more)
                    : recd_seek_index_grow(s->format, map, len, &s->w, &more);
    if (rc == -EAGAIN || (rc == 0 && more.len == 0)) {
        recd_buf_free(&more);
        return 0; /* nothing new yet */
    }
    int fd = rc < 0 ? rc : open_confined(root_fd, s->rel, O_WRONLY | O_CREAT | O_APPEND);
    rc = fd < 0 ? fd : append_all(fd, more.data, more.len);
    if (fd >= 0)
        close(fd);
    recd_buf_free(&more);
    return rc;
}

void seek_sidecar_restart(seek_sidecar *s)
{
    if (!s)
        return;
    memset(&s->w, 0, sizeof s->w);
    s->pending.len = 0;
    s->held = false;
    s->scanned_size = 0;
    free(s->rel); /* made again (truncated) beside the new file */
    s->rel = NULL;
}

void seek_sidecar_update(seek_sidecar *s, int root_fd, const recd_part *file, bool final)
{
    if (s && final)
        release_held(s);
    if (s && s->point_lost)
        give_up(s, "out of memory", file->name, -ENOMEM);
    if (!s || s->failed || file->size == 0 || file->size > SIZE_MAX)
        return;
    uint64_t step = s->scanned_size / 8;
    if (step < SEEK_SIDECAR_STEP_MIN)
        step = SEEK_SIDECAR_STEP_MIN;
    else if (step > SEEK_SIDECAR_STEP_MAX)
        step = SEEK_SIDECAR_STEP_MAX;
    if (!final && file->size - s->scanned_size < step)
        return;
    char part[RECD_PATH_MAX + 16];
    snprintf(part, sizeof part, "%s%s", file->name, RECD_PART_SUFFIX);
    if (!s->rel) {
        size_t n = strlen(part) + sizeof RECD_SEEK_INDEX_SUFFIX;
        s->rel = malloc(n);
        if (!s->rel)
            return give_up(s, "out of memory", file->name, -ENOMEM);
        snprintf(s->rel, n, "%s%s", part, RECD_SEEK_INDEX_SUFFIX);
        int fd = open_confined(root_fd, s->rel, O_WRONLY | O_CREAT | O_TRUNC);
        if (fd < 0)
            return give_up(s, "cannot create", s->rel, fd);
        close(fd);
    }
    if (s->fed && s->w.header_done) { /* nothing to read back */
        int rc = s->pending.len ? store_growth(s, root_fd, NULL, 0) : 0;
        if (rc < 0)
            return give_up(s, "cannot append", s->rel, rc);
        s->scanned_size = file->size;
        return;
    }
    int fd = open_confined(root_fd, part, O_RDONLY);
    if (fd < 0)
        return give_up(s, "cannot read the part", part, fd);
    size_t len = (size_t)file->size;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    int err = map == MAP_FAILED ? -errno : 0;
    close(fd);
    if (err)
        return give_up(s, "cannot map the part", part, err);
    int rc = store_growth(s, root_fd, map, len);
    munmap(map, len);
    if (rc < 0)
        return give_up(s, "cannot append", s->rel, rc);
    s->scanned_size = file->size;
}

void seek_sidecar_finalize(seek_sidecar *s, int root_fd, const char *final_rel)
{
    if (!s || !s->rel)
        return;
    const char *from_leaf, *slash = strrchr(final_rel, '/');
    char why[256], to_leaf[RECD_PATH_MAX + 16];
    snprintf(to_leaf, sizeof to_leaf, "%s%s", slash ? slash + 1 : final_rel, RECD_SEEK_INDEX_SUFFIX);
    int dfd = recd_confined_parent(root_fd, s->rel, false, &from_leaf, why, sizeof why);
    if (dfd < 0) {
        log_warn("writer: cannot reach '%s': %s", s->rel, why);
        return;
    }
    /* A part whose index failed is complete: its partial index would only be a cost. */
    int rc = s->failed ? unlinkat(dfd, from_leaf, 0) : renameat(dfd, from_leaf, dfd, to_leaf);
    if (rc < 0)
        log_warn("writer: cannot %s '%s': %s", s->failed ? "remove" : "rename", s->rel,
                 strerror(errno));
    close(dfd);
}
