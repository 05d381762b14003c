/* SPDX-License-Identifier: MIT */
/* Synthetic driver behaviour for .rec: cruising, fast stretches, slow manoeuvring and stops, with
 * throttle/brake keys and steering derived from the motion, a body that pitches with the terrain
 * and rolls in curves, vehicle health lost to the odd bump, and police sirens. */
#include "formats/rec/rec_synth_internal.h"

#include <math.h>

enum { CAR_PARKED, CAR_STOP, CAR_SLOW, CAR_CRUISE, CAR_FAST, CAR_MODES };

/* SA-MP key bits in a vehicle. */
#define KEY_ACCELERATE 8 /* KEY_SPRINT */
#define KEY_BRAKE 32     /* KEY_JUMP: brake / reverse */
#define KEY_HANDBRAKE 128

typedef struct car_mode_info {
    double lo, hi;       /* target speed range, m/s */
    double min_s, max_s; /* duration */
    unsigned idle_w, drive_w, mixed_w;
} car_mode_info;

static const car_mode_info modes[CAR_MODES] = {
    [CAR_PARKED] = {0, 0, 20, 120, 100, 0, 8},
    [CAR_STOP] = {0, 0, 4, 40, 0, 20, 18},
    [CAR_SLOW] = {3, 8, 5, 25, 0, 15, 16},
    [CAR_CRUISE] = {11, 22, 15, 90, 0, 45, 38},
    [CAR_FAST] = {26, 40, 10, 60, 0, 20, 20},
};

static void choose_mode(recd_synth_rec_gen *g)
{
    synth_car *c = &g->car;
    recd_synth_rng *r = &g->rng;
    unsigned w[CAR_MODES];
    for (int i = 0; i < CAR_MODES; i++)
        w[i] = g->p.scenario == RECD_SYNTH_SCENARIO_IDLE    ? modes[i].idle_w
               : g->p.scenario == RECD_SYNTH_SCENARIO_DRIVE ? modes[i].drive_w
                                                            : modes[i].mixed_w;
    int prev = c->mode;
    c->mode = synth_pick_weighted(r, w, CAR_MODES);
    if (c->mode == CAR_STOP && prev <= CAR_STOP && g->p.scenario != RECD_SYNTH_SCENARIO_IDLE)
        c->mode = CAR_CRUISE; /* no stop right after a stop */
    const car_mode_info *m = &modes[c->mode];
    double len = recd_synth_rng_range(r, m->min_s, m->max_s);
    c->mode_until = g->t + synth_activity_seconds(&g->p, len);
    g->mover.target_speed = recd_synth_rng_range(r, m->lo, m->hi);
    c->resume_speed = g->mover.target_speed;
    /* Long straight roads at speed, turns at junctions in town, tight manoeuvres when slow. */
    synth_mover *mv = &g->mover;
    mv->turn_noise = c->mode == CAR_FAST ? 0.01 : (c->mode == CAR_SLOW ? 0.05 : 0.02);
    mv->retarget_min_s = c->mode == CAR_FAST ? 15.0 : (c->mode == CAR_SLOW ? 3.0 : 6.0);
    mv->retarget_max_s = c->mode == CAR_FAST ? 60.0 : (c->mode == CAR_SLOW ? 12.0 : 40.0);
    mv->retarget_angle = c->mode == CAR_FAST ? 0.5 : 1.7;
    c->mode_brake = c->mode == CAR_STOP ? 6.5 : 3.5;
    mv->brake = c->mode_brake;
    c->collision_until = 0;
    if (c->mode == CAR_PARKED && c->siren)
        c->siren = 0;
    if (c->mode == CAR_PARKED && g->p.scenario == RECD_SYNTH_SCENARIO_MIXED && c->health < 400)
        c->health = 1000.0f; /* repaired while parked */
}

void synth_car_init(recd_synth_rec_gen *g)
{
    synth_car *c = &g->car;
    synth_mover *mv = &g->mover;
    recd_synth_rng *r = &g->rng;
    mv->accel = recd_synth_rng_range(r, 2.5, 4.0);
    mv->brake = 3.5;
    mv->max_turn_rate = 0.9;
    mv->max_lat_accel = 5.0;
    mv->steer_gain = 0.8;
    mv->turn_accel = 0.6;
    mv->desired_heading = mv->heading;
    mv->retarget_in = recd_synth_rng_range(r, 5.0, 20.0);
    mv->turn_speed_ref = 4.0;
    mv->height = 0.9; /* vehicle origin above the road */
    c->vehicle_id = (uint16_t)(1 + recd_synth_rng_below(r, 600));
    c->health = 1000.0f;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED) {
        c->health = (float)synth_round(recd_synth_rng_range(r, 650.0, 1000.0));
        c->driver_armour = recd_synth_rng_chance(r, 0.4) ? 100 : 0;
        c->has_siren = recd_synth_rng_chance(r, 0.6);
    } else if (g->p.scenario == RECD_SYNTH_SCENARIO_DRIVE) {
        c->has_siren = recd_synth_rng_chance(r, 0.3);
    }
    c->mode = CAR_PARKED;
    choose_mode(g);
}

