/* SPDX-License-Identifier: MIT */
/* Confined part files: symlink-proof descent from the output root, exclusive create, full
 * appends and header patches, fd close/reopen for an LRU cache, no-replace finalize rename. */
#include "recd/part_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf_grow.h"
#include "base/fd_io.h"
#include "base/why.h"
#include "recd/fd_sink.h"
#include "recd/own_mark.h"

/* Tries of the create descent: retention may remove an emptied directory between our mkdirat
 * and openat; descending again recreates it. */
#define CREATE_RETRIES 3

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int part_fail(recd_part *p, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
    return rc;
}

int recd_out_root_open(const char *path, bool create)
{
    if (!path || !*path)
        return -EINVAL;
    if (create) {
        char tmp[4096];
        size_t len = strlen(path);
        if (len >= sizeof tmp)
            return -ENAMETOOLONG;
        memcpy(tmp, path, len + 1);
        for (size_t i = 1; i <= len; i++) {
            if (tmp[i] != '/' && tmp[i] != '\0')
                continue;
            char saved = tmp[i];
            tmp[i] = '\0';
            if (mkdir(tmp, RECD_OUT_DIR_MODE) < 0 && errno != EEXIST)
                return -errno;
            tmp[i] = saved;
        }
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Explains why openat(O_DIRECTORY|O_NOFOLLOW) of comp failed. */
static int explain_dir_open(int dfd, const char *shown, const char *comp, int err, char *why,
                            size_t cap)
{
    struct stat st;
    if ((err == ELOOP || err == ENOTDIR) && fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) {
            recd_why(why, cap, "'%s' is a symbolic link inside the output root; refusing to follow it",
                     shown);
            return -ELOOP;
        }
        if (!S_ISDIR(st.st_mode)) {
            recd_why(why, cap, "'%s' exists and is not a directory", shown);
            return -ENOTDIR;
        }
    }
    recd_why(why, cap, "cannot open directory '%s': %s", shown, strerror(err));
    return -err;
}

int recd_confined_parent(int root_fd, const char *rel, bool create, const char **leaf, char *why,
                         size_t why_cap)
{
    if (!rel || !recd_path_relative_ok(rel)) {
        recd_why(why, why_cap, "'%s' is not a confined relative path", rel ? rel : "(null)");
        return -EINVAL;
    }
    int dfd = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    if (dfd < 0) {
        recd_why(why, why_cap, "bad output root fd: %s", strerror(errno));
        return -errno;
    }
    const char *c = rel;
    for (;;) {
        size_t n = strcspn(c, "/");
        if (c[n] == '\0')
            break;
        char comp[RECD_PATH_NAME_MAX + 1];
        memcpy(comp, c, n); /* n <= RECD_PATH_NAME_MAX: checked by recd_path_relative_ok */
        comp[n] = '\0';
        int shown = (int)(c - rel + (ptrdiff_t)n);
        char shown_path[RECD_PATH_MAX];
        snprintf(shown_path, sizeof shown_path, "%.*s", shown, rel);
        if (create && mkdirat(dfd, comp, RECD_OUT_DIR_MODE) < 0 && errno != EEXIST) {
            int err = errno;
            recd_why(why, why_cap, "cannot create directory '%s': %s", shown_path, strerror(err));
            close(dfd);
            return -err;
        }
        int nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0) {
            int rc = explain_dir_open(dfd, shown_path, comp, errno, why, why_cap);
            close(dfd);
            return rc;
        }
        close(dfd);
        dfd = nfd;
        c += n + 1;
    }
    if (leaf)
        *leaf = c;
    return dfd;
}

/* One no-replace rename; filesystems without RENAME_NOREPLACE get link + unlink, which also
 * fails with EEXIST instead of replacing. */
