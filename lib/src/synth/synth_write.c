/* SPDX-License-Identifier: MIT */
/* Convenience writers: a complete synthetic .rec or .recap byte stream through a recd_sink, using
 * librecd's own .rec writer and Recap encoder (so the output is what the daemon would write). */
#include "recd/synth.h"

#include <errno.h>
#include <stdbool.h>

typedef struct rec_job {
    recd_rec_writer w;
    recd_synth_progress_fn progress;
    void *ctx;
} rec_job;

static int rec_block(void *ctx, const recd_synth_rec_block *b)
{
    rec_job *j = ctx;
    bool vehicle = b->type == RECD_REC_TYPE_VEHICLE;
    if (j->progress)
        j->progress(j->ctx, vehicle ? b->vehicle.time_ms : b->onfoot.time_ms);
    return vehicle ? recd_rec_writer_vehicle(&j->w, &b->vehicle) : recd_rec_writer_onfoot(&j->w, &b->onfoot);
}

static int write_rec(const recd_synth_params *p, recd_sink sink, uint64_t *blocks_out,
                     recd_synth_progress_fn progress, void *ctx)
{
    if (blocks_out)
        *blocks_out = 0;
    if (recd_synth_params_check(p, NULL) < 0 || p->format >= RECD_SYNTH_FORMAT_RECAP)
        return -EINVAL;
    rec_job j = {.progress = progress, .ctx = ctx};
    recd_rec_type type = p->format == RECD_SYNTH_FORMAT_SAMP_VEHICLE ? RECD_REC_TYPE_VEHICLE
                                                                    : RECD_REC_TYPE_ONFOOT;
    int rc = recd_rec_writer_init(&j.w, type, RECD_REC_TIME_REJECT, sink);
    if (rc < 0)
        return rc;
    rc = recd_synth_rec_run(p, rec_block, &j);
    if (rc == 0 && !j.w.header_written) /* a very short recording: header only, still valid */
        rc = recd_rec_writer_header(&j.w);
    if (blocks_out)
        *blocks_out = j.w.blocks;
    return rc;
}

int recd_synth_write_rec(const recd_synth_params *p, recd_sink sink, uint64_t *blocks_out)
{
    return write_rec(p, sink, blocks_out, NULL, NULL);
}

static int recap_tick(void *ctx, const recd_synth_recap_tick *t)
{
    return recd_recap_encoder_tick(ctx, t->tick, t->state, t->events, t->n_events);
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
            progress(ctx, t.tick * 50); /* a Recap tick is 50 ms */
        rc = recap_tick(e, &t);
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

int recd_synth_write_progress(const recd_synth_params *p, recd_sink sink, uint64_t *units_out,
                              recd_synth_progress_fn progress, void *ctx)
{
    if (p->format == RECD_SYNTH_FORMAT_RECAP)
        return write_recap(p, sink, units_out, progress, ctx);
    if (p->format == RECD_SYNTH_FORMAT_CARLA) /* default actor count; no progress: a few seconds at most */
        return recd_synth_write_carla(p, 0, sink, units_out);
    return write_rec(p, sink, units_out, progress, ctx);
}

int recd_synth_write(const recd_synth_params *p, recd_sink sink, uint64_t *units_out)
{
    return recd_synth_write_progress(p, sink, units_out, NULL, NULL);
}
