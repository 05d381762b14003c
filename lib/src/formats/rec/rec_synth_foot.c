/* SPDX-License-Identifier: MIT */
/* Synthetic on-foot behaviour for .rec: gaits (walk 1.5 m/s with KEY_WALK, jog 4.2 m/s, sprint
 * 5.9 m/s with KEY_SPRINT, as measured in public recordings), crouching, jumps, special actions,
 * aiming and firing, damage and weapon switches, each with matching keys and GTA animation
 * indices (PED:IDLE_stance 1189, PED:WALK_player 1266, PED:RUN_player 1231, ...). */
#include "formats/rec/rec_synth_internal.h"

enum {
    FOOT_STAND,
    FOOT_WALK,
    FOOT_JOG,
    FOOT_SPRINT,
    FOOT_CROUCH,
    FOOT_CROUCH_WALK,
    FOOT_ACTION,
    FOOT_AIM,
    FOOT_MODES
};

/* SA-MP key bits (on foot). */
#define KEY_FIRE 4
#define KEY_SPRINT 8
#define KEY_CROUCH 2
#define KEY_JUMP 32
#define KEY_AIM 128
#define KEY_WALK 1024
#define KEY_UP (-128) /* up_down value for "forward" */

/* GTA San Andreas animation indices (PED and related blocks). */
#define ANIM_IDLE 1189
#define ANIM_WALK 1266
#define ANIM_RUN 1231
#define ANIM_SPRINT 1246
#define ANIM_CROUCH_IDLE 1274
#define ANIM_CROUCH_WALK 1159
#define ANIM_GUN_STAND 1167
#define ANIM_PHONE 1215
#define ANIM_JUMP_LAUNCH 1197
#define ANIM_JUMP_GLIDE 1195
#define ANIM_JUMP_LAND 1196

#define JUMP_V0 3.92      /* m/s: a ~0.8 m hop that lasts 0.8 s */
#define JUMP_GRAVITY 9.8

typedef struct foot_mode_info {
    double speed;             /* m/s */
    double min_s, max_s;      /* duration */
    unsigned idle_w, walk_w, mixed_w; /* scenario weights */
} foot_mode_info;

static const foot_mode_info modes[FOOT_MODES] = {
    [FOOT_STAND] = {0.0, 2, 20, 85, 15, 12},
    [FOOT_WALK] = {1.52, 5, 40, 0, 30, 18},
    [FOOT_JOG] = {4.2, 5, 60, 0, 35, 22},
    [FOOT_SPRINT] = {5.9, 3, 15, 0, 20, 12},
    [FOOT_CROUCH] = {0.0, 2, 10, 0, 0, 5},
    [FOOT_CROUCH_WALK] = {1.8, 2, 10, 0, 0, 6},
    [FOOT_ACTION] = {0.0, 5, 30, 15, 0, 8},
    [FOOT_AIM] = {0.0, 2, 8, 0, 0, 10},
};

static const uint8_t mixed_weapons[] = {0, 0, 24, 31, 29, 25, 22};

static bool moving_mode(int mode) { return modes[mode].speed > 0; }

static void choose_mode(recd_synth_rec_gen *g)
{
    synth_foot *f = &g->foot;
    recd_synth_rng *r = &g->rng;
    unsigned w[FOOT_MODES];
    for (int i = 0; i < FOOT_MODES; i++) {
        const foot_mode_info *m = &modes[i];
        w[i] = g->p.scenario == RECD_SYNTH_SCENARIO_IDLE   ? m->idle_w
               : g->p.scenario == RECD_SYNTH_SCENARIO_WALK ? m->walk_w
                                                           : m->mixed_w;
    }
    int prev = f->mode;
    f->mode = synth_pick_weighted(r, w, FOOT_MODES);
    const foot_mode_info *m = &modes[f->mode];
    double len = recd_synth_rng_range(r, m->min_s, m->max_s);
    if (g->p.scenario == RECD_SYNTH_SCENARIO_IDLE)
        len *= 3; /* idle players stay put for long stretches */
    f->mode_until = g->t + synth_activity_seconds(&g->p, len);

    synth_mover *mv = &g->mover;
    mv->target_speed = m->speed * recd_synth_rng_range(r, 0.97, 1.03);
    if (moving_mode(f->mode)) {
        /* Straight stretches along streets, turns of up to ~90 degrees every few seconds. */
        mv->steer_gain = 1.5;
        mv->turn_accel = 4.0;
        mv->turn_noise = 0.15;
        mv->retarget_min_s = 4.0;
        mv->retarget_max_s = 20.0;
        mv->retarget_angle = 1.6;
        if (!moving_mode(prev)) {
            mv->desired_heading = mv->heading;
            mv->retarget_in = recd_synth_rng_range(r, 1.0, 8.0);
        }
    } else {
        mv->steer_gain = 0;
        mv->turn_noise = 0;
        mv->turn_decay = 0;
        mv->turn_rate = 0;
    }
    bool crouch = f->mode == FOOT_CROUCH || f->mode == FOOT_CROUCH_WALK;
    if (crouch != f->crouched)
        f->crouch_key = true;
    f->crouched = crouch;
    if (f->mode == FOOT_ACTION) {
        static const uint8_t idle_actions[] = {11, 21};
        static const uint8_t mixed_actions[] = {11, 21, 5, 6, 7, 8, 20};
        f->special_action = g->p.scenario == RECD_SYNTH_SCENARIO_MIXED
                                ? mixed_actions[recd_synth_rng_below(r, sizeof mixed_actions)]
                                : idle_actions[recd_synth_rng_below(r, sizeof idle_actions)];
    } else {
        f->special_action = crouch ? 1 : 0;
    }
    if (f->mode == FOOT_AIM && f->weapon == 0)
        f->weapon = mixed_weapons[2 + recd_synth_rng_below(r, sizeof mixed_weapons - 2)];
}

