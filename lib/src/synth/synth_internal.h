/* SPDX-License-Identifier: MIT */
/* Internals shared by the synthetic generators: deterministic trigonometry, gentle terrain and a
 * kinematic mover (heading, turn rate, speed) that the formats' generators (in their folders under
 * lib/src/formats/) drive. */
#ifndef RECD_SYNTH_INTERNAL_H
#define RECD_SYNTH_INTERNAL_H

#include "recd/synth.h"

/* Clang may fuse a*b+c into an FMA on some targets, which changes the last bit of results; the
 * generators must give the same bytes everywhere. (GCC does not contract in ISO C mode.) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define SYNTH_PI 3.14159265358979323846

/* sin/cos from +, *, / only (libm results may differ by an ulp between hosts). |x| < 1e9. */
double synth_sin(double x);
double synth_cos(double x);
double synth_wrap_angle(double a); /* to [-pi, pi) */
double synth_clamp(double v, double lo, double hi);
int64_t synth_round(double v); /* half away from zero; |v| < 2^62 */

/* An activity's length in seconds, shortened for short recordings (outside the idle scenario) so
 * that even 30 s of "mixed" show several activities. */
double synth_activity_seconds(const recd_synth_params *p, double seconds);

/* Index i with probability weights[i] / sum (n entries, sum > 0). */
int synth_pick_weighted(recd_synth_rng *r, const unsigned *weights, int n);

/* Smooth rolling ground: a base height plus two long sine waves (slopes below ~8 degrees). */
typedef struct synth_terrain {
    double base;
    double a1, k1x, k1y, p1, p2;
    double a2, k2x, k2y, p3;
} synth_terrain;

void synth_terrain_init(synth_terrain *t, recd_synth_rng *r, double base_lo, double base_hi);
double synth_terrain_height(const synth_terrain *t, double x, double y);

/* A body moving on the horizontal (x, y) plane: straight stretches and smooth turns towards a
 * heading that changes now and then, with a little turn-rate noise on top (or, without
 * steering, a pure bounded random walk of the turn rate). heading: 0 = +y, counter-clockwise
 * positive, so forward = (-sin h, cos h); a generator whose ground is an (x, z) plane with a yaw
 * of the same form uses the mover with y standing for z. */
typedef struct synth_mover {
    double x, y, z;
    double heading, turn_rate; /* rad, rad/s */
    double speed, target_speed; /* m/s along the heading */
    double vz;                  /* m/s, from following the terrain */
    double accel, brake;        /* m/s^2 limits towards target_speed */
    double max_turn_rate;       /* rad/s */
    double max_lat_accel;       /* m/s^2: |turn_rate| <= this / speed when moving fast */
    double turn_noise;          /* rad/s^2: strength of the turn-rate random walk */
    double turn_decay;          /* 1/s: pull of the turn rate back towards straight */
    double turn_speed_ref;      /* > 0: yaw rate scales with speed / this below it (wheels) */
    /* Purposeful steering (used when steer_gain > 0): the turn rate follows the way to
     * desired_heading, which is re-aimed by up to +-retarget_angle every retarget_min..max s. */
    double desired_heading, steer_gain, turn_accel;
    double retarget_in, retarget_min_s, retarget_max_s, retarget_angle;
    double height;              /* z above the terrain; unused without terrain */
    double center_x, center_y, bound; /* steer back once further than bound from the centre */
    double long_accel;          /* last step's speed change per second (brake/throttle keys) */
    const synth_terrain *terrain; /* NULL: z is left to the caller */
} synth_mover;

void synth_mover_step(synth_mover *m, recd_synth_rng *r, double dt);
/* Advances by seconds in steps of at most 50 ms. */
void synth_mover_advance(synth_mover *m, recd_synth_rng *r, double seconds);
/* Horizontal velocity along the heading, m/s. */
double synth_mover_vx(const synth_mover *m);
double synth_mover_vy(const synth_mover *m);
/* Terrain slope along the heading (dz per metre forward); 0 without terrain. */
double synth_mover_slope(const synth_mover *m);

#endif
