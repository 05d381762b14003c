/* SPDX-License-Identifier: MIT */
/* The file operations of the writer stage, as one table: every create, append, header patch,
 * close and finalize of a part file, and the store of its sidecar, goes through it. The default is lib's part_file; daemon unit
 * tests install their own table to make the Nth call fail (ENOSPC, EIO, EROFS, ...) without
 * mounting anything. Nothing in the daemon's configuration can select another table. */
#ifndef RECD_DAEMON_FILE_OPS_H
#define RECD_DAEMON_FILE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/part_file.h"

typedef struct writer_file_ops {
    int (*create)(recd_part *p, int root_fd, const char *rel);
    int (*append)(recd_part *p, const void *data, size_t len);
    int (*pwrite)(recd_part *p, uint64_t offset, const void *data, size_t len);
    int (*sync)(recd_part *p); /* fdatasync */
    int (*finalize)(recd_part *p, unsigned flags);
    int (*close_fd)(recd_part *p);
    /* A whole small file (a part's sidecar) stored as rel under root_fd through a hidden
     * temporary file and a rename; sync: fsync the file and its directory. */
    int (*store_text)(int root_fd, const char *rel, const char *text, bool sync);
    int (*remove_text)(int root_fd, const char *rel); /* such a file removed; -ENOENT if absent */
} writer_file_ops;


/* lib's recd_part_* functions. */
extern const writer_file_ops writer_file_ops_real;

#endif
