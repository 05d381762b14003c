/* SPDX-License-Identifier: MIT */
/* The sidecar seek index as rectool's commands use it: FILE.idx read beside FILE when it is
 * there (an index that does not match is ignored: the seek checks it), and the switch that makes
 * every command read from the start instead (RECTOOL_FULL_SCAN=1, for tests that compare). */
#ifndef RECTOOL_SEEK_UTIL_H
#define RECTOOL_SEEK_UTIL_H

#include <stdbool.h>

#include "file_io.h"

/* Opens path's sidecar into idx; false when there is none (or the input is standard input).
 * idx is then empty (data NULL, len 0) and rt_seek_index_close is still safe. One
 * sidecar is open at a time. */
bool rt_seek_index_open(const char *path, rt_input *idx);
void rt_seek_index_close(rt_input *idx);

/* True when RECTOOL_FULL_SCAN is set to a non-empty value other than 0. */
bool rt_seek_full_scan(void);

/* path + ".idx" into out (size bytes); false when it does not fit. */
bool rt_seek_index_path(const char *path, char *out, size_t size);

#endif
