/* SPDX-License-Identifier: MIT */
/* The typed synthetic .rec generator (recd/synth.h's generic entry points call it through the
 * descriptor's synth hook): one block at a time, for tests, rectool and benchmarks that need the
 * blocks themselves rather than a file. Private to recd, like recd/synth.h. */
#ifndef RECD_FORMATS_REC_SYNTH_H
#define RECD_FORMATS_REC_SYNTH_H

#include "recd/samp_rec.h"
#include "recd/synth.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
