/* SPDX-License-Identifier: MIT */
/* File-descriptor sink: full writes with EINTR and short-write handling, appended or at an
 * offset. */
#include "recd/fd_sink.h"

#include "base/fd_io.h"

#include <errno.h>
#include <unistd.h>

int recd_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int recd__pwrite_all(int fd, const void *data, size_t len, uint64_t off)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static int fd_sink_write(void *ctx, const void *data, size_t len)
{
    return recd_write_all(*(int *)ctx, data, len);
}

recd_sink recd_fd_sink(int *fd_storage)
{
    recd_sink s = {fd_sink_write, fd_storage};
    return s;
}
