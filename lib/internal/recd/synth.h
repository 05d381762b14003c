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

#include "recd/common.h"
#include "recd/format.h"
#include "recd/message.h"

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

/* Each format's typed generator (blocks, ticks, layouts) is declared in its folder:
 * lib/src/formats/<name>/<name>_synth.h. */

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
