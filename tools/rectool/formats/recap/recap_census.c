/* SPDX-License-Identifier: MIT */
/* Action census: inflate each complete gzip member and step over every action with the field
 * types of recd_recap_tag_info_get(); MOVEMENT's mode bytes and ITEM/LIST shapes follow
 * docs/formats/recap.md section 6. Anything unexpected stops the census (complete = false). */
#include "recap_census.h"

#include <errno.h>
#include <string.h>

#include "recd/gzip_members.h"
#include "recd/recap.h"

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static bool take(cursor *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    c->p += n;
    return true;
}

static bool take_prefixed(cursor *c, size_t prefix_bytes)
{
    if ((size_t)(c->end - c->p) < prefix_bytes)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < prefix_bytes; i++)
        n = (n << 8) | c->p[i]; /* big-endian length */
    c->p += prefix_bytes;
    return take(c, n);
}

static bool skip_item(cursor *c)
{
    if (c->p >= c->end)
        return false;
    uint8_t key_len = *c->p;
    if (!take_prefixed(c, 1))
        return false;
    if (key_len == 0)
        return true; /* empty slot: nothing follows */
    return take(c, 2) && take_prefixed(c, 2); /* count, flags, u16 data */
}

/* MOVEMENT: m0 [m1] [m2], then a value per channel whose 2-bit mode is not UNCHANGED. */
static bool skip_movement(cursor *c)
{
    static const size_t mode_bytes[4] = {0, 2, 4, 8};
    if (c->p >= c->end)
        return false;
    uint8_t modes[3] = {*c->p++, 0, 0};
    int groups = 1;
    if (modes[0] & 0x40) {
        if (c->p >= c->end)
            return false;
        modes[groups++] = *c->p++;
    }
    if (modes[0] & 0x80) {
        if (c->p >= c->end)
            return false;
        modes[groups++] = *c->p++;
    }
    for (int g = 0; g < groups; g++)
        for (int ch = 0; ch < 3; ch++)
            if (!take(c, mode_bytes[(modes[g] >> (2 * ch)) & 3]))
                return false;
    return true;
}

static bool skip_fields(cursor *c, const recd_recap_field *fields, size_t n);

static bool skip_field(cursor *c, const recd_recap_field *f)
{
    switch (f->type) {
    case RECD_RECAP_T_U8: return take(c, 1);
    case RECD_RECAP_T_U16: return take(c, 2);
    case RECD_RECAP_T_I32: return take(c, 4);
    case RECD_RECAP_T_I64: return take(c, 8);
    case RECD_RECAP_T_F32: return take(c, 4);
    case RECD_RECAP_T_F64: return take(c, 8);
    case RECD_RECAP_T_STR: return take_prefixed(c, 1);
    case RECD_RECAP_T_TEXT: return take_prefixed(c, 2);
    case RECD_RECAP_T_BYTES: return take_prefixed(c, 4);
    case RECD_RECAP_T_ITEM: return skip_item(c);
    case RECD_RECAP_T_MOVEMENT: return skip_movement(c);
    case RECD_RECAP_T_LIST: {
        if ((size_t)(c->end - c->p) < 2 || !f->elem)
            return false;
        size_t rows = ((size_t)c->p[0] << 8) | c->p[1];
        c->p += 2;
        for (size_t r = 0; r < rows; r++)
            if (!skip_fields(c, f->elem, f->elem_count))
                return false;
        return true;
    }
    default: return false;
    }
}

static bool skip_fields(cursor *c, const recd_recap_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!skip_field(c, &fields[i]))
            return false;
    return true;
}

typedef struct census_run {
    rt_recap_census *c;
    uint64_t idle_chain;
} census_run;

static int on_member(void *ctx, uint64_t member_offset, uint64_t member_end, const uint8_t *data,
                     size_t len)
{
    census_run *run = ctx;
    rt_recap_census *c = run->c;
    (void)member_end;
    c->members++;
    c->inflated_bytes += len;
    cursor cur = {data, data + len};
    while (cur.p < cur.end) {
        uint8_t tag = *cur.p++;
        const recd_recap_tag_info *info = recd_recap_tag_info_get(tag);
        if (!info || !skip_fields(&cur, info->fields, info->field_count)) {
            c->complete = false;
            c->stop_member_offset = member_offset;
            return 1;
        }
        c->tag_counts[tag]++;
        if (tag == RECD_RECAP_SKIP_TICKS) {
            uint8_t n = cur.p[-1]; /* the u8 count just stepped over */
            c->skip_runs++;
            c->skipped_ticks += n;
            run->idle_chain += n;
            if (run->idle_chain > c->longest_idle)
                c->longest_idle = run->idle_chain;
        } else {
            run->idle_chain = 0;
        }
    }
    return 0;
}

int rt_recap_census_run(const uint8_t *buf, size_t len, uint64_t data_offset, rt_recap_census *c)
{
    memset(c, 0, sizeof *c);
    c->complete = true;
    if (data_offset > len)
        return 0;
    census_run run = {c, 0};
    recd_gzip_scan scan;
    int rc = recd_gzip_members_read(buf + data_offset, len - (size_t)data_offset, 0, on_member,
                                    &run, &scan);
    if (rc == -ENOMEM)
        return rc;
    if (!c->complete)
        c->stop_member_offset += data_offset;
    return 0;
}