static void random_events(recd_synth_rec_gen *g, double dt)
{
    synth_car *c = &g->car;
    synth_mover *mv = &g->mover;
    recd_synth_rng *r = &g->rng;
    bool mixed = g->p.scenario == RECD_SYNTH_SCENARIO_MIXED;

    /* Bumps: lose some health and brake hard (the mover integrates the deceleration, so the
     * positions keep matching the velocities); more of them in the mixed scenario. */
    double bump_rate = mixed ? 0.012 : 0.004;
    if (c->collision_until == 0 && mv->speed > 6.0 && recd_synth_rng_chance(r, bump_rate * dt)) {
        double loss = recd_synth_rng_range(r, 8.0, 25.0) * (mv->speed / 10.0);
        c->health = (float)synth_clamp((double)c->health - loss, 260.0, 1000.0);
        c->collision_until = g->t + recd_synth_rng_range(r, 0.4, 1.2);
        mv->target_speed = mv->speed * 0.4;
        mv->brake = 12.0;
    } else if (c->collision_until != 0 && g->t >= c->collision_until) {
        c->collision_until = 0;
        mv->target_speed = c->resume_speed;
        mv->brake = c->mode_brake;
    }
    /* Slow wear while driving (engine and tyres), a fraction of a point per minute. */
    if (mv->speed > 1.0)
        c->health = (float)synth_clamp((double)c->health - 0.005 * dt, 260.0, 1000.0);

    if (c->has_siren && c->mode != CAR_PARKED) {
        if (!c->siren && recd_synth_rng_chance(r, 0.01 * dt)) {
            c->siren = 1;
            c->siren_until = g->t + recd_synth_rng_range(r, 10.0, 60.0);
        } else if (c->siren && g->t >= c->siren_until) {
            c->siren = 0;
        }
    }
    c->lat_accel += (mv->speed * mv->turn_rate - c->lat_accel) * synth_clamp(4.0 * dt, 0.0, 1.0);
}

/* Drivers slow down for a junction: the sharper the turn ahead, the lower the speed. */
static void corner_speed(recd_synth_rec_gen *g)
{
    synth_car *c = &g->car;
    synth_mover *mv = &g->mover;
    if (c->collision_until != 0 || c->mode <= CAR_STOP)
        return;
    double turn = synth_wrap_angle(mv->desired_heading - mv->heading);
    if (turn < 0)
        turn = -turn;
    mv->target_speed = c->resume_speed * (1.0 - 0.55 * synth_clamp(turn, 0.0, 1.0));
}

void synth_car_step(recd_synth_rec_gen *g, double dt)
{
    corner_speed(g);
    synth_mover_advance(&g->mover, &g->rng, dt);
    if (g->t >= g->car.mode_until)
        choose_mode(g);
    random_events(g, dt);
}

bool synth_car_active(const recd_synth_rec_gen *g)
{
    return g->mover.speed > 0.1 || g->mover.target_speed > 0;
}

typedef struct quat {
    double w, x, y, z;
} quat;

static quat quat_mul(quat a, quat b)
{
    quat q;
    q.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
    q.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
    q.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
    q.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
    return q;
}

/* Body orientation = yaw about z, then pitch about the body's x (nose up for a positive slope),
 * then roll about its y. Angles are small, so atan(slope) is its series. */
static recd_quat body_rotation(double heading, double slope, double roll)
{
    double pitch = slope - slope * slope * slope / 3.0;
    quat yaw = {synth_cos(heading / 2), 0, 0, synth_sin(heading / 2)};
    quat pq = {synth_cos(pitch / 2), synth_sin(pitch / 2), 0, 0};
    quat rq = {synth_cos(roll / 2), 0, synth_sin(roll / 2), 0};
    quat q = quat_mul(quat_mul(yaw, pq), rq);
    double n = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    /* SA-MP stores the conjugate of the body rotation (measured on public recordings). */
    recd_quat out = {(float)(q.w / n), (float)(-q.x / n), (float)(-q.y / n), (float)(-q.z / n)};
    return out;
}

void synth_car_block(recd_synth_rec_gen *g, recd_rec_vehicle *out)
{
    synth_car *c = &g->car;
    const synth_mover *mv = &g->mover;
    uint16_t keys = 0;
    if (mv->long_accel < -1.5 || (mv->target_speed == 0 && mv->speed > 0.1))
        keys |= KEY_BRAKE;
    else if (mv->long_accel > 0.2 || (mv->target_speed > 0 && mv->speed > 1.0))
        keys |= KEY_ACCELERATE;
    if (c->mode == CAR_STOP && mv->speed < 0.1)
        keys = 0;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED && mv->turn_rate * mv->speed > 4.0)
        keys |= KEY_HANDBRAKE; /* sliding through a tight curve */
    out->vehicle_id = c->vehicle_id;
    if (mv->speed > 0.5 && mv->turn_rate > 0.08)
        out->left_right = -128;
    else if (mv->speed > 0.5 && mv->turn_rate < -0.08)
        out->left_right = 128;
    out->keys = keys;
    double roll = synth_clamp(-c->lat_accel * 0.006, -0.05, 0.05);
    out->rotation = body_rotation(mv->heading, synth_mover_slope(mv), roll);
    out->position.x = (float)mv->x;
    out->position.y = (float)mv->y;
    out->position.z = (float)mv->z;
    out->velocity.x = (float)(synth_mover_vx(mv) / SYNTH_SAMP_VEL_SCALE);
    out->velocity.y = (float)(synth_mover_vy(mv) / SYNTH_SAMP_VEL_SCALE);
    out->velocity.z = (float)(mv->vz / SYNTH_SAMP_VEL_SCALE);
    out->vehicle_health = c->health;
    out->driver_health = 100;
    out->driver_armour = c->driver_armour;
    out->weapon = 0;
    out->additional_key = 0;
    out->siren = c->siren;
    out->landing_gear = 0;
    out->trailer_id = 0;
    out->extra.bits = 0;
}
