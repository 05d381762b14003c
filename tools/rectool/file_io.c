/* SPDX-License-Identifier: MIT */
/* Input by mmap (regular files) or a read loop (pipes), output through a new NAME.part (created
 * with O_EXCL | O_NOFOLLOW, never through a link) + rename so a reader never sees a half-written
 * file under the final name. */
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "recd/fd_sink.h"

static const uint8_t empty_input[1];

static int read_all(int fd, recd_buf *b)
{
    for (;;) {
        int rc = recd_buf_reserve(b, 65536);
        if (rc < 0)
            return rc;
        ssize_t n = read(fd, b->data + b->len, b->cap - b->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return 0;
        b->len += (size_t)n;
    }
}

int rt_input_open(rt_input *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->data = empty_input;
    bool use_stdin = strcmp(path, "-") == 0;
    int fd = use_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = -errno;
        if (!use_stdin)
            close(fd);
        return err;
    }
    int rc = 0;
    if (S_ISDIR(st.st_mode)) {
        rc = -EISDIR;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((uint64_t)st.st_size > SIZE_MAX) {
            rc = -EFBIG;
        } else {
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                rc = -errno;
            } else {
                in->map = p;
                in->map_len = (size_t)st.st_size;
                in->data = p;
                in->len = in->map_len;
            }
        }
    } else if (!S_ISREG(st.st_mode)) {
        rc = read_all(fd, &in->heap);
        if (rc == 0 && in->heap.len > 0) {
            in->data = in->heap.data;
            in->len = in->heap.len;
        }
    }
    if (!use_stdin)
        close(fd);
    if (rc < 0)
        rt_input_close(in);
    return rc;
}

void rt_input_close(rt_input *in)
{
    if (in->map)
        munmap(in->map, in->map_len);
    recd_buf_free(&in->heap);
    in->map = NULL;
    in->map_len = 0;
    in->data = empty_input;
    in->len = 0;
}

/* Part files being written: the handler of SIGINT, SIGTERM and SIGHUP removes them, so an
 * interrupted command leaves no OUT.part behind. unlink() is async-signal-safe; the strings stay
 * allocated while they are listed. */
#define LIVE_PARTS 4
static char *volatile live_parts[LIVE_PARTS];

static void remember_part(char *path)
{
    for (size_t i = 0; i < LIVE_PARTS; i++)
        if (!live_parts[i]) {
            live_parts[i] = path;
            return;
        }
}

static void forget_part(const char *path)
{
    for (size_t i = 0; i < LIVE_PARTS; i++)
        if (live_parts[i] == path)
            live_parts[i] = NULL;
}

static void on_stop_signal(int sig)
{
    int saved = errno;
    rt_progress_erase_on_signal();
    for (size_t i = 0; i < LIVE_PARTS; i++)
        if (live_parts[i])
            unlink(live_parts[i]);
    /* Die of the signal, so the shell sees 128 + sig as for any interrupted program. */
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

void rt_cleanup_on_signals(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        struct sigaction old, sa;
        if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup and friends: stay ignored */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
}

/* A few random hex digits for a temporary name nobody could plant in advance. */
static void random_tag(char tag[9])
{
    static unsigned counter;
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL) ^ ++counter * 40503u;
    snprintf(tag, 9, "%08x", (unsigned)r);
}

/* Creates a file that did not exist: O_EXCL fails on any name already taken (a planted symlink
 * included, dangling or not) and O_NOFOLLOW says so again, so nothing is written through a link.
 * Signals are held while the name is taken and listed, so the handler removes it only if ours. */
static int create_new(char *path)
{
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, &old);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int err = fd < 0 ? -errno : 0;
    if (fd >= 0)
        remember_part(path);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return fd >= 0 ? fd : err;
}

/* OUT.part in the target's folder, or OUT.part-XXXXXXXX when that name is taken (a stale part,
 * or something planted there): never an existing file, never through a link. */
#define TEMP_TRIES 32
static int open_part(rt_output *out, const char *path)
{
    size_t n = strlen(path);
    out->part_path = malloc(n + sizeof ".part-XXXXXXXX");
    if (!out->part_path)
        return -ENOMEM;
    snprintf(out->part_path, n + sizeof ".part-XXXXXXXX", "%s.part", path);
    int fd = create_new(out->part_path);
    for (int i = 0; fd == -EEXIST && i < TEMP_TRIES; i++) {
        char tag[9];
        random_tag(tag);
        snprintf(out->part_path, n + sizeof ".part-XXXXXXXX", "%s.part-%s", path, tag);
        fd = create_new(out->part_path);
    }
    if (fd < 0) {
        free(out->part_path);
        out->part_path = NULL;
    }
    return fd;
}

int rt_output_open(rt_output *out, const char *path)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        out->fd = STDOUT_FILENO;
        return 0;
    }
    out->final_path = strdup(path);
    if (!out->final_path)
        return -ENOMEM;
    int fd = open_part(out, path);
    if (fd < 0) {
        rt_output_abort(out);
        return fd;
    }
    out->fd = fd;
    return 0;
}

bool rt_output_is_terminal(const rt_output *out)
{
    return !out->part_path && isatty(STDOUT_FILENO);
}

/* OUT.part's buffer, and the write size from which a write skips it (already big enough). */
#define OUTPUT_BUFFER ((size_t)1 << 20)
#define OUTPUT_DIRECT ((size_t)64 << 10)

static int flush_pending(rt_output *out)
{
    size_t n = out->pending_len;
    out->pending_len = 0;
    return n ? recd_write_all(out->fd, out->pending, n) : 0;
}

static int output_write(void *ctx, const void *data, size_t len)
{
    rt_output *out = ctx;
    if (out->pending_len + len > OUTPUT_BUFFER || len >= OUTPUT_DIRECT) {
        int rc = flush_pending(out);
        if (rc < 0 || len >= OUTPUT_DIRECT)
            return rc < 0 ? rc : recd_write_all(out->fd, data, len);
    }
    if (!out->pending && !(out->pending = malloc(OUTPUT_BUFFER)))
        return recd_write_all(out->fd, data, len);
    memcpy(out->pending + out->pending_len, data, len);
    out->pending_len += len;
    return 0;
}

recd_sink rt_output_sink(rt_output *out)
{
    if (!out->part_path)
        return recd_fd_sink(&out->fd);
    recd_sink s = {output_write, out};
    return s;
}

static void free_paths(rt_output *out)
{
    free(out->pending);
    out->pending = NULL;
    out->pending_len = 0;
    forget_part(out->part_path);
    free(out->final_path);
    free(out->part_path);
    out->final_path = out->part_path = NULL;
}

int rt_output_commit(rt_output *out)
{
    if (!out->part_path) {
        out->fd = -1;
        return 0; /* stdout: nothing to rename */
    }
    int rc = flush_pending(out);
    if (close(out->fd) < 0 && rc == 0)
        rc = -errno;
    out->fd = -1;
    if (rc == 0 && rename(out->part_path, out->final_path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(out->part_path);
    free_paths(out);
    return rc;
}

void rt_output_abort(rt_output *out)
{
    if (out->part_path) {
        if (out->fd >= 0)
            close(out->fd);
        unlink(out->part_path);
    }
    out->fd = -1;
    free_paths(out);
}

bool rt_same_file(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return true;
    struct stat sa, sb;
    if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
