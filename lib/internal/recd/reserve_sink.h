/* SPDX-License-Identifier: MIT */
/* A byte sink that can also hand out room to fill in place. An encoder that knows it writes a
 * whole unit (a frame) straight into that room, one copy, instead of assembling the unit in its
 * own buffer and handing it to write(); any other encoder just calls write(). */
#ifndef RECD_RESERVE_SINK_H
#define RECD_RESERVE_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

/* The room for len bytes (len > 0) to fill, valid until the next call, or NULL when there is no
 * memory. */
typedef uint8_t *(*recd_reserve_fn)(void *ctx, size_t len);

typedef struct recd_reserve_sink {
    recd_write_fn write;
    recd_reserve_fn reserve;
    void *ctx; /* given to both */
} recd_reserve_sink;

/* A recd_sink over rs, which must outlive it: its write() is rs->write. */
recd_sink recd_reserve_sink_as_sink(recd_reserve_sink *rs);
/* The reserve sink s was made from by recd_reserve_sink_as_sink(), or NULL for any other sink. */
const recd_reserve_sink *recd_reserve_sink_of(recd_sink s);

#endif
