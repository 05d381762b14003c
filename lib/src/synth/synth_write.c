/* SPDX-License-Identifier: MIT */
/* Convenience writers: a complete synthetic .rec or .recap byte stream through a recd_sink, using
 * librecd's own .rec writer and Recap encoder (so the output is what the daemon would write). */
#include "recd/synth.h"

#include <errno.h>

static int rec_block(void *ctx, const recd_synth_rec_block *b)
{
    recd_rec_writer *w = ctx;
    return b->type == RECD_REC_TYPE_VEHICLE ? recd_rec_writer_vehicle(w, &b->vehicle)
                                            : recd_rec_writer_onfoot(w, &b->onfoot);
}

int recd_synth_write_rec(const recd_synth_params *p, recd_sink sink, uint64_t *blocks_out)
{
    if (blocks_out)
        *blocks_out = 0;
    if (recd_synth_params_check(p, NULL) < 0 || p->format >= RECD_SYNTH_FORMAT_RECAP)
        return -EINVAL;
    recd_rec_writer w;
    recd_rec_type type = p->format == RECD_SYNTH_FORMAT_SAMP_VEHICLE ? RECD_REC_TYPE_VEHICLE
                                                                    : RECD_REC_TYPE_ONFOOT;
    int rc = recd_rec_writer_init(&w, type, RECD_REC_TIME_REJECT, sink);
    if (rc < 0)
        return rc;
    rc = recd_synth_rec_run(p, rec_block, &w);
    if (rc == 0 && !w.header_written) /* a very short recording: header only, still valid */
        rc = recd_rec_writer_header(&w);
    if (blocks_out)
        *blocks_out = w.blocks;
    return rc;
}

static int recap_tick(void *ctx, const recd_synth_recap_tick *t)
{
    return recd_recap_encoder_tick(ctx, t->tick, t->state, t->events, t->n_events);
}

int recd_synth_write_recap(const recd_synth_params *p, recd_sink sink, uint64_t *ticks_out)
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
    while (rc == 0 && (rc = recd_synth_recap_gen_next(g, &t)) > 0)
        rc = recap_tick(e, &t);
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

int recd_synth_write(const recd_synth_params *p, recd_sink sink, uint64_t *units_out)
{
    if (p->format == RECD_SYNTH_FORMAT_RECAP)
        return recd_synth_write_recap(p, sink, units_out);
    if (p->format == RECD_SYNTH_FORMAT_CARLA)
        return recd_synth_write_carla(p, 0, sink, units_out);
    return recd_synth_write_rec(p, sink, units_out);
}
