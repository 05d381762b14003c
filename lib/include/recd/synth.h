/* SPDX-License-Identifier: MIT */
/* Deterministic synthetic recordings for tests, benchmarks and demos.
 *
 * A seed and a few parameters fully determine the output: the generator uses its own PRNG and its
 * own sine/cosine (no rand(), no libm transcendental functions), so the bytes are identical on
 * every host with IEEE-754 doubles. Generators are pull-style (next() per block or tick); run()
 * and write() wrap them with a callback or a recd_sink. No I/O happens here. */
#ifndef RECD_SYNTH_H
#define RECD_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/carla.h"
#include "recd/common.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest recording we generate: 7 days (the .rec clock is u32 ms, Recap counts u32 ticks). */
#define RECD_SYNTH_MAX_DURATION_MS (7ull * 24 * 3600 * 1000)

typedef enum recd_synth_format {
    RECD_SYNTH_FORMAT_SAMP_ONFOOT = 0, /* "samp-onfoot": .rec type 2 */
    RECD_SYNTH_FORMAT_SAMP_VEHICLE,    /* "samp-vehicle": .rec type 1 */
    RECD_SYNTH_FORMAT_RECAP,           /* "recap": .recap, 20 ticks/s */
    RECD_SYNTH_FORMAT_CARLA            /* "carla": CARLA recorder .log, 20 frames/s */
} recd_synth_format;

typedef enum recd_synth_scenario {
    RECD_SYNTH_SCENARIO_IDLE = 0, /* standing or parked, look-arounds: 500 ms blocks, SKIP_TICKS */
    RECD_SYNTH_SCENARIO_WALK,     /* on foot: walk, jog/sprint, sneak (recap), pauses, jumps */
    RECD_SYNTH_SCENARIO_DRIVE,    /* .rec: cruising, junctions, stops, fast roads; recap: horses */
    RECD_SYNTH_SCENARIO_MIXED,    /* everything the format models: weapons, damage, sirens, mining,
                                   * building, fights, chests, chat, drops, a teleport (recap) */
    RECD_SYNTH_SCENARIO_TRAFFIC   /* carla: a town grid with vehicles, walkers, traffic lights,
                                   * collisions (carla's only scenario; mixed means it too) */
} recd_synth_scenario;

typedef struct recd_synth_params {
    recd_synth_format format;
    recd_synth_scenario scenario;
    uint64_t duration_ms; /* 1 .. RECD_SYNTH_MAX_DURATION_MS */
    uint64_t seed;        /* any value; 0 is fine */
} recd_synth_params;

/* "samp-onfoot", ...; "?" if bad */
RECD_API const char *recd_synth_format_name(recd_synth_format f);
RECD_API const char *recd_synth_scenario_name(recd_synth_scenario s); /* "idle", ...; "?" if bad */
RECD_API int recd_synth_format_parse(const char *name, recd_synth_format *out); /* 0 or -EINVAL */
RECD_API int recd_synth_scenario_parse(const char *name,
                                       recd_synth_scenario *out); /* 0 or -EINVAL */

/* 0 when the combination can be generated; otherwise -EINVAL and *why (if why != NULL) points at a
 * static sentence saying what is wrong. samp-onfoot has no "drive" and samp-vehicle no "walk": a
 * .rec file holds one block type, so those pairs are refused rather than silently changed. */
RECD_API int recd_synth_params_check(const recd_synth_params *p, const char **why);

/* ---- PRNG: xoshiro256** seeded through splitmix64 ------------------------------------------ */

typedef struct recd_synth_rng {
    uint64_t s[4];
} recd_synth_rng;

RECD_API void recd_synth_rng_seed(recd_synth_rng *r, uint64_t seed);
RECD_API uint64_t recd_synth_rng_next(recd_synth_rng *r);
RECD_API double recd_synth_rng_unit(recd_synth_rng *r);                        /* [0, 1), 53 bits */
RECD_API double recd_synth_rng_range(recd_synth_rng *r, double lo, double hi); /* [lo, hi) */
RECD_API uint32_t recd_synth_rng_below(recd_synth_rng *r,
                                       uint32_t n); /* [0, n), unbiased; n 0 gives 0 */
RECD_API bool recd_synth_rng_chance(recd_synth_rng *r, double p); /* true with probability p */

/* ---- SA-MP .rec ----------------------------------------------------------------------------- */

/* One generated block; type says which member is valid. */
typedef struct recd_synth_rec_block {
    recd_rec_type type;
    union {
        recd_rec_onfoot onfoot;
        recd_rec_vehicle vehicle;
    };
} recd_synth_rec_block;

typedef struct recd_synth_rec_gen recd_synth_rec_gen;

/* Creates a generator for a samp-onfoot or samp-vehicle params set. 0, -EINVAL or -ENOMEM. */
RECD_API int recd_synth_rec_gen_new(const recd_synth_params *p, recd_synth_rec_gen **out);
/* 1 and *out filled with the next block, or 0 when the recording is complete. Times never
 * decrease and never exceed duration_ms. */
