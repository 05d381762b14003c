/* SPDX-License-Identifier: MIT */
/* The MPQ container of a replay, read through StormLib. StormLib opens archives by path while the
 * format table hands whole files in memory, so the bytes are put in an anonymous memory file
 * (memfd, reached as /proc/self/fd/N) or, where that is unavailable, an unlinked temporary file. */
#ifndef RECD_SC2_MPQ_H
#define RECD_SC2_MPQ_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

typedef struct sc2_mpq {
    void *archive; /* StormLib's HANDLE */
    int fd;        /* the memory file, -1 when none */
    size_t file_len;
} sc2_mpq;

/* 0, -EBADMSG (err says why, with the offset where it applies), or a negative errno. */
int sc2_mpq_open(sc2_mpq *m, const uint8_t *buf, size_t len, char *err, size_t errlen);
/* Reads member name (at most cap bytes) into out (reset first). 0, -ENOENT when the archive has no
 * such member, -EFBIG over cap, -EBADMSG when it cannot be read (err says where it is stored). */
int sc2_mpq_read(sc2_mpq *m, const char *name, size_t cap, recd_buf *out, char *err,
                 size_t errlen);
/* Calls fn once per member name StormLib lists; returns how many. */
size_t sc2_mpq_list(sc2_mpq *m, void (*fn)(void *data, const char *name), void *data);
void sc2_mpq_close(sc2_mpq *m);

#endif
