/* SPDX-License-Identifier: MIT */
/* Deterministic synthetic recordings for tests, benchmarks and demos. Private to recd (rectool,
 * the tests, benchgen link the static archive): not installed, not exported by librecd.so.
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
#include "recd/format.h"
#include "recd/message.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest recording we generate: 7 days (the .rec clock is u32 ms, Recap counts u32 ticks). */
#define RECD_SYNTH_MAX_DURATION_MS (7ull * 24 * 3600 * 1000)

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
    const recd_format *format; /* an entry with synthetic data (recd_synth_format_find) */
    recd_synth_scenario scenario;
    uint64_t duration_ms; /* 1 .. RECD_SYNTH_MAX_DURATION_MS */
    uint64_t seed;        /* any value; 0 is fine */
} recd_synth_params;

const char *recd_synth_scenario_name(recd_synth_scenario s); /* "idle", ...; "?" if bad */
/* True when f has a synthetic-data generator (its descriptor's synth hook). */
bool recd_synth_has_format(const recd_format *f);
/* The format table entry named name when it has synthetic data, else NULL. */
const recd_format *recd_synth_format_find(const char *name);
int recd_synth_scenario_parse(const char *name, recd_synth_scenario *out); /* 0 or -EINVAL */

/* 0 when the combination can be generated; otherwise -EINVAL and *why (if why != NULL) points at a
 * static sentence saying what is wrong: no format, a format without synthetic data, or a scenario
 * the format cannot hold (its hook says which: a .rec file holds one block type, so samp-onfoot
 * has no "drive" and samp-vehicle no "walk"; those pairs are refused rather than silently
 * changed). */
int recd_synth_params_check(const recd_synth_params *p, const char **why);

/* ---- PRNG: xoshiro256** seeded through splitmix64 ------------------------------------------ */

typedef struct recd_synth_rng {
    uint64_t s[4];
} recd_synth_rng;

void recd_synth_rng_seed(recd_synth_rng *r, uint64_t seed);
uint64_t recd_synth_rng_next(recd_synth_rng *r);
double recd_synth_rng_unit(recd_synth_rng *r);                        /* [0, 1), 53 bits */
double recd_synth_rng_range(recd_synth_rng *r, double lo, double hi); /* [lo, hi) */
uint32_t recd_synth_rng_below(recd_synth_rng *r, uint32_t n); /* [0, n), unbiased; 0 if n 0 */
bool recd_synth_rng_chance(recd_synth_rng *r, double p);      /* true with probability p */

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
int recd_synth_rec_gen_new(const recd_synth_params *p, recd_synth_rec_gen **out);
/* 1 and *out filled with the next block, or 0 when the recording is complete. Times never
 * decrease and never exceed duration_ms. */
int recd_synth_rec_gen_next(recd_synth_rec_gen *g, recd_synth_rec_block *out);
void recd_synth_rec_gen_free(recd_synth_rec_gen *g);

/* Calls fn once per block; a negative return from fn stops and is returned. 0 on success. */
typedef int (*recd_synth_rec_fn)(void *ctx, const recd_synth_rec_block *b);
int recd_synth_rec_run(const recd_synth_params *p, recd_synth_rec_fn fn, void *ctx);

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
int recd_synth_recap_gen_new(const recd_synth_params *p, recd_synth_recap_gen **out);
/* Ticks the recording will have: duration_ms / 50, at least 1. */
uint64_t recd_synth_recap_gen_ticks(const recd_synth_recap_gen *g);
/* A header for the recording (names, UUID, origin, start/end time, frame count already final, so
 * a streamed file needs no patch). Its blobs point into g and live as long as g. */
void recd_synth_recap_gen_header(const recd_synth_recap_gen *g, recd_recap_header *h);
/* 1 and *out filled, or 0 after the last tick. */
int recd_synth_recap_gen_next(recd_synth_recap_gen *g, recd_synth_recap_tick *out);
void recd_synth_recap_gen_free(recd_synth_recap_gen *g);