static int rename_noreplace_once(int dir_fd, const char *from, const char *to)
{
    if (renameat2(dir_fd, from, dir_fd, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -errno;
    if (linkat(dir_fd, from, dir_fd, to, 0) < 0)
        return -errno;
    if (unlinkat(dir_fd, from, 0) < 0)
        return -errno;
    return 0;
}

/* Moves the written tmp in dir to leaf under a name no file has (leaf, or leaf's next free
 * variant), and puts that name, relative to the root (rel's folder), in chosen. */
static int take_free_name(int dir, const char *tmp, const char *rel, const char *leaf,
                          char *chosen, size_t chosen_cap)
{
    char taken[RECD_PATH_MAX];
    int rc = recd_rename_noreplace(dir, tmp, leaf, taken, sizeof taken);
    if (rc == 0 && (size_t)snprintf(chosen, chosen_cap, "%.*s%s", (int)(leaf - rel), rel, taken) >=
                       chosen_cap) {
        unlinkat(dir, taken, 0);
        rc = -ENAMETOOLONG;
    }
    return rc;
}

/* A new temporary file: a stale one (a crash) or anything planted under the name, a hard link
 * to another file included, is removed first, never opened, so nothing is written through it. */
static int create_tmp(int dir, const char *tmp)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
    int fd = openat(dir, tmp, flags, RECD_OUT_FILE_MODE);
    if (fd < 0 && errno == EEXIST && unlinkat(dir, tmp, 0) == 0)
        fd = openat(dir, tmp, flags, RECD_OUT_FILE_MODE);
    return fd < 0 ? -errno : fd;
}

/* recd_confined_store_text and _new: with chosen, the rename never replaces (the name it took
 * goes to chosen, relative to the root). */
static int store_text(int root_fd, const char *rel, const char *text, bool sync, char *chosen,
                      size_t chosen_cap)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, rel, true, &leaf, NULL, 0);
    if (dir < 0)
        return dir;
    char tmp[RECD_PATH_MAX + 8];
    int n = snprintf(tmp, sizeof tmp, ".%s.tmp", leaf);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        close(dir);
        return -ENAMETOOLONG;
    }
    int rc = 0;
    int fd = create_tmp(dir, tmp);
    if (fd < 0) {
        rc = -errno;
    } else {
        rc = recd_write_all(fd, text, strlen(text));
        if (rc == 0 && sync && fsync(fd) < 0)
            rc = -errno;
        if (close(fd) < 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && chosen)
            rc = take_free_name(dir, tmp, rel, leaf, chosen, chosen_cap);
        else if (rc == 0 && renameat(dir, tmp, dir, leaf) < 0)
            rc = -errno;
        if (rc < 0)
            unlinkat(dir, tmp, 0);
        else if (sync && fsync(dir) < 0)
            rc = -errno;
    }
    close(dir);
    return rc;
}

int recd_confined_store_text(int root_fd, const char *rel, const char *text, bool sync)
{
    return store_text(root_fd, rel, text, sync, NULL, 0);
}

int recd_confined_store_text_new(int root_fd, const char *rel, const char *text, bool sync,
                                 char *chosen, size_t chosen_cap)
{
    if (!chosen || !chosen_cap)
        return -EINVAL;
    return store_text(root_fd, rel, text, sync, chosen, chosen_cap);
}

int recd_confined_unlink(int root_fd, const char *rel)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, rel, false, &leaf, NULL, 0);
    if (dir < 0)
        return dir;
    int rc = unlinkat(dir, leaf, 0) < 0 ? -errno : 0;
    close(dir);
    return rc;
}

int recd_rename_noreplace(int dir_fd, const char *from, const char *to, char *chosen,
                          size_t chosen_cap)
{
    char name[RECD_PATH_MAX];
    for (unsigned n = 0; n < RECD_PART_MAX_SUFFIX; n++) {
        if (n == 0) {
            if (snprintf(name, sizeof name, "%s", to) >= (int)sizeof name)
                return -ENAMETOOLONG;
        } else if (recd_path_with_suffix(to, n, name, sizeof name) < 0) {
            return -ENAMETOOLONG;
        }
        int rc = rename_noreplace_once(dir_fd, from, name);
        if (rc == -EEXIST)
            continue;
        if (rc == 0 && chosen && snprintf(chosen, chosen_cap, "%s", name) >= (int)chosen_cap)
            return -ENAMETOOLONG;
        return rc;
    }
    return -EEXIST;
}