void synth_foot_init(recd_synth_rec_gen *g)
{
    synth_foot *f = &g->foot;
    synth_mover *mv = &g->mover;
    recd_synth_rng *r = &g->rng;
    mv->accel = 6.0;
    mv->brake = 8.0;
    mv->max_turn_rate = 2.5;
    mv->max_lat_accel = 8.0;
    mv->height = 1.0; /* ped origin above the ground */
    f->health = 100;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED) {
        f->armour = recd_synth_rng_chance(r, 0.5) ? 100 : 0;
        f->weapon = mixed_weapons[recd_synth_rng_below(r, sizeof mixed_weapons)];
    }
    f->mode = FOOT_STAND;
    mv->desired_heading = mv->heading;
    choose_mode(g);
}

static void random_events(recd_synth_rec_gen *g, double dt)
{
    synth_foot *f = &g->foot;
    recd_synth_rng *r = &g->rng;
    bool mixed = g->p.scenario == RECD_SYNTH_SCENARIO_MIXED;

    if (g->p.scenario != RECD_SYNTH_SCENARIO_IDLE && !f->jumping &&
        (f->mode == FOOT_JOG || f->mode == FOOT_SPRINT) && recd_synth_rng_chance(r, 0.04 * dt)) {
        f->jumping = true;
        f->jump_t0 = g->t;
        f->jump_key_sent = false;
    }
    if (f->jumping && g->t - f->jump_t0 >= 2 * JUMP_V0 / JUMP_GRAVITY)
        f->jumping = false;

    /* Standing players turn on the spot now and then (looking around). */
    if (!moving_mode(f->mode)) {
        if (g->t >= f->turn_until)
            g->mover.turn_rate = 0;
        if (recd_synth_rng_chance(r, 0.05 * dt)) {
            g->mover.turn_rate = recd_synth_rng_range(r, 1.0, 2.5) *
                                 (recd_synth_rng_chance(r, 0.5) ? 1 : -1);
            f->turn_until = g->t + recd_synth_rng_range(r, 0.3, 1.2);
        }
    }

    f->keys_extra = 0;
    if (f->mode == FOOT_AIM)
        f->keys_extra = KEY_AIM | (recd_synth_rng_chance(r, 0.35) ? KEY_FIRE : 0);
    if (!mixed)
        return;
    if (f->mode != FOOT_AIM && recd_synth_rng_chance(r, 0.02 * dt))
        f->weapon = mixed_weapons[recd_synth_rng_below(r, sizeof mixed_weapons)];
    if (recd_synth_rng_chance(r, 0.01 * dt)) {
        unsigned damage = 5 + recd_synth_rng_below(r, 31);
        unsigned absorbed = damage < f->armour ? damage : f->armour;
        f->armour = (uint8_t)(f->armour - absorbed);
        damage -= absorbed;
        f->health = (uint8_t)(damage < f->health ? f->health - damage : 1);
    }
    if (f->health < 30 && recd_synth_rng_chance(r, 0.1 * dt))
        f->health = 100; /* ate or picked up a health pack */
}

