/* SPDX-License-Identifier: MIT */
/* MOVEMENT (0x02): per-channel UNCHANGED / SHORT / FLOAT / DOUBLE against the value the reader
 * reconstructs, so quantisation error never accumulates (docs/formats/recap.md section 6.2). */
#include <errno.h>
#include <float.h>
#include <math.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"

static bool same_bits(double a, double b) { return f64_to_bits(a) == f64_to_bits(b); }

/* round((v - r) * 100), halves away from zero, when it fits in +-32767; else false. */
static bool quantise(double r, double v, long *q)
{
    double d = (v - r) * 100.0;
    if (!(fabs(d) < 32767.5))
        return false; /* also rejects NaN */
    *q = recap_round_short(d);
    return *q >= -32767 && *q <= 32767;
}

/* A channel's mode against the reader's value. Non-finite values need no test of their own: a
 * difference involving one is infinite or NaN, which neither quantise() nor the FLOAT range takes,
 * so they fall through to DOUBLE (as a finite difference too large for a float does). q and f are
 * set only for the mode that uses them (recap_channel_choose() zeroes them for its callers). */
static inline void channel_choose(double r, double v, recap_choice *out)
{
    if (same_bits(v, r)) {
        out->mode = RECAP_MODE_UNCHANGED;
        out->rec = r;
        return;
    }
    long q;
    if (quantise(r, v, &q)) {
        double c = r + (double)q / 100.0;
        if (fabs(c - v) <= RECD_RECAP_SHORT_TOLERANCE) {
            if (same_bits(c, r)) {
                out->mode = RECAP_MODE_UNCHANGED;
                out->rec = r;
                return;
            }
            long q2;
            if (quantise(r, c, &q2) && q2 == q) {
                out->mode = RECAP_MODE_SHORT;
                out->q = (int16_t)q;
                out->rec = c;
                return;
            }
        }
    }
    double d = v - r;
    if (fabs(d) <= FLT_MAX) {
        float f = (float)d;
        double c = r + (double)f;
        if (same_bits(c, v)) {
            out->mode = RECAP_MODE_FLOAT;
            out->f = f;
            out->rec = c;
            return;
        }
    }
    out->mode = RECAP_MODE_DOUBLE;
    out->rec = v;
}

void recap_channel_choose(double r, double v, recap_choice *out)
{
    out->q = 0;
    out->f = 0;
    channel_choose(r, v, out);
}

/* A channel's value in its mode's width at p; returns the bytes written. */
static inline size_t put_value(uint8_t *p, const recap_choice *ch, double v)
{
    switch (ch->mode) {
    case RECAP_MODE_SHORT: st_be16(p, (uint16_t)ch->q); return 2;
    case RECAP_MODE_FLOAT: st_be32(p, f32_to_bits(ch->f)); return 4;
    case RECAP_MODE_DOUBLE: st_be64(p, f64_to_bits(v)); return 8;
    default: return 0;
    }
}

int recap_movement_write(recd_buf *out, double r[RECAP_CHANNELS], const double v[RECAP_CHANNELS])
{
    recap_choice ch[RECAP_CHANNELS];
    uint8_t m[3] = {0, 0, 0};
    for (int g = 0; g < 3; g++) { /* three groups of three: constant shifts once unrolled */
        for (int k = 0; k < 3; k++) {
            int i = 3 * g + k;
            channel_choose(r[i], v[i], &ch[i]);
            m[g] = (uint8_t)(m[g] | (ch[i].mode << (2 * k)));
        }
    }
    if ((m[0] | m[1] | m[2]) == 0)
        return 0;
    /* The whole action is put together here and appended once (an append per channel cost more
     * than the values' own encoding). */
    uint8_t a[4 + 8 * RECAP_CHANNELS];
    size_t n = 0;
    a[n++] = RECD_RECAP_MOVEMENT;
    a[n++] = (uint8_t)(m[0] | (m[1] ? 0x40 : 0) | (m[2] ? 0x80 : 0));
    if (m[1])
        a[n++] = m[1];
    if (m[2])
        a[n++] = m[2];
    for (int i = 0; i < RECAP_CHANNELS; i++)
        n += put_value(a + n, &ch[i], v[i]);
    int rc = recd_buf_append(out, a, n);
    if (rc)
        return rc;
    for (int i = 0; i < RECAP_CHANNELS; i++)
        r[i] = ch[i].rec;
    return 1;
}

recap_perr recap_movement_parse(recap_cur *c, double r[RECAP_CHANNELS])
{
    if (!cur_has(c, 1))
        return RECAP_E_TRUNCATED;
    uint8_t m0 = c->p[c->pos++];
    uint8_t m[3] = {(uint8_t)(m0 & 0x3F), 0, 0};
    for (int g = 1; g <= 2; g++) {
        if (!(m0 & (g == 1 ? 0x40 : 0x80)))
            continue;
        if (!cur_has(c, 1))
            return RECAP_E_TRUNCATED;
        m[g] = c->p[c->pos++];
        if (m[g] == 0 || (m[g] & 0xC0))
            return RECAP_E_MOVEMENT;
    }
    if ((m[0] | m[1] | m[2]) == 0)
        return RECAP_E_MOVEMENT;
    for (int i = 0; i < RECAP_CHANNELS; i++) {
        int mode = (m[i / 3] >> (2 * (i % 3))) & 3;
        static const size_t width[4] = {0, 2, 4, 8};
        if (!cur_has(c, width[mode]))
            return RECAP_E_TRUNCATED;
        const uint8_t *p = c->p + c->pos;
        c->pos += width[mode];
        if (!r)
            continue;
        if (mode == RECAP_MODE_SHORT)
            r[i] = r[i] + (double)(int16_t)ld_be16(p) / 100.0;
        else if (mode == RECAP_MODE_FLOAT)
            r[i] = r[i] + (double)f32_from_bits(ld_be32(p));
        else if (mode == RECAP_MODE_DOUBLE)
            r[i] = f64_from_bits(ld_be64(p));
    }
    return RECAP_OK;
}
