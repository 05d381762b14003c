/* SPDX-License-Identifier: MIT */
/* benchgen text lines for rsyslog: a .rec block as the CSV row of docs/protocol.md section 3.1
 * (same columns, same order), printed with a fast formatter. librecd's CSV writer prints the
 * shortest float text, which costs ~30 us per block through printf and would make preparing
 * 5 million samples take minutes; nine significant digits identify every float exactly too, so
 * the line carries the same information. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "textline.h"

static char *put_u64(char *p, unsigned long long v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_i64(char *p, long long v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, 0ull - (unsigned long long)v);
    }
    return put_u64(p, (unsigned long long)v);
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14};

/* Nine significant digits in positional notation, trailing zeros dropped ("1730.288", "-0.5",
 * "100"). Magnitudes outside [1e-4, 1e9) go through printf's %.9g. */
static char *put_f32(char *p, float f)
{
    double v = (double)f;
    if (v == 0.0) {
        if (signbit(v))
            *p++ = '-';
        *p++ = '0';
        return p;
    }
    double a = fabs(v);
    if (!isfinite(v) || a < 1e-4 || a >= 1e9)
        return p + sprintf(p, "%.9g", v);
    int e = (int)floor(log10(a)); /* a = d.ddd x 10^e, -4 <= e <= 8 */
    double scaled = 8 - e >= 0 ? a * pow10_tab[8 - e] : a / pow10_tab[e - 8];
    unsigned long long m = (unsigned long long)llround(scaled);
    if (m >= 1000000000ull) { /* log10 or the rounding carried into a tenth digit */
        e++;
        scaled = 8 - e >= 0 ? a * pow10_tab[8 - e] : a / pow10_tab[e - 8];
        m = (unsigned long long)llround(scaled);
    } else if (m < 100000000ull) {
        e--;
        scaled = a * pow10_tab[8 - e];
        m = (unsigned long long)llround(scaled);
    }
    char dig[10];
    for (int i = 8; i >= 0; i--) {
        dig[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int last = 8; /* last significant digit kept */
    while (last > 0 && dig[last] == '0')
        last--;
    if (v < 0)
        *p++ = '-';
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            *p++ = dig[i];
        if (last > e) {
            *p++ = '.';
            for (int i = e + 1; i <= last; i++)
                *p++ = dig[i];
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -e - 1; i++)
            *p++ = '0';
        for (int i = 0; i <= last; i++)
            *p++ = dig[i];
    }
    return p;
}

#define U(v) (p = put_u64(p, (unsigned long long)(v)), *p++ = ',')
#define I(v) (p = put_i64(p, (long long)(v)), *p++ = ',')
#define F(v) (p = put_f32(p, (v)), *p++ = ',')

size_t bg_text_onfoot(const recd_rec_onfoot *b, char *out)
{
    char *p = out;
    U(b->time_ms);
    I(b->left_right);
    I(b->up_down);
    U(b->keys);
    F(b->position.x);
    F(b->position.y);
    F(b->position.z);
    F(b->rotation.w);
    F(b->rotation.x);
    F(b->rotation.y);
    F(b->rotation.z);
    U(b->health);
    U(b->armour);
    U(b->weapon);
    U(b->additional_key);
    U(b->special_action);
    F(b->velocity.x);
    F(b->velocity.y);
    F(b->velocity.z);
    F(b->surf_offset.x);
    F(b->surf_offset.y);
    F(b->surf_offset.z);
    U(b->surf_id);
    U(b->anim_id);
    U(b->anim_flags.frame_delta);
    U(b->anim_flags.loop);
    U(b->anim_flags.lock_x);
    U(b->anim_flags.lock_y);
    U(b->anim_flags.freeze);
    U(b->anim_flags.time);
    return (size_t)(p - 1 - out); /* without the last comma */
}

size_t bg_text_vehicle(const recd_rec_vehicle *b, char *out)
{
    char *p = out;
    U(b->time_ms);
    U(b->vehicle_id);
    I(b->left_right);
    I(b->up_down);
    U(b->keys);
    F(b->rotation.w);
    F(b->rotation.x);
    F(b->rotation.y);
    F(b->rotation.z);
    F(b->position.x);
    F(b->position.y);
    F(b->position.z);
    F(b->velocity.x);
    F(b->velocity.y);
    F(b->velocity.z);
    F(b->vehicle_health);
    U(b->driver_health);
    U(b->driver_armour);
    U(b->weapon);
    U(b->additional_key);
    U(b->siren);
    U(b->landing_gear);
    U(b->trailer_id);
    /* Both readings of bytes 63-66, as the CSV has three cells for them. */
    U(recd_rec_hydra_thrust(b->extra, 0));
    U(recd_rec_hydra_thrust(b->extra, 1));
    F(b->extra.train_speed);
    return (size_t)(p - 1 - out);
}
