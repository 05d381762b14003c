/* SPDX-License-Identifier: MIT */
/* Whole-file input (mmap, or one read loop for pipes) and crash-safe output (OUT.part, then
 * rename) for the rectool commands. */
#ifndef RECTOOL_FILE_IO_H
#define RECTOOL_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

typedef struct rt_input {
    const char *path;
    const uint8_t *data; /* never NULL after a successful open, even for an empty file */
    size_t len;
    void *map; /* mmap'd region, or NULL */
    size_t map_len;
    recd_buf heap; /* contents read from a pipe or stdin ("-") */
} rt_input;

/* 0 or a negative errno. path "-" reads standard input. */
int rt_input_open(rt_input *in, const char *path);
void rt_input_close(rt_input *in);

typedef struct rt_output {
    char *final_path; /* NULL when writing to standard output */
    char *part_path;
    int fd;
    /* Small writes to OUT.part gather here and go out in big ones (a .rec import writes one
     * block at a time); standard output gets every write as it comes. */
    uint8_t *pending;
    size_t pending_len;
} rt_output;

/* Opens path + ".part" for writing (or stdout for NULL / "-"). 0 or a negative errno. */
int rt_output_open(rt_output *out, const char *path);
/* A sink that writes to the output; out must outlive the sink. Writes to OUT.part are buffered
 * until commit; nothing else may write to out->fd while the sink is in use. */
recd_sink rt_output_sink(rt_output *out);
/* Closes and renames the .part file onto the final name. 0 or a negative errno (then the .part
 * file is removed). */
int rt_output_commit(rt_output *out);
/* True when the output is standard output on a terminal (a progress line would garble it). */
bool rt_output_is_terminal(const rt_output *out);
/* Closes and removes the .part file; safe to call after commit or on an unopened output. */
void rt_output_abort(rt_output *out);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP (unless ignored) that remove every OUT.part
 * being written and erase the progress bar, then end the process by the same signal. */
void rt_cleanup_on_signals(void);

/* True when both paths name the same existing file (same device and inode) or the same string. */
bool rt_same_file(const char *a, const char *b);

#endif
