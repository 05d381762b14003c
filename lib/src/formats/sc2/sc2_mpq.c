/* SPDX-License-Identifier: MIT */
/* StormLib over a buffer, in a child process (see sc2_mpq.h for why). The child sends records
 * through a pipe: 'N' name, 'D' member (index, status, bytes), 'E' open failure, 'Z' done; all
 * lengths are 32-bit little-endian and checked by the parent. */
#include "formats/sc2/sc2_mpq.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <StormLib.h>

#include "base/dl_table.h"

#define MAX_NAMES 4096

/* StormLib is opened on the first replay read (base/dl_table.h), in the parent before the fork. */
#define STORM_FUNCTIONS(X)                                                                         \
    X(SFileOpenArchive) X(SFileOpenFileEx) X(SFileGetFileSize) X(SFileGetFileInfo)                 \
    X(SFileReadFile) X(SFileCloseFile) X(SFileFindFirstFile) X(SFileFindNextFile)                  \
    X(SFileFindClose) X(GetLastError)
static struct {
    STORM_FUNCTIONS(DL_POINTER)
} storm;
#define STORM_SYMBOL(fn) DL_SYMBOL(storm, fn)
static const dl_symbol storm_symbols[] = {STORM_FUNCTIONS(STORM_SYMBOL)};
static dl_library stormlib = DL_LIBRARY("StormLib", RECD_STORMLIB_SONAME, RECD_STORMLIB_PACKAGE,
                                        "StarCraft II replays", storm_symbols);

static int timeout_ms = SC2_MPQ_TIMEOUT_MS;

void sc2_mpq_set_timeout_ms(int ms)
{
    timeout_ms = ms > 0 ? ms : SC2_MPQ_TIMEOUT_MS;
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- the child ---- */

static void send_record(int fd, char type, uint32_t index, int32_t status, const void *data,
                        uint32_t len)
{
    uint8_t head[13] = {(uint8_t)type};
    uint32_t fields[3] = {index, (uint32_t)status, len};
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 4; b++)
            head[1 + 4 * f + b] = (uint8_t)(fields[f] >> (8 * b));
    if (write_all(fd, head, sizeof head) < 0 || write_all(fd, data, len) < 0)
        _exit(1);
}

/* Memory file first; an unlinked temporary file when memfd or /proc are missing. */
static HANDLE child_open(const uint8_t *buf, size_t len)
{
    char path[64];
    HANDLE h = NULL;
    int fd = memfd_create("recd-sc2", 0);
    if (fd >= 0 && write_all(fd, buf, len) == 0) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (storm.SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h))
            return h;
        if (access("/proc/self/fd", F_OK) == 0)
            return NULL; /* the path worked: StormLib refused the content */
    }
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%.40s/recd-sc2-XXXXXX", dir && dir[0] ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    bool opened = write_all(fd, buf, len) == 0 &&
                  storm.SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h);
    unlink(path);
    return opened ? h : NULL;
}

static void child_read(int fd, HANDLE archive, uint32_t index, const char *name, size_t cap,
                       size_t file_len)
{
    char msg[256];
    HANDLE f = NULL;
    if (!storm.SFileOpenFileEx(archive, name, SFILE_OPEN_FROM_MPQ, &f)) {
        send_record(fd, 'D', index, -ENOENT, NULL, 0);
        return;
    }
    DWORD high = 0, size = storm.SFileGetFileSize(f, &high), compressed = 0;
    ULONGLONG at = 0;
    storm.SFileGetFileInfo(f, SFileInfoByteOffset, &at, sizeof at, NULL);
    storm.SFileGetFileInfo(f, SFileInfoCompressedSize, &compressed, sizeof compressed, NULL);
    if (size == SFILE_INVALID_SIZE || high != 0 || size > cap) {
        int n = snprintf(msg, sizeof msg, "%s (stored at byte %llu) declares %u bytes, over the %zu-byte cap",
                         name, (unsigned long long)at, (unsigned)size, cap);
        send_record(fd, 'D', index, -EFBIG, msg, (uint32_t)n);
        return;
    }
    uint8_t *data = malloc(size ? size : 1);
    DWORD got = 0;
    if (!data || !storm.SFileReadFile(f, data, size, &got, NULL) || got != size) {
        unsigned long long end = at + compressed;
        int n = snprintf(msg, sizeof msg,
                         "%s stored at bytes %llu..%llu cannot be read (StormLib error %u)%s; the "
                         "file ends at byte %zu",
                         name, (unsigned long long)at, end, (unsigned)storm.GetLastError(),
                         end > file_len ? ", it runs past the end of the file" : "", file_len);
        send_record(fd, 'D', index, -EBADMSG, msg, (uint32_t)n);
    } else {
        send_record(fd, 'D', index, 0, data, size);
    }
    free(data);
    storm.SFileCloseFile(f);
}

