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

void recap_channel_choose(double r, double v, recap_choice *out)
{
    out->q = 0;
    out->f = 0;
    if (same_bits(v, r)) {
        out->mode = RECAP_MODE_UNCHANGED;
        out->rec = r;
        return;
    }
    if (isfinite(r) && isfinite(v)) {
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
    }
    out->mode = RECAP_MODE_DOUBLE;
    out->rec = v;
}

static int put_value(recd_buf *out, const recap_choice *ch, double v)
{
    uint8_t b[8];
    switch (ch->mode) {
    case RECAP_MODE_SHORT:
        st_be16(b, (uint16_t)ch->q);
        return recd_buf_append(out, b, 2);
    case RECAP_MODE_FLOAT:
        st_be32(b, f32_to_bits(ch->f));
        return recd_buf_append(out, b, 4);
    case RECAP_MODE_DOUBLE:
        st_be64(b, f64_to_bits(v));
        return recd_buf_append(out, b, 8);
    default:
        return 0;
    }
}

int recap_movement_write(recd_buf *out, double r[RECAP_CHANNELS], const double v[RECAP_CHANNELS])
{
    recap_choice ch[RECAP_CHANNELS];
    uint8_t m[3] = {0, 0, 0};
    for (int g = 0; g < 3; g++) { /* three groups of three: constant shifts once unrolled */
        for (int k = 0; k < 3; k++) {
            int i = 3 * g + k;
            recap_channel_choose(r[i], v[i], &ch[i]);
            m[g] = (uint8_t)(m[g] | (ch[i].mode << (2 * k)));
        }
    }
    if ((m[0] | m[1] | m[2]) == 0)
        return 0;
    uint8_t head[4];
    size_t n = 0;
    head[n++] = RECD_RECAP_MOVEMENT;
    head[n++] = (uint8_t)(m[0] | (m[1] ? 0x40 : 0) | (m[2] ? 0x80 : 0));
    if (m[1])
        head[n++] = m[1];
    if (m[2])
        head[n++] = m[2];
    int rc = recd_buf_append(out, head, n);
    for (int i = 0; rc == 0 && i < RECAP_CHANNELS; i++)
        rc = put_value(out, &ch[i], v[i]);
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