RECD_API int recd_synth_rec_gen_next(recd_synth_rec_gen *g, recd_synth_rec_block *out);
RECD_API recd_rec_type recd_synth_rec_gen_type(const recd_synth_rec_gen *g);
RECD_API void recd_synth_rec_gen_free(recd_synth_rec_gen *g);

/* Calls fn once per block; a negative return from fn stops and is returned. 0 on success. */
typedef int (*recd_synth_rec_fn)(void *ctx, const recd_synth_rec_block *b);
RECD_API int recd_synth_rec_run(const recd_synth_params *p, recd_synth_rec_fn fn, void *ctx);

/* Writes a complete .rec file (header + blocks) through sink with the librecd writer. blocks_out
 * (may be NULL) receives the block count. 0 or a negative errno (the sink's, or -EINVAL). */
RECD_API int recd_synth_write_rec(const recd_synth_params *p, recd_sink sink, uint64_t *blocks_out);

/* ---- Recap .recap ---------------------------------------------------------------------------- */

/* One generated tick: every file tick 0 .. ticks-1 is produced, idle ones included (the encoder
 * turns unchanged ticks into SKIP_TICKS). Pointers stay valid until the next call. */
typedef struct recd_synth_recap_tick {
    uint64_t tick;
    const recd_recap_state *state;
    const recd_recap_event *events;
    size_t n_events;
} recd_synth_recap_tick;

typedef struct recd_synth_recap_gen recd_synth_recap_gen;

/* Creates a generator for a recap params set. 0, -EINVAL or -ENOMEM. */
RECD_API int recd_synth_recap_gen_new(const recd_synth_params *p, recd_synth_recap_gen **out);
/* Ticks the recording will have: duration_ms / 50, at least 1. */
RECD_API uint64_t recd_synth_recap_gen_ticks(const recd_synth_recap_gen *g);
/* A header for the recording (names, UUID, origin, start/end time, frame count already final, so
 * a streamed file needs no patch). Its blobs point into g and live as long as g. */
RECD_API void recd_synth_recap_gen_header(const recd_synth_recap_gen *g, recd_recap_header *h);
/* 1 and *out filled, or 0 after the last tick. */
RECD_API int recd_synth_recap_gen_next(recd_synth_recap_gen *g, recd_synth_recap_tick *out);
RECD_API void recd_synth_recap_gen_free(recd_synth_recap_gen *g);

/* Calls fn once per tick; a negative return from fn stops and is returned. 0 on success. */
typedef int (*recd_synth_recap_fn)(void *ctx, const recd_synth_recap_tick *t);
RECD_API int recd_synth_recap_run(const recd_synth_params *p, recd_synth_recap_fn fn, void *ctx);

/* Writes a complete .recap file through sink with the librecd encoder (default options).
 * ticks_out (may be NULL) receives the frame count. */
RECD_API int recd_synth_write_recap(const recd_synth_params *p, recd_sink sink,
                                    uint64_t *ticks_out);

/* A CARLA log of the traffic scenario (0.9.16 ids, f32, additional data) with `actors`
 * vehicles and walkers (1..65000; 0 = 50; recd_synth_write uses 50) through sink. frames_out
 * (may be NULL) receives the frame count. */
#define RECD_SYNTH_CARLA_MAX_ACTORS 65000u
RECD_API int recd_synth_write_carla(const recd_synth_params *p, uint32_t actors, recd_sink sink,
                                    uint64_t *frames_out);
/* The same log with a chosen layout: vector width 4 (f32, UE4 builds) or 8 (f64, UE5), and the
 * id table of 0.9.13 (then without VisualTime, which 0.9.13 lacks), 0.9.15 or 0.9.16.
 * -EINVAL for any other width or table. */
typedef struct recd_synth_carla_layout {
    uint32_t actors; /* as above */
    uint8_t width;   /* 4 or 8 */
    recd_carla_ids ids;
} recd_synth_carla_layout;
RECD_API int recd_synth_write_carla_layout(const recd_synth_params *p,
                                           const recd_synth_carla_layout *layout, recd_sink sink,
                                           uint64_t *frames_out);

/* Writes whatever p->format asks for through sink. units_out (may be NULL): blocks for .rec,
 * ticks for .recap. */
RECD_API int recd_synth_write(const recd_synth_params *p, recd_sink sink, uint64_t *units_out);

/* Called with the recording time reached so far (0 .. duration_ms), once per block or tick. */
typedef void (*recd_synth_progress_fn)(void *ctx, uint64_t done_ms);
/* recd_synth_write with a progress callback (may be NULL), for tools that show how far along a
 * long recording is. */
RECD_API int recd_synth_write_progress(const recd_synth_params *p, recd_sink sink, uint64_t *units_out,
                                       recd_synth_progress_fn progress, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
