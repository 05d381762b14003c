/* SPDX-License-Identifier: MIT */
/* StormLib over a buffer: see sc2_mpq.h for why the bytes go through a memory file. */
#include "formats/sc2/sc2_mpq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <StormLib.h>

static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Memory file first; an unlinked temporary file when /proc or memfd are missing. */
static int open_archive(sc2_mpq *m, const uint8_t *buf, size_t len)
{
    char path[64];
    HANDLE h = NULL;
    int fd = memfd_create("recd-sc2", MFD_CLOEXEC);
    if (fd >= 0) {
        int rc = write_all(fd, buf, len);
        if (rc < 0) {
            close(fd);
            return rc;
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h)) {
            m->archive = h;
            m->fd = fd;
            return 0;
        }
        close(fd);
        if (access("/proc/self/fd", F_OK) == 0)
            return -EBADMSG; /* the path worked: StormLib refused the content */
    }
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%.40s/recd-sc2-XXXXXX", dir && dir[0] ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, buf, len);
    bool opened = rc == 0 && SFileOpenArchive(path, 0, STREAM_FLAG_READ_ONLY, &h);
    unlink(path);
    close(fd);
    if (rc < 0)
        return rc;
    if (!opened)
        return -EBADMSG;
    m->archive = h;
    return 0;
}

int sc2_mpq_open(sc2_mpq *m, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    m->file_len = len;
    int rc = open_archive(m, buf, len);
    if (rc == -EBADMSG)
        snprintf(err, errlen, "the MPQ archive cannot be opened (StormLib error %u; file of %zu bytes)",
                 (unsigned)GetLastError(), len);
    else if (rc < 0)
        snprintf(err, errlen, "cannot stage the archive for StormLib: %s", strerror(-rc));
    return rc;
}

int sc2_mpq_read(sc2_mpq *m, const char *name, size_t cap, recd_buf *out, char *err,
                 size_t errlen)
{
    recd_buf_reset(out);
    HANDLE f = NULL;
    if (!SFileOpenFileEx(m->archive, name, SFILE_OPEN_FROM_MPQ, &f))
        return GetLastError() == ERROR_FILE_NOT_FOUND ? -ENOENT : -EBADMSG;
    DWORD high = 0;
    DWORD size = SFileGetFileSize(f, &high);
    ULONGLONG stored_at = 0;
    DWORD compressed = 0;
    SFileGetFileInfo(f, SFileInfoByteOffset, &stored_at, sizeof stored_at, NULL);
    SFileGetFileInfo(f, SFileInfoCompressedSize, &compressed, sizeof compressed, NULL);
    int rc = 0;
    if (size == SFILE_INVALID_SIZE || high != 0 || size > cap) {
        snprintf(err, errlen, "%s (stored at byte %llu) declares %u bytes, over the %zu-byte cap",
                 name, (unsigned long long)stored_at, (unsigned)size, cap);
        rc = -EFBIG;
    } else if ((rc = recd_buf_reserve(out, size ? size : 1)) == 0) {
        DWORD got = 0;
        bool ok = SFileReadFile(f, out->data, size, &got, NULL);
        if (!ok || got != size) {
            unsigned long long end = stored_at + compressed;
            snprintf(err, errlen,
                     "%s stored at bytes %llu..%llu cannot be read (StormLib error %u)%s; the "
                     "file ends at byte %zu",
                     name, (unsigned long long)stored_at, end, (unsigned)GetLastError(),
                     end > m->file_len ? ", it runs past the end of the file" : "", m->file_len);
            rc = -EBADMSG;
        } else {
            out->len = size;
        }
    }
    SFileCloseFile(f);
    return rc;
}

size_t sc2_mpq_list(sc2_mpq *m, void (*fn)(void *data, const char *name), void *data)
{
    SFILE_FIND_DATA fd;
    size_t n = 0;
    HANDLE find = SFileFindFirstFile(m->archive, "*", &fd, NULL);
    if (!find)
        return 0;
    do {
        fn(data, fd.cFileName);
        n++;
    } while (n < 4096 && SFileFindNextFile(find, &fd));
    SFileFindClose(find);
    return n;
}

void sc2_mpq_close(sc2_mpq *m)
{
    if (m->archive)
        SFileCloseArchive(m->archive);
    if (m->fd >= 0)
        close(m->fd);
    m->archive = NULL;
    m->fd = -1;
}
