/* SPDX-License-Identifier: MIT */
/* Deterministic trigonometry and rounding for the synthetic generators: only IEEE basic
 * operations, so every host computes the same bits (libm's sin/cos may differ by an ulp). */
#include "synth/synth_internal.h"

#define TWO_PI_HI 6.28318530717958623200e+00 /* 2*pi split for an exact-ish reduction */
#define TWO_PI_LO 2.44929359829470635445e-16
#define PI_HI 3.14159265358979311600e+00
#define PI_LO 1.22464679914735317722e-16
#define HALF_PI 1.57079632679489661923

int64_t synth_round(double v)
{
    return v >= 0 ? (int64_t)(v + 0.5) : -(int64_t)(-v + 0.5);
}

double synth_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Taylor series on [-pi/2, pi/2]; the x^23 term is below 2e-17 there. */
static double sin_kernel(double x)
{
    double x2 = x * x;
    double p = 1.0 / 51090942171709440000.0;   /* 1/21! */
    p = p * -x2 + 1.0 / 121645100408832000.0;  /* 1/19! */
    p = p * -x2 + 1.0 / 355687428096000.0;     /* 1/17! */
    p = p * -x2 + 1.0 / 1307674368000.0;       /* 1/15! */
    p = p * -x2 + 1.0 / 6227020800.0;          /* 1/13! */
    p = p * -x2 + 1.0 / 39916800.0;            /* 1/11! */
    p = p * -x2 + 1.0 / 362880.0;              /* 1/9! */
    p = p * -x2 + 1.0 / 5040.0;                /* 1/7! */
    p = p * -x2 + 1.0 / 120.0;                 /* 1/5! */
    p = p * -x2 + 1.0 / 6.0;                   /* 1/3! */
    p = p * -x2 + 1.0;
    return x * p;
}

double synth_wrap_angle(double a)
{
    if (a >= -PI_HI && a < PI_HI)
        return a;
    double k = (double)synth_round(a / TWO_PI_HI);
    a = (a - k * TWO_PI_HI) - k * TWO_PI_LO;
    if (a >= PI_HI)
        a -= TWO_PI_HI;
    else if (a < -PI_HI)
        a += TWO_PI_HI;
    return a;
}

double synth_sin(double x)
{
    x = synth_wrap_angle(x);
    if (x > HALF_PI)
        x = (PI_HI - x) + PI_LO;
    else if (x < -HALF_PI)
        x = (-PI_HI - x) - PI_LO;
    return sin_kernel(x);
}

double synth_cos(double x)
{
    return synth_sin(synth_wrap_angle(x) + HALF_PI);
}
