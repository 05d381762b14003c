/* SPDX-License-Identifier: MIT */
/* A CARLA session's own state (carla_session.c), the world it keeps so that a part or a save
 * replays alone (carla_live.c), and its instant-replay ring (carla_ring.c). */
#ifndef RECD_DAEMON_FORMATS_CARLA_STATE_H
#define RECD_DAEMON_FORMATS_CARLA_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/carla.h"
#include "recd/reserve_sink.h"
#include "record/session.h"
#include "support/id_index.h"

#define CARLA_LIGHT_RECORD 10   /* State: u32 id, u8 frozen, f32 seconds, u8 state */
#define CARLA_WEATHER_RECORD 56 /* Weather: 14 x f32 */

typedef struct live_actor {
    uint32_t id;
    uint8_t width;
    uint32_t len;
    uint8_t *record; /* its EventAdd record */
} live_actor;

/* What a log needs at its first frame to replay alone: the live actors (each at its last
 * position), every traffic light's last State record and the last Weather record. */
typedef struct carla_live {
    live_actor *live;
    size_t nlive, cap;
    /* Where each live actor is in live. An episode adds and deletes actors by the thousand: a
     * scan per event would be quadratic in the live count. */
    id_index index;
    uint8_t *lights; /* nlights records of CARLA_LIGHT_RECORD bytes */
    size_t nlights, lights_cap;
    id_index light_index;
    bool has_weather;
    uint8_t weather[CARLA_WEATHER_RECORD];
    bool warned; /* a light (or, for a ring's base, an actor) left out at the state bound */
    /* The newest Position packet (its records, moves_count of moves_width), not yet copied into
     * the actors' records: a frame lists the same actors in the same order as the one before, so
     * a packet the next one replaces record for record never needs copying. It is moved in when
     * the next differs, and before the actors are read or changed (carla_live_settle). */
    recd_buf moves;
    uint32_t moves_count;
    uint8_t moves_width;
} carla_live;

typedef struct carla_session {
    recd_carla_open open;
    /* The current part's writer; NULL between parts. A ring session's writer writes nowhere
     * (into scratch): it checks each frame as a part's would, so a save cannot refuse it. */
    recd_carla_writer *w;
    recd_reserve_sink sink; /* the writer's: into the session's batch, frames in place */
    uint64_t frame_base;  /* subtracted from frame ids in this part */
    double elapsed_base;  /* and from elapsed times */
    bool replay_live;     /* this part begins with the world (live actors, lights, weather) */
    /* The world now; for a ring session, at the ring's oldest frame (what left the ring). */
    carla_live world;
    uint64_t frame_held; /* the writer's held frame (and a ring's), as held state (sync_frame()) */
    /* Instant replay (carla_ring.c): the frame being collected (its state and events, as one
     * ring entry's bytes), the elapsed time of the newest frame, and the checking writer's
     * output. */
    recd_buf collect;
    bool ring_any;
    double ring_elapsed;
    recd_buf scratch;
    /* The part's seek index is fed with its frames (carla_feed_frame): the room of the frame
     * the writer put last, and the time of the part's last point (a scan skips earlier ones). */
    const recd_format *format;
    uint8_t *frame_at;
    size_t frame_len;
    bool point_any;
    int64_t point_last;
} carla_session;

static inline carla_session *cs_of(const recd_session *s) { return s->format_data; }

/* What a live actor costs: its record, its entry, and about as much again for the allocator's
 * header and its index slot. And a traffic light's remembered State record. */
static inline uint64_t actor_cost(uint32_t len) { return (uint64_t)len + sizeof(live_actor) + 32; }
#define CARLA_LIGHT_COST (CARLA_LIGHT_RECORD + 24)

/* Seek points (carla_points.c). The part just started (s->part) hands its frames' points to its
 * index (the writer never reads it back to find them). */
void carla_feed_part(recd_session *s, carla_session *cs);
/* A frame's room in the session's batch, as a sink's reserve: remembered for its point. */
uint8_t *carla_frame_room(void *session, size_t len);
/* After a call of the writer: the frame it put into its room, if any, gives the part its point. */
void carla_feed_frame(recd_session *s, carla_session *cs);

/* The world (carla_live.c). s, when not NULL, is the session whose held state the world is:
 * what it lets go is released, and a new light is held, within session_hold's bounds (left out,
 * logged once, beyond them). A world copied for one save is counted nowhere (s NULL). */
/* An event: an add keeps its record (its cost held by the caller), a delete drops the actor. */
int carla_live_event(carla_live *w, recd_session *s, const recd_carla_event *e);
/* A frame: its Position records move the live actors, its State and Weather records are kept. */
void carla_live_frame(carla_live *w, recd_session *s, const recd_carla_frame *f);
/* Moves the newest Position packet into the actors' records (before they are read). */
void carla_live_settle(carla_live *w);
int carla_live_copy(carla_live *dst, carla_live *src);
void carla_live_free(carla_live *w); /* what it held is released by the caller */
/* The first frame of a log that replays alone: f with, where f lacks them, the world's light
 * states (one more State packet) and weather. */
typedef struct carla_first_frame {
    recd_carla_frame f;          /* f itself when nothing is added */
    recd_carla_packet *packets;  /* else its packets, */
    uint8_t *lights;             /* and the State records it adds */
} carla_first_frame;
int carla_live_first_frame(const carla_live *w, const recd_carla_frame *f,
                            carla_first_frame *out);
void carla_first_frame_free(carla_first_frame *ff);
/* Writes an EventAdd for every live actor into the writer's held frame. */
int carla_live_readd(carla_live *w, recd_carla_writer *wr, char *err, size_t errlen);

/* Instant replay (carla_ring.c). */
/* A ring session's state: the frame before it goes to the ring, f is checked and collected. 0,
 * -EBADMSG with err, or -ENOMEM. */
int carla_ring_state(recd_session *s, carla_session *cs, const recd_carla_frame *f, char *err,
                     size_t errlen);
/* A ring session's event, checked by its writer already, joins the frame being collected. */
int carla_ring_event(carla_session *cs, const recd_carla_event *e);
/* A ring session's part ends (idle, or its end): the collected frame goes to the ring (not at
 * the session's end) and the checking writer goes. */
void carla_ring_end(recd_session *s, carla_session *cs, bool session_end);
int carla_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                    size_t whylen);
void carla_ring_dropped(recd_session *s, const struct session_ring_entry *e);

#endif
