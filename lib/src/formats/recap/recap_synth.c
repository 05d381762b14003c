/* SPDX-License-Identifier: MIT */
/* The synth hooks of the Recap entry: the scenarios a .recap holds, a whole synthetic .recap
 * through librecd's encoder, and live sessions of one tick (its state, then its events) per
 * sample. */
#include "formats/recap/recap_format.h"

#include <errno.h>

#include "formats/format_synth.h"
#include "formats/recap/recap_synth.h"
#include "recd/recap.h"

static const char *refuse(const recd_synth_params *p)
{
    return p->scenario == RECD_SYNTH_SCENARIO_TRAFFIC
               ? "'traffic' is a CARLA scenario: use --format carla"
               : NULL;
}

static int write_recap(const recd_synth_params *p, recd_sink sink, uint64_t *ticks_out,
                       recd_synth_progress_fn progress, void *ctx)
{
    if (ticks_out)
        *ticks_out = 0;
    recd_synth_recap_gen *g;
    int rc = recd_synth_recap_gen_new(p, &g);
    if (rc < 0)
        return rc;
    recd_recap_header h;
    recd_synth_recap_gen_header(g, &h);
    recd_recap_encoder *e = NULL;
    rc = recd_recap_encoder_new(&e, &h, NULL, sink);
    recd_synth_recap_tick t;
    while (rc == 0 && (rc = recd_synth_recap_gen_next(g, &t)) > 0) {
        if (progress)
            progress(ctx, t.tick * RECD_RECAP_TICK_MS);
        rc = recd_recap_encoder_tick(e, t.tick, t.state, t.events, t.n_events);
    }
    recd_recap_finish_info info = {0};
    if (rc == 0)
        rc = recd_recap_encoder_finish(e, &info);
    /* The header was written with the final frame count; the encoder must agree. */
    if (rc == 0 && info.frame_count != recd_synth_recap_gen_ticks(g))
        rc = -EPROTO;
    if (rc == 0 && ticks_out)
        *ticks_out = info.frame_count;
    recd_recap_encoder_free(e);
    recd_synth_recap_gen_free(g);
    return rc;
}

int recd_synth_write_recap(const recd_synth_params *p, recd_sink sink, uint64_t *ticks_out)
{
    return write_recap(p, sink, ticks_out, NULL, NULL);
}

static int session_new(const recd_synth_params *p, void **gen)
{
    recd_synth_recap_gen *g;
    int rc = recd_synth_recap_gen_new(p, &g);
    *gen = g;
    return rc;
}

/* The header carries the recording's own start time, so start_ms is not needed. */
static int session_open(void *gen, recd_msg *open, int64_t start_ms)
{
    (void)start_ms;
    recd_recap_header h;
    recd_synth_recap_gen_header(gen, &h);
    return recd_msg_set_recap_open(open, &h);
}

static int emit_event(const recd_synth_recap_tick *t, size_t k, recd_synth_emit_fn emit, void *ctx)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    int rc = recd_msg_set_recap_event(&m, t->tick, &t->events[k]);
    if (rc == 0)
        rc = emit(ctx, &m);
    recd_msg_free(&m);
    return rc;
}

static int session_next(void *gen, recd_synth_emit_fn emit, void *ctx)
{
    recd_synth_recap_tick t;
    int rc = recd_synth_recap_gen_next(gen, &t);
    if (rc <= 0)
        return rc < 0 ? rc : 1;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    rc = recd_msg_set_recap_state(&m, t.tick, t.state);
    if (rc == 0)
        rc = emit(ctx, &m);
    recd_msg_free(&m);
    for (size_t k = 0; rc == 0 && k < t.n_events; k++)
        rc = emit_event(&t, k, emit, ctx);
    return rc;
}

static void session_free(void *gen)
{
    recd_synth_recap_gen_free(gen);
}

const struct recd_format_synth recd_recap__synth = {
    .refuse = refuse,
    .write = write_recap,
    .sample_ms = RECD_RECAP_TICK_MS, /* one tick per sample */
    .session_new = session_new,
    .session_open = session_open,
    .session_next = session_next,
    .session_free = session_free,
};
