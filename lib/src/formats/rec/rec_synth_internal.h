/* SPDX-License-Identifier: MIT */
/* Internals of the synthetic .rec generator: the generator state shared by the timing core
 * (rec_synth_gen.c) and the on-foot and vehicle behaviours (rec_synth_foot.c, rec_synth_vehicle.c). */
#ifndef RECD_REC_SYNTH_INTERNAL_H
#define RECD_REC_SYNTH_INTERNAL_H

#include "formats/rec/rec_synth.h"
#include "synth/synth_internal.h"

#define SYNTH_REC_MAX_BURST 7
#define SYNTH_SAMP_VEL_SCALE 50.0 /* SA-MP velocities are metres per 1/50 s (GTA physics step) */

/* On-foot behaviour state. */
typedef struct synth_foot {
    int mode;
    double mode_until, turn_until; /* s */
    bool jumping;
    double jump_t0;
    bool jump_key_sent;
    bool crouched; /* special action 1 currently shown */
    bool crouch_key;
    uint8_t health, armour, weapon, special_action;
    uint16_t keys_extra; /* fire / aim bits for this block */
} synth_foot;

/* Vehicle behaviour state. */
typedef struct synth_car {
    int mode;
    double mode_until;
    uint16_t vehicle_id;
    float health;
    bool has_siren;
    uint8_t siren;
    double siren_until;
    uint8_t driver_armour;
    double collision_until; /* s: braking hard after a bump */
    double resume_speed;    /* target speed to return to after the bump */
    double mode_brake;      /* the current mode's braking, m/s^2 */
    double lat_accel;       /* m/s^2, smoothed, for body roll */
} synth_car;

struct recd_synth_rec_gen {
    recd_synth_params p;
    recd_rec_type type;
    recd_synth_rng rng;
    synth_terrain terrain;
    synth_mover mover;
    double t;             /* s: sample time of the newest generated block */
    double moving_gap_ms; /* this file's typical interval while moving */
    bool started, done;
    recd_synth_rec_block queue[SYNTH_REC_MAX_BURST];
    unsigned q_len, q_pos;
    synth_foot foot;
    synth_car car;
};

/* Behaviours: init once, step before each sample (dt seconds since the last one), then build. */
void synth_foot_init(recd_synth_rec_gen *g);
void synth_foot_step(recd_synth_rec_gen *g, double dt);
bool synth_foot_active(const recd_synth_rec_gen *g); /* sends at the moving rate */
void synth_foot_block(recd_synth_rec_gen *g, recd_rec_onfoot *out);

void synth_car_init(recd_synth_rec_gen *g);
void synth_car_step(recd_synth_rec_gen *g, double dt);
bool synth_car_active(const recd_synth_rec_gen *g);
void synth_car_block(recd_synth_rec_gen *g, recd_rec_vehicle *out);


#endif
