/* SPDX-License-Identifier: MIT */
/* A synthetic samp-player session for generate and send --synthetic: librecd's walking and
 * driving generators taking turns, their blocks moved onto one session clock. */
#ifndef RECTOOL_SYNTH_PLAYER_H
#define RECTOOL_SYNTH_PLAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "recd/message.h"
#include "recd/synth.h"
#include "formats/rec/rec_synth.h"

#define RT_PLAYER_STRETCH_MS 5000u   /* on foot, then in the car, then on foot, ... */
#define RT_PLAYER_VEHICLE_MODEL 411 /* an Infernus */

typedef struct rt_player_synth {
    recd_synth_rec_gen *walk, *car;
    bool in_car, stretch_starts, any;
    uint32_t stretch_at_ms, stretch_gen_ms, last_ms;
} rt_player_synth;

/* Both generators for seed and duration (each may run that long); 0, -EINVAL or -ENOMEM. */
int rt_player_synth_init(rt_player_synth *p, uint64_t seed, uint64_t duration_ms);
/* Fills m (initialised as a SAMP_PLAYER state) with the next state: 0, 1 when a generator has
 * run dry, or a negative errno. */
int rt_player_synth_next(rt_player_synth *p, recd_msg *m);
void rt_player_synth_free(rt_player_synth *p);

#endif