/* ---- Confined walk ------------------------------------------------------------------------- */

typedef struct walk_state {
    recd_walk_fn fn;
    void *ctx;
    unsigned max_depth;
    char rel[RECD_PATH_MAX];
} walk_state;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The sorted entry names of dfd, without "." and "..". */
static int read_names(int dfd, char ***out, size_t *count)
{
    *out = NULL;
    *count = 0;
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int err = errno;
        close(fd);
        return -err;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            rc = -errno;
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            char **nn = recd__array_room(names, &cap, n, sizeof *nn, 32);
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = -ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        free_names(names, n);
        return rc;
    }
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *count = n;
    return 0;
}

static int walk_dir(walk_state *w, int dfd, size_t rel_len, unsigned depth)
{
    char **names;
    size_t count;
    int rc = read_names(dfd, &names, &count);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < count && rc == 0; i++) {
        const char *name = names[i];
        int n = snprintf(w->rel + rel_len, sizeof w->rel - rel_len, "%s%s", rel_len ? "/" : "",
                         name);
        recd_walk_entry e = {RECD_WALK_BAD_NAME, w->rel, name, dfd, depth, 0, 0};
        if (n < 0 || (size_t)n >= sizeof w->rel - rel_len || !recd_path_relative_ok(name)) {
            w->rel[rel_len] = '\0';
            e.rel = name;
            rc = w->fn(w->ctx, &e);
            continue;
        }
        e.leaf = w->rel + rel_len + (rel_len ? 1 : 0);
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                rc = -errno;
            continue;
        }
        e.size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
        e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        if (S_ISDIR(st.st_mode)) {
            if (depth >= w->max_depth) {
                e.type = RECD_WALK_TOO_DEEP;
                rc = w->fn(w->ctx, &e);
                continue;
            }
            int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                if (errno == ELOOP || errno == ENOTDIR) { /* swapped for a link meanwhile */
                    e.type = RECD_WALK_SYMLINK;
                    rc = w->fn(w->ctx, &e);
                } else if (errno != ENOENT) {
                    rc = -errno;
                }
                continue;
            }
            rc = walk_dir(w, sub, rel_len + (size_t)n, depth + 1);
            close(sub);
            continue;
        }
        e.type = S_ISREG(st.st_mode) ? RECD_WALK_FILE
               : S_ISLNK(st.st_mode) ? RECD_WALK_SYMLINK
                                     : RECD_WALK_OTHER;
        rc = w->fn(w->ctx, &e);
    }
    w->rel[rel_len] = '\0';
    free_names(names, count);
    return rc;
}

int recd_confined_walk(int root_fd, unsigned max_depth, recd_walk_fn fn, void *ctx)
{
    if (!fn)
        return -EINVAL;
    walk_state *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->fn = fn;
    w->ctx = ctx;
    w->max_depth = max_depth == 0 ? RECD_WALK_DEFAULT_DEPTH
                 : max_depth > RECD_WALK_MAX_DEPTH ? RECD_WALK_MAX_DEPTH
                                                   : max_depth;
    int rc = walk_dir(w, root_fd, 0, 0);
    free(w);
    return rc;
}

int recd_confined_prune_dirs(int root_fd, const char *rel_dir)
{
    char dir[RECD_PATH_MAX];
    if (!rel_dir || snprintf(dir, sizeof dir, "%s", rel_dir) >= (int)sizeof dir)
        return -EINVAL;
    int removed = 0;
    while (dir[0]) {
        const char *leaf;
        int dfd = recd_confined_parent(root_fd, dir, false, &leaf, NULL, 0);
        if (dfd < 0)
            return dfd == -ENOENT ? removed : dfd;
        int rc = unlinkat(dfd, leaf, AT_REMOVEDIR) < 0 ? -errno : 0;
        close(dfd);
        if (rc == -ENOTEMPTY || rc == -EEXIST || rc == -ENOENT)
            return removed;
        if (rc < 0)
            return rc;
        removed++;
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            dir[0] = '\0';
    }
    return removed;
}

