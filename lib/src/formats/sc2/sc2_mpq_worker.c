/* SPDX-License-Identifier: MIT */
/* The StormLib worker process: takes replay files from its socket, opens each as an MPQ archive
 * and sends back the member names and the wanted members (protocol in sc2_mpq_worker.h). Only
 * this process ever calls StormLib, so a StormLib crash or stall costs the worker, not its
 * parent (sc2_mpq.c). */
#include "formats/sc2/sc2_mpq_worker.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <StormLib.h>

#include "base/dl_table.h"

/* StormLib is opened in the parent before the first fork (base/dl_table.h). */
#define STORM_FUNCTIONS(X)                                                                         \
    X(SFileOpenArchive) X(SFileCloseArchive) X(SFileOpenFileEx) X(SFileGetFileSize)                \
    X(SFileGetFileInfo) X(SFileReadFile) X(SFileCloseFile) X(SFileFindFirstFile)                   \
    X(SFileFindNextFile) X(SFileFindClose) X(GetLastError)
static struct {
    STORM_FUNCTIONS(DL_POINTER)
} storm;
#define STORM_SYMBOL(fn) DL_SYMBOL(storm, fn)
static const dl_symbol storm_symbols[] = {STORM_FUNCTIONS(STORM_SYMBOL)};
static dl_library stormlib = DL_LIBRARY("StormLib", RECD_STORMLIB_SONAME, RECD_STORMLIB_PACKAGE,
                                        "StarCraft II replays", storm_symbols);

int sc2_mpq_worker_load(char *err, size_t errlen)
{
    return recd__dl_load(&stormlib, err, errlen);
}

static void send_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(1); /* the parent is gone or gave up on this request */
        p += n;
        len -= (size_t)n;
    }
}

/* 1 read, 0 the socket closed before the first byte, -1 closed or failed part way. */
static int read_full(int fd, void *data, size_t len)
{
    uint8_t *p = data;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return got == 0 && n == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

static void send_record(int fd, char type, uint32_t index, int32_t status, const void *data,
                        uint32_t len)
{
    uint8_t head[SC2_MPQ_RECORD_HEAD] = {(uint8_t)type};
    sc2_mpq_put32(head + 1, index);
    sc2_mpq_put32(head + 5, (uint32_t)status);
    sc2_mpq_put32(head + 9, len);
    send_all(fd, head, sizeof head);
    if (len)
        send_all(fd, data, len);
}

static bool write_file(int fd, const uint8_t *buf, size_t len)
{
    for (size_t at = 0; at < len;) {
        ssize_t n = pwrite(fd, buf + at, len - at, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += (size_t)n;
    }
    return true;
}

/* StormLib opens archives by path: a memory file reached through /proc (one per worker, emptied
 * for each request), or an unlinked temporary file where memfd or /proc are missing. */
static HANDLE open_archive(const uint8_t *buf, size_t len)
{
    static int memory_file = -2; /* -2 not made yet, -1 unavailable */
    char path[64];
    HANDLE h = NULL;
    if (memory_file == -2)
        memory_file = memfd_create("recd-sc2", 0);
    if (memory_file >= 0 && ftruncate(memory_file, 0) == 0 &&
        write_file(memory_file, buf, len)) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", memory_file);
        if (storm.SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h))
            return h;
        if (access("/proc/self/fd", F_OK) == 0)
            return NULL; /* the path worked: StormLib refused the content */
    }
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%.40s/recd-sc2-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    bool opened = write_file(fd, buf, len) &&
                  storm.SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h);
    unlink(path);
    close(fd); /* StormLib holds its own descriptor */
    return opened ? h : NULL;
}

static void send_member(int fd, HANDLE archive, uint32_t index, const char *name, size_t cap,
                        size_t file_len)
{
    char msg[256 + SC2_MPQ_NAME_BYTES];
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
        int n = snprintf(msg, sizeof msg,
                         "%s (stored at byte %llu) declares %u bytes, over the %zu-byte cap", name,
                         (unsigned long long)at, (unsigned)size, cap);
        send_record(fd, 'D', index, -EFBIG, msg, (uint32_t)n);
        storm.SFileCloseFile(f);
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

static void serve(int fd, const uint8_t *buf, size_t len, char (*wanted)[SC2_MPQ_NAME_BYTES],
                  size_t nwanted, size_t cap)
{
    HANDLE archive = open_archive(buf, len);
    if (!archive) {
        char msg[160];
        int n = snprintf(msg, sizeof msg,
                         "the MPQ archive cannot be opened (StormLib error %u; file of %zu bytes)",
                         (unsigned)storm.GetLastError(), len);
        send_record(fd, 'E', 0, -EBADMSG, msg, (uint32_t)n);
        return;
    }
    SFILE_FIND_DATA found;
    HANDLE find = storm.SFileFindFirstFile(archive, "*", &found, NULL);
    for (size_t n = 0; find && n < SC2_MPQ_MAX_NAMES; n++) {
        found.cFileName[sizeof found.cFileName - 1] = 0;
        send_record(fd, 'N', 0, 0, found.cFileName, (uint32_t)strlen(found.cFileName));
        if (!storm.SFileFindNextFile(find, &found))
            break;
    }
    if (find)
        storm.SFileFindClose(find);
    for (size_t i = 0; i < nwanted; i++)
        send_member(fd, archive, (uint32_t)i, wanted[i], cap, len);
    storm.SFileCloseArchive(archive);
}

_Noreturn void sc2_mpq_worker_main(int fd)
{
    /* A StormLib crash ends the worker quietly: the parent's handlers (a fuzzer's, a sanitizer's,
     * rectool's cleanup) would report it as their own process's crash or act on its files. */
    static const int defaults[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM,
                                   SIGINT,  SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        signal(defaults[i], SIG_DFL);
    /* A Ctrl-C for the parent's process group must not kill the worker in the middle of a reply:
     * the parent decides, and the worker ends when its socket closes. */
    setpgid(0, 0);
    uint8_t *file = NULL;
    size_t file_cap = 0;
    char wanted[SC2_MPQ_MAX_WANTED][SC2_MPQ_NAME_BYTES];
    for (;;) {
        uint8_t head[SC2_MPQ_REQUEST_HEAD];
        int got = read_full(fd, head, sizeof head);
        if (got == 0)
            _exit(0);
        uint32_t len = sc2_mpq_le32(head + 1), nwanted = sc2_mpq_le32(head + 5);
        if (got < 0 || head[0] != 'Q' || nwanted > SC2_MPQ_MAX_WANTED)
            _exit(1);
        alarm(sc2_mpq_le32(head + 13));
        for (uint32_t i = 0; i < nwanted; i++) {
            uint8_t n[4];
            if (read_full(fd, n, 4) < 1 || sc2_mpq_le32(n) >= SC2_MPQ_NAME_BYTES ||
                read_full(fd, wanted[i], sc2_mpq_le32(n)) < 1)
                _exit(1);
            wanted[i][sc2_mpq_le32(n)] = 0;
        }
        if (len > file_cap) {
            free(file);
            file_cap = len;
            file = malloc(file_cap);
            if (!file)
                _exit(1);
        }
        if (len && read_full(fd, file, len) < 1)
            _exit(1);
        send_record(fd, 'A', 0, 0, NULL, 0);
        serve(fd, file, len, wanted, nwanted, sc2_mpq_le32(head + 9));
        send_record(fd, 'Z', 0, 0, NULL, 0);
        alarm(0);
    }
}
