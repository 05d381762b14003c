/* SPDX-License-Identifier: MIT */
/* The typed synthetic Recap generator (recd/synth.h's generic entry points call it through the
 * descriptor's synth hook): one tick at a time, for tests and tools that need the states and
 * events themselves rather than a file. Private to recd, like recd/synth.h. */
#ifndef RECD_FORMATS_RECAP_SYNTH_H
#define RECD_FORMATS_RECAP_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "recd/recap.h"
#include "recd/synth.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
