/* SPDX-License-Identifier: MIT */
/* The MPQ container of a replay, read through StormLib in a worker process (sc2_mpq_worker.c).
 * StormLib opens archives by path while the format table hands whole files in memory, so the
 * worker puts the bytes in an anonymous memory file (memfd, reached as /proc/self/fd/N) or an
 * unlinked temporary file. The worker exists because StormLib 9.22 is not safe on hostile
 * archives: Debian's build aborts on failed assertions (BET table checks) and its bzip2 loop spins
 * forever on some damaged sectors. A crash or a stall then costs the worker, and the caller gets
 * an error and the members read before it. StormLib is loaded with dlopen on the first call
 * (base/dl_table.h). Calls from several threads take turns. */
#ifndef RECD_SC2_MPQ_H
#define RECD_SC2_MPQ_H

#include <stddef.h>
#include <stdint.h>

#include "formats/sc2/sc2_mpq_worker.h"
#include "recd/common.h"

#define SC2_MPQ_TIMEOUT_MS 5000 /* real replays take milliseconds; only a stalled StormLib waits */

typedef struct sc2_extract {
    recd_buf names; /* the member names StormLib lists, each ending in '\0' */
    size_t nnames;
    /* Per wanted member: 0 read (data holds it), -ENOENT absent, -EFBIG over the cap, -EBADMSG
     * unreadable (data holds the reason, with the byte offset where the member is stored),
     * -ECANCELED not reached because StormLib stopped before it. */
    int status[SC2_MPQ_MAX_WANTED];
    recd_buf data[SC2_MPQ_MAX_WANTED];
} sc2_extract;

/* Opens buf as an MPQ archive, lists its members and reads the wanted ones (at most cap bytes
 * each). 0 when the archive opened (see the per-member status), -EBADMSG when it did not or
 * StormLib crashed or stalled (err says so; what arrived before is kept in out), -ELIBACC when
 * StormLib itself cannot be loaded (err names it), or a negative errno. out must be freed with
 * sc2_extract_free() whatever the result. */
int sc2_mpq_extract(const uint8_t *buf, size_t len, const char *const *wanted, size_t nwanted,
                    size_t cap, sc2_extract *out, char *err, size_t errlen);
void sc2_extract_free(sc2_extract *x);

/* The worker process serving this process, or 0 when there is none (for tests). */
int sc2_mpq_worker_pid(void);

/* Changes the deadline (default SC2_MPQ_TIMEOUT_MS); the fuzz target shortens it so inputs that
 * stall StormLib do not eat its time budget. */
void sc2_mpq_set_timeout_ms(int ms);

#endif