static void child_main(int fd, const uint8_t *buf, size_t len, const char *const *wanted,
                       size_t nwanted, size_t cap)
{
    /* A StormLib crash ends the child quietly: the caller's handlers (a fuzzer's, a sanitizer's)
     * would report it as their own process's crash. */
    static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    HANDLE archive = child_open(buf, len);
    if (!archive) {
        char msg[160];
        int n = snprintf(msg, sizeof msg,
                         "the MPQ archive cannot be opened (StormLib error %u; file of %zu bytes)",
                         (unsigned)storm.GetLastError(), len);
        send_record(fd, 'E', 0, -EBADMSG, msg, (uint32_t)n);
        _exit(0);
    }
    SFILE_FIND_DATA found;
    HANDLE find = storm.SFileFindFirstFile(archive, "*", &found, NULL);
    for (size_t n = 0; find && n < MAX_NAMES; n++) {
        found.cFileName[sizeof found.cFileName - 1] = 0;
        send_record(fd, 'N', 0, 0, found.cFileName, (uint32_t)strlen(found.cFileName));
        if (!storm.SFileFindNextFile(find, &found))
            break;
    }
    if (find)
        storm.SFileFindClose(find);
    for (size_t i = 0; i < nwanted; i++)
        child_read(fd, archive, (uint32_t)i, wanted[i], cap, len);
    send_record(fd, 'Z', 0, 0, NULL, 0);
    _exit(0);
}

/* ---- the parent ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the pipe to its end or the deadline; -ETIMEDOUT, -ENOMEM or 0. */
static int drain_pipe(int fd, recd_buf *in, size_t max)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -ETIMEDOUT;
        if (in->len >= max)
            return -EFBIG;
        int rc = recd_buf_reserve(in, 65536);
        if (rc < 0)
            return rc;
        ssize_t got = read(fd, in->data + in->len, 65536);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            return 0;
        in->len += (size_t)got;
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Takes the records apart; true when the child said it was done. */
static bool parse_records(const recd_buf *in, size_t nwanted, sc2_extract *out, char *err,
                          size_t errlen, int *rc)
{
    size_t pos = 0;
    while (in->len - pos >= 13) {
        const uint8_t *h = in->data + pos;
        uint32_t index = le32(h + 1), len = le32(h + 9);
        int32_t status = (int32_t)le32(h + 5);
        if (len > in->len - pos - 13)
            break; /* cut by the child's end */
        const uint8_t *body = h + 13;
        pos += 13 + len;
        if (h[0] == 'Z')
            return true;
        if (h[0] == 'N' && recd_buf_append(&out->names, body, len) == 0 &&
            recd_buf_append(&out->names, "", 1) == 0)
            out->nnames++;
        if (h[0] == 'E') {
            snprintf(err, errlen, "%.*s", (int)len, (const char *)body);
            *rc = -EBADMSG;
        }
        if (h[0] == 'D' && index < nwanted) {
            out->status[index] = status;
            recd_buf_reset(&out->data[index]);
            if (recd_buf_append(&out->data[index], body, len) < 0)
                *rc = -ENOMEM;
        }
    }
    return false;
}

int sc2_mpq_extract(const uint8_t *buf, size_t len, const char *const *wanted, size_t nwanted,
                    size_t cap, sc2_extract *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (nwanted > SC2_MPQ_MAX_WANTED)
        return -EINVAL;
    for (size_t i = 0; i < nwanted; i++)
        out->status[i] = -ECANCELED;
    int rc = recd__dl_load(&stormlib, err, errlen);
    if (rc < 0)
        return rc;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(fds[1], buf, len, wanted, nwanted, cap);
    }
    close(fds[1]);
    recd_buf in = {0};
    rc = drain_pipe(fds[0], &in, nwanted * (cap + 512) + MAX_NAMES * 300 + 4096);
    close(fds[0]);
    if (rc < 0)
        kill(pid, SIGKILL);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    int parse_rc = 0;
    bool done = parse_records(&in, nwanted, out, err, errlen, &parse_rc);
    recd_buf_free(&in);
    if (rc == -ENOMEM || parse_rc == -ENOMEM)
        return -ENOMEM;
    if (parse_rc < 0)
        return parse_rc;
    if (rc == -ETIMEDOUT || !done) {
        const char *where = out->nnames ? "the damaged MPQ archive" : "the damaged MPQ archive's tables";
        for (size_t i = 0; i < nwanted; i++)
            if (out->status[i] == -ECANCELED) {
                where = wanted[i];
                break;
            }
        if (rc == -ETIMEDOUT)
            snprintf(err, errlen, "StormLib did not finish reading %s within %d ms (damaged "
                     "compressed data?)", where, timeout_ms);
        else
            snprintf(err, errlen, "StormLib stopped on %s (%s %d)", where,
                     WIFSIGNALED(wstatus) ? "signal" : "exit status",
                     WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
        return -EBADMSG;
    }
    return rc < 0 ? rc : 0;
}

void sc2_extract_free(sc2_extract *x)
{
    recd_buf_free(&x->names);
    for (size_t i = 0; i < SC2_MPQ_MAX_WANTED; i++)
        recd_buf_free(&x->data[i]);
}
