/* SPDX-License-Identifier: MIT */
/* Crash recovery's file operations as plain system calls (the table tests replace). */
#include "storage/recovery_file_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/part_file.h"

static int sys_open_at(void *data, int dir_fd, const char *leaf, int flags)
{
    (void)data;
    int fd = openat(dir_fd, leaf, flags);
    return fd < 0 ? -errno : fd;
}

static int sys_stat_fd(void *data, int fd, recovery_file_stat *out)
{
    (void)data;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    out->size = (uint64_t)st.st_size;
    out->nlink = (unsigned long)st.st_nlink;
    out->is_regular = S_ISREG(st.st_mode);
    return 0;
}

static ssize_t sys_pread_at(void *data, int fd, void *buf, size_t len, uint64_t off)
{
    (void)data;
    ssize_t n = pread(fd, buf, len, (off_t)off);
    return n < 0 ? -errno : n;
}

static int sys_map(void *data, int fd, size_t len, void **addr)
{
    (void)data;
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return -errno;
    madvise(map, len, MADV_SEQUENTIAL); /* a hint: read ahead, drop behind */
    *addr = map;
    return 0;
}

static void sys_unmap(void *data, void *addr, size_t len)
{
    (void)data;
    munmap(addr, len);
}

static int sys_truncate(void *data, int fd, uint64_t len)
{
    (void)data;
    return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

static ssize_t sys_pwrite_at(void *data, int fd, const void *buf, size_t len, uint64_t off)
{
    (void)data;
    ssize_t n = pwrite(fd, buf, len, (off_t)off);
    return n < 0 ? -errno : n;
}

static int sys_datasync(void *data, int fd)
{
    (void)data;
    return fdatasync(fd) < 0 ? -errno : 0;
}

static int sys_rename_noreplace(void *data, int dir_fd, const char *from, const char *to,
                                char *chosen, size_t chosen_cap)
{
    (void)data;
    return recd_rename_noreplace(dir_fd, from, to, chosen, chosen_cap);
}

static int sys_unlink_at(void *data, int dir_fd, const char *leaf)
{
    (void)data;
    return unlinkat(dir_fd, leaf, 0) < 0 ? -errno : 0;
}

static int sys_sync_dir(void *data, int dir_fd)
{
    (void)data;
    return fsync(dir_fd) < 0 ? -errno : 0;
}

static void sys_close_fd(void *data, int fd)
{
    (void)data;
    close(fd);
}

const recovery_file_ops recovery_file_ops_system = {
    .open_at = sys_open_at,
    .stat_fd = sys_stat_fd,
    .pread_at = sys_pread_at,
    .map = sys_map,
    .unmap = sys_unmap,
    .truncate = sys_truncate,
    .pwrite_at = sys_pwrite_at,
    .datasync = sys_datasync,
    .rename_noreplace = sys_rename_noreplace,
    .unlink_at = sys_unlink_at,
    .sync_dir = sys_sync_dir,
    .close_fd = sys_close_fd,
    .data = NULL,
};
