/* SPDX-License-Identifier: MIT */
/* Internal: how the synthetic-data generators (recd/synth.h) make one format. lib/src/synth/
 * holds the generic parts (PRNG, trigonometry, terrain, mover, parameters) and dispatches through
 * these hooks; each format's generator lives in its folder and hangs off its descriptor. */
#ifndef RECD_FORMAT_SYNTH_H
#define RECD_FORMAT_SYNTH_H

#include "recd/format.h"
#include "recd/synth.h"

struct recd_format_synth {
    /* NULL when the format can hold p's scenario, else a static sentence saying why not. */
    const char *(*refuse)(const recd_synth_params *p);
    /* A complete recording of checked params through sink; units_out (may be NULL) gets its count
     * in the format's unit; progress (may be NULL) sees the recording time reached. */
    int (*write)(const recd_synth_params *p, recd_sink sink, uint64_t *units_out,
                 recd_synth_progress_fn progress, void *ctx);

    /* Live sessions for load generators; the hooks are NULL when the format has none. */
    uint32_t sample_ms; /* duration per sample; 0: samples come until the duration ends */
    int (*session_new)(const recd_synth_params *p, void **gen);
    /* open is initialised as the format's open message; start_ms < 0: leave the start unset. */
    int (*session_open)(void *gen, recd_msg *open, int64_t start_ms);
    /* 0, 1 when the generator has run dry, or a negative errno (emit's included). */
    int (*session_next)(void *gen, recd_synth_emit_fn emit, void *ctx);
    void (*session_free)(void *gen);
};

#endif