/* ---- Part files ---------------------------------------------------------------------------- */

/* name + ".part" */
static int part_path(const recd_part *p, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s" RECD_PART_SUFFIX, p->name);
    return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

/* Creates one candidate name in dfd: 1 = taken (try the next), 0 = created, < 0 = error. */
static int try_create(recd_part *p, int dfd, const char *leaf)
{
    struct stat st;
    if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return 1; /* the final name is taken, even by a symlink or directory */
    if (errno != ENOENT)
        return part_fail(p, -errno, "cannot check '%s': %s", leaf, strerror(errno));
    char part_leaf[RECD_PATH_NAME_MAX + 32];
    int n = snprintf(part_leaf, sizeof part_leaf, "%s" RECD_PART_SUFFIX, leaf);
    if (n < 0 || (size_t)n >= sizeof part_leaf)
        return part_fail(p, -ENAMETOOLONG, "'%s' is too long", leaf);
    int fd = openat(dfd, part_leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    RECD_OUT_FILE_MODE);
    if (fd < 0) {
        if (errno == EEXIST)
            return 1;
        return part_fail(p, -errno, "cannot create '%s': %s", part_leaf, strerror(errno));
    }
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        unlinkat(dfd, part_leaf, 0);
        return part_fail(p, -err, "cannot stat '%s': %s", part_leaf, strerror(err));
    }
    p->fd = fd;
    p->dev = (uint64_t)st.st_dev;
    p->ino = (uint64_t)st.st_ino;
    return 0;
}

/* After NAME-1 .. NAME-999, a few suffixes drawn from the clock, 1000 .. 999000999 (nine
 * digits fit the room path templates keep): a key opened again and again with one start time
 * still finds a name, and its data is not lost. */
#define WIDE_SUFFIX_TRIES 16

static uint64_t clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (uint64_t)getpid();
}

static unsigned suffix_number(unsigned n, uint64_t seed)
{
    if (n < RECD_PART_MAX_SUFFIX)
        return n;
    uint64_t x = (seed + n) * UINT64_C(0x9E3779B97F4A7C15); /* spread neighbouring seeds */
    return RECD_PART_MAX_SUFFIX + (unsigned)((x >> 32) % 999000000u);
}

int recd_part_create(recd_part *p, int root_fd, const char *rel)
{
    if (!p)
        return -EINVAL;
    memset(p, 0, sizeof *p);
    p->fd = -1;
    p->root_fd = root_fd;
    if (!rel || !recd_path_relative_ok(rel))
        return part_fail(p, -EINVAL, "'%s' is not a confined relative path", rel ? rel : "(null)");
    const char *slash = strrchr(rel, '/');
    if (strlen(rel) + 16 >= RECD_PATH_MAX ||
        strlen(slash ? slash + 1 : rel) > RECD_PATH_COMPONENT_MAX)
        return part_fail(p, -ENAMETOOLONG, "'%s' is too long for a part name", rel);
    int rc = -ENOENT;
    for (int attempt = 0; attempt < CREATE_RETRIES && rc == -ENOENT; attempt++) {
        const char *leaf;
        int dfd = recd_confined_parent(root_fd, rel, true, &leaf, p->error, sizeof p->error);
        if (dfd == -ENOENT)
            continue; /* a directory vanished between mkdirat and openat */
        if (dfd < 0)
            return dfd;
        size_t dir_len = (size_t)(leaf - rel);
        rc = -EEXIST;
        uint64_t seed = clock_seed();
        for (unsigned n = 0; n < RECD_PART_MAX_SUFFIX + WIDE_SUFFIX_TRIES && rc == -EEXIST; n++) {
            char cand[RECD_PATH_NAME_MAX + 32];
            if (n == 0)
                snprintf(cand, sizeof cand, "%s", leaf);
            else if (recd_path_with_suffix(leaf, suffix_number(n, seed), cand, sizeof cand) < 0)
                break;
            int t = try_create(p, dfd, cand);
            if (t == 0) {
                snprintf(p->name, sizeof p->name, "%.*s%s", (int)dir_len, rel, cand);
                /* Retention deletes only what carries this mark. Where the filesystem keeps no
                 * user xattrs the part is still written; retention keeps it and says so. */
                recd_own_mark_set(p->fd, p->name);
                rc = 0;
            } else if (t < 0) {
                rc = t;
            }
        }
        close(dfd);
    }
    if (rc == -EEXIST)
        part_fail(p, rc, "'%s' and its %d suffixed variants all exist", rel,
                  RECD_PART_MAX_SUFFIX - 1 + WIDE_SUFFIX_TRIES);
    return rc;
}