/* Calls fn once per tick; a negative return from fn stops and is returned. 0 on success. */
typedef int (*recd_synth_recap_fn)(void *ctx, const recd_synth_recap_tick *t);
int recd_synth_recap_run(const recd_synth_params *p, recd_synth_recap_fn fn, void *ctx);

/* Writes a complete .recap file through sink with the librecd encoder (default options).
 * ticks_out (may be NULL) receives the frame count. */
int recd_synth_write_recap(const recd_synth_params *p, recd_sink sink, uint64_t *ticks_out);

/* A CARLA log of the traffic scenario (0.9.16 ids, f32, additional data) with `actors`
 * vehicles and walkers (1..65000; 0 = 50; recd_synth_write uses 50) through sink. frames_out
 * (may be NULL) receives the frame count. */
#define RECD_SYNTH_CARLA_MAX_ACTORS 65000u
int recd_synth_write_carla(const recd_synth_params *p, uint32_t actors, recd_sink sink,
                           uint64_t *frames_out);
/* The same log with a chosen layout: vector width 4 (f32, UE4 builds) or 8 (f64, UE5), and the
 * id table of 0.9.13 (then without VisualTime, which 0.9.13 lacks), 0.9.15 or 0.9.16.
 * -EINVAL for any other width or table. */
typedef struct recd_synth_carla_layout {
    uint32_t actors; /* as above */
    uint8_t width;   /* 4 or 8 */
    recd_carla_ids ids;
} recd_synth_carla_layout;
int recd_synth_write_carla_layout(const recd_synth_params *p,
                                  const recd_synth_carla_layout *layout, recd_sink sink,
                                  uint64_t *frames_out);

/* Writes a complete recording of p->format through sink (its synth hook). units_out (may be
 * NULL): the count in the format's unit (p->format->unit). */
int recd_synth_write(const recd_synth_params *p, recd_sink sink, uint64_t *units_out);

/* Called with the recording time reached so far (0 .. duration_ms), once per block or tick. */
typedef void (*recd_synth_progress_fn)(void *ctx, uint64_t done_ms);
/* recd_synth_write with a progress callback (may be NULL), for tools that show how far along a
 * long recording is. */
int recd_synth_write_progress(const recd_synth_params *p, recd_sink sink, uint64_t *units_out,
                              recd_synth_progress_fn progress, void *ctx);

/* ---- Live sessions as messages (rectool send --synthetic, benchgen) -------------------------- */

typedef struct recd_synth_session recd_synth_session;

/* Receives one generated message (type, format and payload set; the caller adds session and seq).
 * The message is freed after the call. A negative return stops the generator and is returned. */
typedef int (*recd_synth_emit_fn)(void *ctx, recd_msg *m);

/* Milliseconds of duration per sample for f: a generator of duration d then gives d / this
 * samples. 0 when its samples come on their own clock until the duration ends. */
uint32_t recd_synth_sample_ms(const recd_format *f);
/* True when f's generator makes live sessions (recd_synth_session_new does not refuse it). */
bool recd_synth_has_sessions(const recd_format *f);
/* A session generator for p. 0, -EINVAL (bad params), -ENOTSUP (the format has no live
 * sessions) or -ENOMEM. */
int recd_synth_session_new(const recd_synth_params *p, recd_synth_session **out);
/* Initialises m as the session's open message. start_ms: the wall-clock start for formats whose
 * generator has no clock of its own; negative leaves it unset. 0 or -ENOMEM; free m after use. */
int recd_synth_session_open(recd_synth_session *s, recd_msg *m, int64_t start_ms);
/* The next sample (a state, then its events) through emit: 0, 1 when the generator has run dry,
 * or a negative errno. */
int recd_synth_session_next(recd_synth_session *s, recd_synth_emit_fn emit, void *ctx);
void recd_synth_session_free(recd_synth_session *s);

#ifdef __cplusplus
}
#endif
#endif
