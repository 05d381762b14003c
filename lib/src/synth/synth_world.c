/* SPDX-License-Identifier: MIT */
/* The synthetic world: rolling terrain and a kinematic mover whose turn rate does a bounded random
 * walk, so paths curve smoothly instead of zig-zagging, and whose speed eases towards a target
 * with acceleration and braking limits. */
#include "synth/synth_internal.h"

#include <math.h>

void synth_terrain_init(synth_terrain *t, recd_synth_rng *r, double base_lo, double base_hi)
{
    t->base = recd_synth_rng_range(r, base_lo, base_hi);
    /* Wavelengths of 700-1400 m and 180-320 m keep slopes gentle (a*k well below 0.1). */
    t->a1 = recd_synth_rng_range(r, 3.0, 8.0);
    t->k1x = 2 * SYNTH_PI / recd_synth_rng_range(r, 700.0, 1400.0);
    t->k1y = 2 * SYNTH_PI / recd_synth_rng_range(r, 700.0, 1400.0);
    t->p1 = recd_synth_rng_range(r, 0, 2 * SYNTH_PI);
    t->p2 = recd_synth_rng_range(r, 0, 2 * SYNTH_PI);
    t->a2 = recd_synth_rng_range(r, 0.5, 2.0);
    t->k2x = 2 * SYNTH_PI / recd_synth_rng_range(r, 180.0, 320.0);
    t->k2y = 2 * SYNTH_PI / recd_synth_rng_range(r, 180.0, 320.0);
    t->p3 = recd_synth_rng_range(r, 0, 2 * SYNTH_PI);
}

double synth_terrain_height(const synth_terrain *t, double x, double y)
{
    return t->base + t->a1 * synth_sin(x * t->k1x + t->p1) * synth_cos(y * t->k1y + t->p2) +
           t->a2 * synth_sin(x * t->k2x + y * t->k2y + t->p3);
}

double synth_mover_vx(const synth_mover *m) { return -synth_sin(m->heading) * m->speed; }
double synth_mover_vy(const synth_mover *m) { return synth_cos(m->heading) * m->speed; }

double synth_mover_slope(const synth_mover *m)
{
    if (!m->terrain)
        return 0;
    double fx = -synth_sin(m->heading), fy = synth_cos(m->heading);
    double ahead = synth_terrain_height(m->terrain, m->x + fx, m->y + fy);
    double behind = synth_terrain_height(m->terrain, m->x - fx, m->y - fy);
    return (ahead - behind) / 2.0;
}

/* Uniform noise with unit variance: cheaper than a normal and good enough for a random walk. */
static double unit_noise(recd_synth_rng *r)
{
    return recd_synth_rng_range(r, -1.7320508075688772, 1.7320508075688772);
}

static void update_speed(synth_mover *m, double dt)
{
    double before = m->speed;
    if (m->speed < m->target_speed) {
        double up = m->accel * dt;
        m->speed = m->speed + up < m->target_speed ? m->speed + up : m->target_speed;
    } else if (m->speed > m->target_speed) {
        double down = m->brake * dt;
        m->speed = m->speed - down > m->target_speed ? m->speed - down : m->target_speed;
    }
    m->long_accel = (m->speed - before) / dt;
}

/* Past the soft boundary, lean the turn rate towards the centre (sign of a cross product, so no
 * atan2 is needed). */
static double boundary_pull(const synth_mover *m)
{
    double dx = m->x - m->center_x, dy = m->y - m->center_y;
    if (m->bound <= 0 || (dx <= m->bound && dx >= -m->bound && dy <= m->bound && dy >= -m->bound))
        return 0;
    double fx = -synth_sin(m->heading), fy = synth_cos(m->heading);
    double cross = fx * -dy - fy * -dx; /* > 0: the centre is to the left (counter-clockwise) */
    return cross >= 0 ? 1.0 : -1.0;
}

/* Re-aims desired_heading now and then; beyond the boundary, aims a quarter turn towards the
 * centre until back inside. */
static void retarget(synth_mover *m, recd_synth_rng *r, double dt)
{
    double pull = boundary_pull(m);
    if (pull != 0) {
        m->desired_heading = synth_wrap_angle(m->heading + pull * SYNTH_PI / 2);
        return;
    }
    m->retarget_in -= dt;
    if (m->retarget_in > 0)
        return;
    m->desired_heading = synth_wrap_angle(
        m->heading + recd_synth_rng_range(r, -m->retarget_angle, m->retarget_angle));
    m->retarget_in = recd_synth_rng_range(r, m->retarget_min_s, m->retarget_max_s);
}

static void update_turn(synth_mover *m, recd_synth_rng *r, double dt)
{
    double limit = m->max_turn_rate;
    if (m->speed > 0.5 && m->max_lat_accel / m->speed < limit)
        limit = m->max_lat_accel / m->speed;
    /* sqrt is correctly rounded by IEEE 754, so it is as deterministic as + and *. */
    double noise = m->turn_noise * sqrt(dt) * unit_noise(r);
    if (m->steer_gain > 0) {
        retarget(m, r, dt);
        double want = synth_clamp(
            m->steer_gain * synth_wrap_angle(m->desired_heading - m->heading), -limit, limit);
        double step = m->turn_accel * dt;
        m->turn_rate += synth_clamp(want - m->turn_rate, -step, step) + noise;
    } else {
        m->turn_rate += -m->turn_rate * m->turn_decay * dt + noise;
        m->turn_rate += boundary_pull(m) * m->max_turn_rate * 2.0 * dt;
    }
    m->turn_rate = synth_clamp(m->turn_rate, -limit, limit);
}

/* Yaw rate actually applied: wheeled bodies cannot turn on the spot. */
static double effective_turn(const synth_mover *m)
{
    if (m->turn_speed_ref <= 0 || m->speed >= m->turn_speed_ref)
        return m->turn_rate;
    return m->turn_rate * (m->speed / m->turn_speed_ref);
}

void synth_mover_step(synth_mover *m, recd_synth_rng *r, double dt)
{
    if (dt <= 0)
        return;
    update_speed(m, dt);
    update_turn(m, r, dt);
    double yaw_rate = effective_turn(m);
    double h0 = m->heading;
    m->heading = synth_wrap_angle(m->heading + yaw_rate * dt);
    /* Move along the mean heading of the step so the path matches the reported velocities. */
    double mid = h0 + yaw_rate * dt * 0.5;
    m->x += -synth_sin(mid) * m->speed * dt;
    m->y += synth_cos(mid) * m->speed * dt;
    if (m->terrain) {
        double z = synth_terrain_height(m->terrain, m->x, m->y) + m->height;
        m->vz = (z - m->z) / dt;
        m->z = z;
    }
}

void synth_mover_advance(synth_mover *m, recd_synth_rng *r, double seconds)
{
    while (seconds > 1e-9) {
        double dt = seconds > 0.05 ? 0.05 : seconds;
        synth_mover_step(m, r, dt);
        seconds -= dt;
    }
}
