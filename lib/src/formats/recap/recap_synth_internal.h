/* SPDX-License-Identifier: MIT */
/* Internals of the synthetic Recap generator: the generator state shared by the tick loop and
 * movement (recap_synth_gen.c), the player's activities (recap_synth_play.c) and the event builders
 * (recap_synth_events.c). Minecraft units: blocks, ticks of 50 ms, degrees. */
#ifndef RECD_RECAP_SYNTH_INTERNAL_H
#define RECD_RECAP_SYNTH_INTERNAL_H

#include "formats/recap/recap_synth.h"
#include "synth/synth_internal.h"

#define SYNTH_MC_MAX_EVENTS 16
#define SYNTH_MC_MAX_VALUES 128
#define SYNTH_MC_TICKS_PER_S 20
#define SYNTH_MC_ON_GROUND_VY (-0.0784000015258789) /* gravity's pull reported while on ground */
#define SYNTH_MC_RIDE_OFFSET 0.85                     /* seat height above a horse's feet */

enum {
    MC_STAND, /* standing, looking around now and then */
    MC_WALK,
    MC_SPRINT,
    MC_SNEAK,
    MC_MINE,  /* standing at a block, digging it */
    MC_BUILD, /* placing blocks */
    MC_FIGHT, /* a zombie: sword swings, taking hits */
    MC_RIDE,  /* on a horse */
    MC_AFK,   /* perfectly still: long SKIP_TICKS runs */
    MC_MODES
};

/* Inventory slots of the items the activities use. */
enum { SLOT_OFF_HAND = 40, SLOT_FEET = 36, SLOT_LEGS = 37, SLOT_CHEST = 38, SLOT_HEAD = 39 };

struct recd_synth_recap_gen {
    recd_synth_params p;
    recd_synth_rng rng;
    synth_terrain terrain;
    synth_mover mover; /* mover.x = world x, mover.y = world z */
    uint64_t tick, ticks;
    int64_t start_ms;
    int64_t time_of_day;
    char name[64], player[24], uuid[40];
    double origin[3];

    double y, vy; /* feet height, vertical speed (blocks per tick) */
    bool on_ground;
    double pitch;
    int look_ticks; /* remaining ticks of a look-around while standing */
    double look_pitch_step;

    int mode;
    uint64_t mode_until;
    uint8_t deck[16]; /* mixed scenario: a shuffled round of every activity */
    unsigned deck_len, deck_pos;
    int selected; /* hotbar slot 0-8 in the main hand */
    bool riding;
    int32_t mount_id, next_entity_id, foe_id;
    double foe[3];
    bool digging;
    int32_t dig[3];
    int dig_stage, dig_block;
    uint64_t dig_next;
    bool container_open;
    int32_t chest[3];
    uint64_t container_close;
    int use_ticks, use_kind; /* eating or drawing a bow */
    uint64_t next_swing, next_place, next_regen, next_hurt, teleport_tick;

    recd_recap_state st;
    recd_recap_event events[SYNTH_MC_MAX_EVENTS];
    size_t n_events;
    recd_recap_value values[SYNTH_MC_MAX_VALUES];
    size_t n_values;
};

/* Where the player stands (recap_synth_place.c), shared by movement and the activities. */
double synth_mc_ground(const recd_synth_recap_gen *g, double x, double z);
double synth_mc_yaw_deg(const recd_synth_recap_gen *g);

/* Activities (recap_synth_play.c). */
void synth_mc_init_inventory(recd_synth_recap_gen *g);
void synth_mc_choose_mode(recd_synth_recap_gen *g);
void synth_mc_activities(recd_synth_recap_gen *g);
void synth_mc_sync_equipment(recd_synth_recap_gen *g);

/* Event builders (recap_synth_events.c): each appends one event to this tick, silently dropping
 * it when the tick's event or value pool is full. */
void synth_mc_events_reset(recd_synth_recap_gen *g);
void synth_mc_ev_hand(recd_synth_recap_gen *g, uint8_t tag, uint8_t hand);
void synth_mc_ev_block(recd_synth_recap_gen *g, uint8_t tag, const int32_t xyz[3], const char *b);
void synth_mc_ev_dig_start(recd_synth_recap_gen *g, const int32_t xyz[3], uint8_t stage);
void synth_mc_ev_dig_abort(recd_synth_recap_gen *g, const int32_t xyz[3]);
void synth_mc_ev_damage(recd_synth_recap_gen *g, uint8_t cause, float amount, uint8_t flags,
                        int32_t attacker);
void synth_mc_ev_container_open(recd_synth_recap_gen *g, const int32_t xyz[3], const char *type,
                                uint8_t open);
void synth_mc_ev_container_update(recd_synth_recap_gen *g, uint16_t slot, recd_recap_item item);
void synth_mc_ev_projectile(recd_synth_recap_gen *g, const char *type, const double pos[3],
                            const double vel[3], int32_t id);
void synth_mc_ev_target(recd_synth_recap_gen *g, uint8_t tag, int32_t target);
void synth_mc_ev_text(recd_synth_recap_gen *g, uint8_t tag, const char *text);
void synth_mc_ev_vehicle(recd_synth_recap_gen *g, uint8_t tag, int32_t id, const char *type);
void synth_mc_ev_item_drop(recd_synth_recap_gen *g, recd_recap_item item, const double pos[3],
                           const double vel[3]);
void synth_mc_ev_mob(recd_synth_recap_gen *g, int32_t id, const char *type, const double pos[3],
                     float yaw, float health);

#endif
