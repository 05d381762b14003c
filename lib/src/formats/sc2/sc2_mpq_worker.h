/* SPDX-License-Identifier: MIT */
/* The process that runs StormLib for sc2_mpq.c, and the messages the two exchange over a stream
 * socket. All numbers are 32-bit little-endian.
 *   request:  'Q' file_len nwanted cap alarm_s, then per wanted member name_len name, then the
 *             file bytes; alarm_s bounds the request, so that a stalled StormLib cannot outlive
 *             a parent that died waiting for it
 *   records:  type index status len, then len bytes; type 'A' the request arrived whole (so a
 *             worker that dies before sending it died idle, not on this file), 'N' a member name,
 *             'D' a wanted member (status 0 with its bytes, or a negative errno with the reason),
 *             'E' the archive did not open (the reason), 'Z' the reply is complete
 * The worker serves one request after another until its socket closes. */
#ifndef RECD_SC2_MPQ_WORKER_H
#define RECD_SC2_MPQ_WORKER_H

#include <stddef.h>
#include <stdint.h>

#define SC2_MPQ_MAX_WANTED 8    /* wanted members per request (and per sc2_extract) */
#define SC2_MPQ_REQUEST_HEAD 17 /* 'Q' and four numbers */
#define SC2_MPQ_RECORD_HEAD 13  /* the type and three numbers */
#define SC2_MPQ_MAX_NAMES 4096  /* member names listed per archive */
#define SC2_MPQ_NAME_BYTES 260  /* a wanted member's name and its '\0' (StormLib's MAX_PATH) */

static inline uint32_t sc2_mpq_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void sc2_mpq_put32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        p[b] = (uint8_t)(v >> (8 * b));
}

/* Loads StormLib in the calling process, so that every worker forked later has it mapped. 0, or
 * -ELIBACC with err naming the library and its package. */
int sc2_mpq_worker_load(char *err, size_t errlen);

/* The worker's whole life, in a freshly forked child that owns fd; never returns. */
_Noreturn void sc2_mpq_worker_main(int fd);

#endif
