/* SPDX-License-Identifier: MIT */
/* Confined part files: a recording is written as NAME.part under an output-root directory fd and
 * renamed to NAME when finalized.
 *
 * Every path is resolved relative to the root fd one component at a time with
 * O_NOFOLLOW|O_DIRECTORY, so a symlink planted inside the root can never redirect a write outside
 * it: such an open fails with -ELOOP and an explanation in recd_part.error. The fd can be closed
 * (fd LRU eviction) and is reopened by path on the next write; a reopen refuses a path that has
 * become a symlink or a different file. Nothing here ever overwrites an existing file: name
 * collisions get a "-N" suffix before the extension (recd_path_with_suffix). */
#ifndef RECD_PART_FILE_H
#define RECD_PART_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/path_template.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_PART_SUFFIX ".part"
#define RECD_PART_MAX_SUFFIX 1000 /* names tried in order: NAME, NAME-1 .. NAME-999 (then a few
                                     * clock-drawn suffixes above, by recd_part_create) */
#define RECD_OUT_DIR_MODE 0755    /* new directories and files; the process umask applies */
#define RECD_OUT_FILE_MODE 0644

/* Opens (and with create, makes) the output root directory. Returns an O_DIRECTORY fd or -errno. */
int recd_out_root_open(const char *path, bool create);

/* Opens the directory that holds the last component of rel, relative to root_fd, descending one
 * component at a time without following symlinks; with create, missing directories are made.
 * rel must pass recd_path_relative_ok (".part" names too). *leaf points at the last component of
 * rel. Returns a directory fd or -errno (-ELOOP: a component is a symlink); why (may be NULL)
 * says which component failed. */
int recd_confined_parent(int root_fd, const char *rel, bool create, const char **leaf,
                         char *why, size_t why_cap);

/* Stores text as root_fd/rel atomically: written to a hidden ".LEAF.tmp" beside it (recovery and
 * retention skip it), then renamed over rel; with sync the file is synced before the rename and
 * the directory after it. Directories are made as needed, confined like recd_confined_parent.
 * 0 or a negative errno (the temporary file is removed on failure). For small sidecar files:
 * part manifests, samp-player manifests. */
int recd_confined_store_text(int root_fd, const char *rel, const char *text, bool sync);
/* The same for a file that must not replace another: when rel exists, it is stored as rel-1,
 * rel-2, ... before the extension (recd_rename_noreplace); chosen receives the name it took,
 * relative to the root. */
int recd_confined_store_text_new(int root_fd, const char *rel, const char *text,
                                 bool sync, char *chosen, size_t chosen_cap);

/* Removes the file root_fd/rel, confined like recd_confined_parent. 0 or a negative errno
 * (-ENOENT when it is not there). */
int recd_confined_unlink(int root_fd, const char *rel);

/* Renames dir_fd/from to dir_fd/to without ever replacing an existing file: when to exists,
 * tries to-1, to-2, ... (before the extension). The name used is written to chosen. */
int recd_rename_noreplace(int dir_fd, const char *from, const char *to, char *chosen,
                          size_t chosen_cap);

/* ---- Confined walk (recovery and retention) ------------------------------------------------- */

#define RECD_WALK_DEFAULT_DEPTH 8
#define RECD_WALK_MAX_DEPTH 32

typedef enum recd_walk_type {
    RECD_WALK_FILE = 0,     /* regular file */
    RECD_WALK_SYMLINK,      /* never followed; reported so callers can count or warn */
    RECD_WALK_OTHER,        /* FIFO, socket, device */
    RECD_WALK_TOO_DEEP,     /* a directory below max_depth, not entered */
    RECD_WALK_BAD_NAME      /* a name recd would never create (hidden, odd characters): skipped */
} recd_walk_type;

typedef struct recd_walk_entry {
    recd_walk_type type;
    const char *rel;  /* path relative to the root */
    const char *leaf; /* its last component */
    int dir_fd;       /* the directory holding it, valid during the callback */
    unsigned depth;   /* 0 for entries of the root itself */
    uint64_t size;
    int64_t mtime_ns; /* modification time, Unix nanoseconds */
} recd_walk_entry;

/* Non-zero stops the walk and becomes recd_confined_walk()'s result. */
typedef int (*recd_walk_fn)(void *ctx, const recd_walk_entry *e);

/* Visits everything under root_fd depth first in a deterministic order (names sorted bytewise),
 * never following symlinks and entering at most max_depth levels of subdirectories
 * (0 = RECD_WALK_DEFAULT_DEPTH, capped at RECD_WALK_MAX_DEPTH). Directories themselves are not
 * reported; entries that vanish during the walk are skipped. Returns 0, a negative errno or
 * fn's value. */
int recd_confined_walk(int root_fd, unsigned max_depth, recd_walk_fn fn, void *ctx);

/* Removes rel_dir and then each parent up to (not including) the root while they are empty.
 * Returns the number of directories removed or a negative errno. */
int recd_confined_prune_dirs(int root_fd, const char *rel_dir);

/* ---- Part files ----------------------------------------------------------------------------- */

typedef struct recd_part {
    int root_fd;              /* output root; not owned */
    int fd;                   /* -1 while closed */
    char name[RECD_PATH_MAX]; /* final relative name (collision suffix applied); the file on disk
                                 is name + ".part" until finalized */
    uint64_t size;            /* file length: bytes appended */
    uint64_t bytes_written;   /* everything written, header patches included */
    uint64_t reopens;         /* times the fd was reopened after recd_part_close_fd */
    uint64_t dev, ino;        /* identity of the file, checked on reopen */
    bool finalized;
    char error[256];          /* why the last failing call failed */
} recd_part;

/* Creates rel + ".part" exclusively (O_EXCL|O_NOFOLLOW), making directories as needed. When
 * rel or rel.part already exists, picks rel-1, rel-2, ... (p->name says which). */
int recd_part_create(recd_part *p, int root_fd, const char *rel);

/* Appends all of data (full writes, EINTR retried). On failure the file is truncated back to its
 * previous length, so it never ends in half a record. Reopens the fd when it was closed. */
int recd_part_append(recd_part *p, const void *data, size_t len);

/* Overwrites bytes already written (header patches): -ERANGE when offset + len > p->size. */
int recd_part_pwrite(recd_part *p, uint64_t offset, const void *data, size_t len);

/* Closes the fd but keeps the part (fd cache eviction). */
int recd_part_close_fd(recd_part *p);
/* Reopens the part by path: -ELOOP for a symlink, -ESTALE when the path now names another file. */
int recd_part_reopen(recd_part *p);
bool recd_part_is_open(const recd_part *p);

/* fdatasync of the part. */
int recd_part_sync(recd_part *p);

enum { RECD_PART_FINALIZE_SYNC = 1 }; /* fdatasync the file and fsync its directory */

/* Closes the fd and renames NAME.part to NAME (or NAME-N when NAME exists; p->name is updated).
 * p->size is the final length. */
int recd_part_finalize(recd_part *p, unsigned flags);

/* Closes the fd and removes the .part file (a session with nothing worth keeping). */
int recd_part_discard(recd_part *p);

/* A sink that appends to p. */
recd_sink recd_part_sink(recd_part *p);

#ifdef __cplusplus
}
#endif
#endif
