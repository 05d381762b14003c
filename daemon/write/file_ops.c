/* SPDX-License-Identifier: MIT */
/* The writer's default file operations: lib's part_file, and the atomic store of a part's sidecar
 * (see file_ops.h). */
#include "file_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recd/fd_sink.h"

int writer_store_text(int root_fd, const char *rel, const char *text, bool sync)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, rel, true, &leaf, NULL, 0);
    if (dir < 0)
        return dir;
    char tmp[RECD_PATH_MAX + 8];
    int n = snprintf(tmp, sizeof tmp, ".%s.tmp", leaf); /* hidden: recovery and retention skip it */
    if (n < 0 || (size_t)n >= sizeof tmp) {
        close(dir);
        return -ENAMETOOLONG;
    }
    int rc = 0;
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                    RECD_OUT_FILE_MODE);
    if (fd < 0) {
        rc = -errno;
    } else {
        rc = recd_write_all(fd, text, strlen(text));
        if (rc == 0 && sync && fsync(fd) < 0)
            rc = -errno;
        if (close(fd) < 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && renameat(dir, tmp, dir, leaf) < 0)
            rc = -errno;
        if (rc < 0)
            unlinkat(dir, tmp, 0);
        else if (sync && fsync(dir) < 0)
            rc = -errno;
    }
    close(dir);
    return rc;
}

const writer_file_ops writer_file_ops_real = {
    .create = recd_part_create,
    .append = recd_part_append,
    .pwrite = recd_part_pwrite,
    .sync = recd_part_sync,
    .finalize = recd_part_finalize,
    .close_fd = recd_part_close_fd,
    .store_text = writer_store_text,
};