bool recd_part_is_open(const recd_part *p) { return p && p->fd >= 0; }

int recd_part_close_fd(recd_part *p)
{
    if (!p || p->fd < 0)
        return 0;
    int rc = close(p->fd);
    p->fd = -1;
    if (rc < 0 && errno != EINTR)
        return part_fail(p, -errno, "close '%s" RECD_PART_SUFFIX "': %s", p->name, strerror(errno));
    return 0;
}

/* Opens dir fd + leaf of the .part and checks it is still the file we created. */
static int open_part_dir(recd_part *p, const char **leaf, char *path, size_t cap)
{
    if (part_path(p, path, cap) < 0)
        return part_fail(p, -ENAMETOOLONG, "name too long");
    return recd_confined_parent(p->root_fd, path, false, leaf, p->error, sizeof p->error);
}

static int check_identity(recd_part *p, const struct stat *st, const char *path)
{
    if (!S_ISREG(st->st_mode) || (uint64_t)st->st_dev != p->dev || (uint64_t)st->st_ino != p->ino)
        return part_fail(p, -ESTALE, "'%s' is no longer the file recd created; refusing to use it",
                         path);
    return 0;
}

int recd_part_reopen(recd_part *p)
{
    if (!p || p->finalized)
        return -EINVAL;
    if (p->fd >= 0)
        return 0;
    char path[RECD_PATH_MAX + 8];
    const char *leaf;
    int dfd = open_part_dir(p, &leaf, path, sizeof path);
    if (dfd < 0)
        return dfd;
    /* O_NONBLOCK: a FIFO planted under our name must not hang the writer. */
    int fd = openat(dfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int err = errno;
    close(dfd);
    if (fd < 0) {
        if (err == ELOOP)
            return part_fail(p, -ELOOP, "'%s' has become a symbolic link; refusing to follow it",
                             path);
        return part_fail(p, -err, "cannot reopen '%s': %s", path, strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        err = errno;
        close(fd);
        return part_fail(p, -err, "cannot stat '%s': %s", path, strerror(err));
    }
    int rc = check_identity(p, &st, path);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    p->fd = fd;
    p->reopens++;
    return 0;
}

int recd_part_append(recd_part *p, const void *data, size_t len)
{
    if (!p || (!data && len) || p->finalized)
        return -EINVAL;
    if (len == 0)
        return 0;
    if (len > (uint64_t)INT64_MAX - p->size)
        return part_fail(p, -EFBIG, "file would exceed the largest offset");
    int rc = recd_part_reopen(p);
    if (rc < 0)
        return rc;
    rc = recd__pwrite_all(p->fd, data, len, p->size);
    if (rc < 0) {
        /* Cut a partial write so the file never ends in half a record. */
        if (ftruncate(p->fd, (off_t)p->size) < 0) {
            /* Nothing more to do: the error below is what the caller must act on. */
        }
        return part_fail(p, rc, "write to '%s" RECD_PART_SUFFIX "' failed: %s", p->name,
                         recd_strerror(rc));
    }
    p->size += len;
    p->bytes_written += len;
    return 0;
}

int recd_part_pwrite(recd_part *p, uint64_t offset, const void *data, size_t len)
{
    if (!p || (!data && len) || p->finalized)
        return -EINVAL;
    if (offset > p->size || len > p->size - offset)
        return part_fail(p, -ERANGE, "patch at %llu+%zu is beyond the %llu bytes written",
                         (unsigned long long)offset, len, (unsigned long long)p->size);
    if (len == 0)
        return 0;
    int rc = recd_part_reopen(p);
    if (rc < 0)
        return rc;
    rc = recd__pwrite_all(p->fd, data, len, offset);
    if (rc < 0)
        return part_fail(p, rc, "patch of '%s" RECD_PART_SUFFIX "' failed: %s", p->name,
                         recd_strerror(rc));
    p->bytes_written += len;
    return 0;
}

int recd_part_sync(recd_part *p)
{
    if (!p || p->finalized)
        return -EINVAL;
    int rc = recd_part_reopen(p);
    if (rc < 0)
        return rc;
    if (fdatasync(p->fd) < 0)
        return part_fail(p, -errno, "fdatasync '%s" RECD_PART_SUFFIX "': %s", p->name,
                         strerror(errno));
    return 0;
}

/* Opens the directory of the .part and verifies the entry is still ours. */
static int locate_own_part(recd_part *p, const char **leaf, char *path, size_t cap)
{
    int dfd = open_part_dir(p, leaf, path, cap);
    if (dfd < 0)
        return dfd;
    struct stat st;
    if (fstatat(dfd, *leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        int err = errno;
        close(dfd);
        return part_fail(p, -err, "'%s' is gone: %s", path, strerror(err));
    }
    int rc = check_identity(p, &st, path);
    if (rc < 0) {
        close(dfd);
        return rc;
    }
    return dfd;
}

int recd_part_finalize(recd_part *p, unsigned flags)
{
    if (!p || p->finalized)
        return -EINVAL;
    int rc;
    if ((flags & RECD_PART_FINALIZE_SYNC) && (rc = recd_part_sync(p)) < 0)
        return rc;
    if ((rc = recd_part_close_fd(p)) < 0)
        return rc;
    char path[RECD_PATH_MAX + 8];
    const char *leaf;
    int dfd = locate_own_part(p, &leaf, path, sizeof path);
    if (dfd < 0)
        return dfd;
    char final_leaf[RECD_PATH_NAME_MAX + 1], chosen[RECD_PATH_MAX];
    size_t leaf_len = strlen(leaf) - strlen(RECD_PART_SUFFIX);
    snprintf(final_leaf, sizeof final_leaf, "%.*s", (int)leaf_len, leaf);
    rc = recd_rename_noreplace(dfd, leaf, final_leaf, chosen, sizeof chosen);
    if (rc < 0) {
        close(dfd);
        return part_fail(p, rc, "cannot rename '%s': %s", path, recd_strerror(rc));
    }
    if ((flags & RECD_PART_FINALIZE_SYNC) && fsync(dfd) < 0) {
        /* The rename happened; only its durability is in doubt, so still report it. */
        rc = -errno;
    }
    close(dfd);
    /* chosen is a leaf no longer than the .part leaf, so the new name fits p->name. */
    size_t dir_len = (size_t)(leaf - path), chosen_len = strlen(chosen);
    if (dir_len + chosen_len < sizeof p->name) {
        memmove(p->name + dir_len, chosen, chosen_len + 1);
    }
    p->finalized = true;
    if (rc < 0)
        return part_fail(p, rc, "fsync of the directory of '%s': %s", p->name, recd_strerror(rc));
    return 0;
}

int recd_part_discard(recd_part *p)
{
    if (!p || p->finalized)
        return -EINVAL;
    recd_part_close_fd(p);
    char path[RECD_PATH_MAX + 8];
    const char *leaf;
    int dfd = locate_own_part(p, &leaf, path, sizeof path);
    if (dfd < 0)
        return dfd;
    int rc = unlinkat(dfd, leaf, 0) < 0 ? -errno : 0;
    close(dfd);
    if (rc < 0)
        return part_fail(p, rc, "cannot remove '%s': %s", path, recd_strerror(rc));
    p->finalized = true; /* nothing left to write to */
    return 0;
}

static int part_sink_write(void *ctx, const void *data, size_t len)
{
    return recd_part_append(ctx, data, len);
}

recd_sink recd_part_sink(recd_part *p)
{
    recd_sink s = {part_sink_write, p};
    return s;
}