void synth_foot_step(recd_synth_rec_gen *g, double dt)
{
    synth_mover_advance(&g->mover, &g->rng, dt);
    if (g->t >= g->foot.mode_until)
        choose_mode(g);
    random_events(g, dt);
}

bool synth_foot_active(const recd_synth_rec_gen *g)
{
    const synth_foot *f = &g->foot;
    return g->mover.speed > 0.05 || g->mover.target_speed > 0 || f->jumping ||
           f->mode == FOOT_AIM || g->mover.turn_rate != 0;
}

static uint16_t mode_anim(const synth_foot *f, double speed)
{
    switch (f->mode) {
    case FOOT_WALK: return speed > 0.2 ? ANIM_WALK : ANIM_IDLE;
    case FOOT_JOG: return speed > 0.2 ? ANIM_RUN : ANIM_IDLE;
    case FOOT_SPRINT: return speed > 0.2 ? ANIM_SPRINT : ANIM_IDLE;
    case FOOT_CROUCH: return ANIM_CROUCH_IDLE;
    case FOOT_CROUCH_WALK: return speed > 0.2 ? ANIM_CROUCH_WALK : ANIM_CROUCH_IDLE;
    case FOOT_ACTION: return f->special_action == 11 ? ANIM_PHONE : ANIM_IDLE;
    case FOOT_AIM: return ANIM_GUN_STAND;
    default: return speed > 0.5 ? ANIM_RUN : ANIM_IDLE; /* still slowing down */
    }
}

void synth_foot_block(recd_synth_rec_gen *g, recd_rec_onfoot *out)
{
    synth_foot *f = &g->foot;
    const synth_mover *mv = &g->mover;
    recd_synth_rng *r = &g->rng;
    double jump_z = 0, jump_vz = 0;
    uint16_t anim = mode_anim(f, mv->speed);
    recd_rec_anim_flags flags = {0};
    flags.frame_delta = 4;
    flags.time = 8;

    uint16_t keys = f->keys_extra;
    if (f->jumping) {
        double tj = g->t - f->jump_t0;
        jump_z = JUMP_V0 * tj - 0.5 * JUMP_GRAVITY * tj * tj;
        jump_vz = JUMP_V0 - JUMP_GRAVITY * tj;
        if (jump_z < 0)
            jump_z = 0;
        anim = tj < 0.15 ? ANIM_JUMP_LAUNCH : (tj < 0.65 ? ANIM_JUMP_GLIDE : ANIM_JUMP_LAND);
        if (!f->jump_key_sent) {
            keys |= KEY_JUMP;
            f->jump_key_sent = true;
        }
    }
    if (moving_mode(f->mode) && mv->speed > 0.05) {
        out->up_down = KEY_UP;
        if (f->mode == FOOT_WALK)
            keys |= KEY_WALK;
        if (f->mode == FOOT_SPRINT && recd_synth_rng_chance(r, 0.8))
            keys |= KEY_SPRINT; /* sprinting is done by tapping the key */
        if (mv->turn_rate > 0.5)
            out->left_right = -128;
        else if (mv->turn_rate < -0.5)
            out->left_right = 128;
    }
    if (f->crouch_key) {
        keys |= KEY_CROUCH;
        f->crouch_key = false;
    }
    if (f->mode == FOOT_ACTION) {
        flags.loop = 1;
        flags.time = 1;
    }
    out->keys = keys;
    out->position.x = (float)mv->x;
    out->position.y = (float)mv->y;
    out->position.z = (float)(mv->z + jump_z);
    /* Stored rotation is the conjugate of the facing rotation (measured on public files):
     * yaw-only, w = cos(h/2), z = -sin(h/2). */
    out->rotation.w = (float)synth_cos(mv->heading * 0.5);
    out->rotation.x = 0.0f;
    out->rotation.y = 0.0f;
    out->rotation.z = (float)-synth_sin(mv->heading * 0.5);
    out->health = f->health;
    out->armour = f->armour;
    out->weapon = f->weapon;
    out->additional_key = 0;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED && recd_synth_rng_chance(r, 0.001))
        out->additional_key = (uint8_t)(1 + recd_synth_rng_below(r, 3));
    out->special_action = f->special_action;
    out->velocity.x = (float)(synth_mover_vx(mv) / SYNTH_SAMP_VEL_SCALE);
    out->velocity.y = (float)(synth_mover_vy(mv) / SYNTH_SAMP_VEL_SCALE);
    out->velocity.z = (float)((mv->vz + jump_vz) / SYNTH_SAMP_VEL_SCALE);
    out->surf_id = 0;
    out->anim_id = anim;
    out->anim_flags = flags;
}
