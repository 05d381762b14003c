/* SPDX-License-Identifier: MIT */
/* FILE.idx beside FILE for the commands that seek (seek_util.h). */
#include "seek_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "recd/seek_index.h"

bool rt_seek_index_path(const char *path, char *out, size_t size)
{
    int n = snprintf(out, size, "%s%s", path, RECD_SEEK_INDEX_SUFFIX);
    return n > 0 && (size_t)n < size;
}

bool rt_seek_index_open(const char *path, rt_input *idx)
{
    memset(idx, 0, sizeof *idx);
    char name[4096];
    if (strcmp(path, "-") == 0 || rt_seek_full_scan() || !rt_seek_index_path(path, name, sizeof name))
        return false;
    struct stat st;
    if (stat(name, &st) < 0 || !S_ISREG(st.st_mode))
        return false; /* a FIFO planted there must not block the command */
    static char kept[4096]; /* rt_input keeps the path pointer: one sidecar open at a time */
    snprintf(kept, sizeof kept, "%s", name);
    if (rt_input_open(idx, kept) < 0) {
        memset(idx, 0, sizeof *idx);
        return false;
    }
    return true;
}

void rt_seek_index_close(rt_input *idx)
{
    if (idx->data)
        rt_input_close(idx);
    memset(idx, 0, sizeof *idx);
}

bool rt_seek_full_scan(void)
{
    const char *v = getenv("RECTOOL_FULL_SCAN");
    return v && v[0] && strcmp(v, "0") != 0;
}
