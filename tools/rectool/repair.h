/* The repairs behind `rectool repair`: cut a damaged recording back to what was completely
 * written and make its header agree with what is kept. Pure functions over buffers. */
#ifndef RECTOOL_REPAIR_H
#define RECTOOL_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

typedef struct rt_repair {
    recd_buf out;          /* the repaired file */
    uint64_t kept_bytes;   /* of the input, excluding header rewrites */
    uint64_t dropped_bytes;
    uint64_t kept_units;   /* whole blocks (.rec) or ticks (.recap) */
    const char *unit;      /* "blocks" or "ticks" */
    bool changed;          /* out differs from the input */
    char detail[256];      /* what was done, or why the file cannot be repaired */
} rt_repair;

/* 0 when out holds a repaired file that verifies; -EBADMSG when nothing valid can be made of the
 * input (detail says why); -ENOMEM. Free r->out with recd_buf_free() either way. */
int rt_repair_rec(const uint8_t *buf, size_t len, rt_repair *r);
int rt_repair_recap(const uint8_t *buf, size_t len, rt_repair *r);

#endif
