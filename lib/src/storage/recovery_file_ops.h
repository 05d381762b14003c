/* SPDX-License-Identifier: MIT */
/* Internal: every file operation crash recovery makes goes through this table, so tests can make
 * the Nth one fail (ENOSPC, EIO), read or write short, or present a part far larger than the disk
 * holds; recd_recover_root() uses the plain system calls (recovery_file_ops_system). */
#ifndef RECD_RECOVERY_FILE_OPS_H
#define RECD_RECOVERY_FILE_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "storage/recovery_internal.h"

/* What recovery needs to know of an open part. */
typedef struct recovery_file_stat {
    uint64_t size;
    unsigned long nlink;
    int is_regular;
} recovery_file_stat;

/* Each returns 0 (or a count, or a descriptor) on success and a negative errno on failure. */
typedef struct recovery_file_ops {
    int (*open_at)(void *data, int dir_fd, const char *leaf, int flags);
    int (*stat_fd)(void *data, int fd, recovery_file_stat *st);
    /* May read fewer than len bytes; 0 at the end of the file. */
    ssize_t (*pread_at)(void *data, int fd, void *buf, size_t len, uint64_t off);
    /* A private, writable (copy on write) view of the first len bytes; *addr is set on success. */
    int (*map)(void *data, int fd, size_t len, void **addr);
    void (*unmap)(void *data, void *addr, size_t len);
    int (*truncate)(void *data, int fd, uint64_t len);
    /* May write fewer than len bytes. */
    ssize_t (*pwrite_at)(void *data, int fd, const void *buf, size_t len, uint64_t off);
    int (*datasync)(void *data, int fd);
    int (*rename_noreplace)(void *data, int dir_fd, const char *from, const char *to,
                            char *chosen, size_t chosen_cap);
    int (*unlink_at)(void *data, int dir_fd, const char *leaf);
    int (*sync_dir)(void *data, int dir_fd);
    void (*close_fd)(void *data, int fd);
    void *data;
} recovery_file_ops;

extern const recovery_file_ops recovery_file_ops_system;

/* recd_recover__root() with every file operation through ops. */
int recd_recover__root_ops(int root_fd, const recd_recover_options *opt, recd_recover_summary *out,
                           recd_recover_planner plan, const recovery_file_ops *ops);

#endif
