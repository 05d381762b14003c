/* SPDX-License-Identifier: MIT */
/* Complete gzip members: deterministic one-shot writer and a bounded multi-member reader that
 * finds where the last complete member ends (so a cut file can be repaired by truncation). */
#ifndef RECD_GZIP_MEMBERS_H
#define RECD_GZIP_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_GZIP_HEADER_SIZE 10
#define RECD_GZIP_TRAILER_SIZE 8
#define RECD_GZIP_OS_BYTE 255 /* "unknown": fixed so output does not depend on the host */

/* A reusable raw-deflate compressor (about 256 KiB of zlib state, and libdeflate's once used).
 * Not thread-safe; share it between encoders running on one thread. */
typedef struct recd_gzip_deflater recd_gzip_deflater;

RECD_API recd_gzip_deflater *recd_gzip_deflater_new(void);
RECD_API void recd_gzip_deflater_free(recd_gzip_deflater *d);

/* Appends one complete gzip member holding data[0..len) to out: 10-byte header (no name, mtime 0,
 * XFL 0, OS 255), raw deflate at level 1..9, CRC-32, ISIZE. Same input and level, same bytes.
 * d may be NULL (a temporary compressor is used). 0 or a negative errno. */
RECD_API int recd_gzip_member_write(recd_gzip_deflater *d, int level, const void *data, size_t len,
                                    recd_buf *out);

/* The deflate implementation behind a member. Both write standard members that any gzip reader
 * takes; the bytes differ, so a re-encode that must match uses the one recorded with the file
 * (a Recap header's encoder settings). */
typedef enum recd_gzip_compressor {
    RECD_GZIP_ZLIB = 0,      /* zlib, windowBits 15, memLevel 8, default strategy */
    RECD_GZIP_LIBDEFLATE = 1 /* libdeflate: about half of zlib's CPU at level 1, and smaller */
} recd_gzip_compressor;

/* Its name as files and configs spell it ("zlib", "libdeflate"); NULL for another value. */
RECD_API const char *recd_gzip_compressor_name(recd_gzip_compressor compressor);
/* The compressor a name spells; -EINVAL for another name. */
RECD_API int recd_gzip_compressor_from_name(const char *name, recd_gzip_compressor *out);

/* recd_gzip_member_write with a choice of compressor (the same header and trailer). */
RECD_API int recd_gzip_member_write_with(recd_gzip_deflater *d, recd_gzip_compressor compressor,
                                         int level, const void *data, size_t len, recd_buf *out);

/* Called with each complete, valid member's inflated bytes (valid during the call); member_offset
 * and member_end are byte offsets in the input. Non-zero return stops reading. */
typedef int (*recd_gzip_member_fn)(void *ctx, uint64_t member_offset, uint64_t member_end,
                                   const uint8_t *data, size_t len);

typedef struct recd_gzip_scan {
    uint64_t members;   /* complete, valid members */
    uint64_t valid_end; /* offset after the last of them (start offset when there is none) */
    bool truncated;     /* the tail is a member cut short */
    bool corrupt;       /* the tail is not a valid member (bad header, deflate data, CRC, size) */
    int tail_error;     /* -EAGAIN (cut), -EBADMSG (corrupt), -EMSGSIZE (over max_out), or 0 */
    char tail_reason[96];
} recd_gzip_scan;

/* Reads the members of buf[0..len) in order until the end or the first bad/cut one. max_out
 * bounds the inflated size of one member (0 = 64 MiB); a bigger member is reported as corrupt
 * with -EMSGSIZE. Returns 0 when everything was complete members, the tail error when a tail was
 * ignored, -ENOMEM, or fn's non-zero value. scan is filled in every case. */
RECD_API int recd_gzip_members_read(const uint8_t *buf, size_t len, size_t max_out,
                                    recd_gzip_member_fn fn, void *ctx, recd_gzip_scan *scan);

#ifdef __cplusplus
}
#endif
#endif
