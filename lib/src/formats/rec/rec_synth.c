/* SPDX-License-Identifier: MIT */
/* The synth hooks of the .rec entries: which scenarios an on-foot or vehicle file holds, a whole
 * synthetic .rec through librecd's writer, and live sessions of one block per sample. */
#include "formats/rec/rec_format.h"

#include <errno.h>
#include <stdbool.h>

#include "formats/format_synth.h"
#include "formats/rec/rec_synth.h"
#include "recd/samp_rec.h"

static const char *refuse_traffic(const recd_synth_params *p)
{
    return p->scenario == RECD_SYNTH_SCENARIO_TRAFFIC
               ? "'traffic' is a CARLA scenario: use --format carla"
               : NULL;
}

static const char *refuse_onfoot(const recd_synth_params *p)
{
    if (p->scenario == RECD_SYNTH_SCENARIO_DRIVE)
        return "an on-foot .rec cannot hold driving: use --format samp-vehicle for 'drive'";
    return refuse_traffic(p);
}

static const char *refuse_vehicle(const recd_synth_params *p)
{
    if (p->scenario == RECD_SYNTH_SCENARIO_WALK)
        return "a vehicle .rec cannot hold walking: use --format samp-onfoot for 'walk'";
    return refuse_traffic(p);
}

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
    rec_job j = {.progress = progress, .ctx = ctx};
    recd_rec_type type = p->format->msg_format == RECD_MSG_FMT_SAMP_VEHICLE ? RECD_REC_TYPE_VEHICLE
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

static int session_new(const recd_synth_params *p, void **gen)
{
    recd_synth_rec_gen *g;
    int rc = recd_synth_rec_gen_new(p, &g);
    *gen = g;
    return rc;
}

/* A .rec block holds no wall clock: the open message carries the start when asked to. */
static int session_open(void *gen, recd_msg *open, int64_t start_ms)
{
    (void)gen;
    if (start_ms >= 0) {
        open->open.has_start_time = true;
        open->open.start_time_ms = start_ms;
    }
    return 0;
}

static int session_next(void *gen, recd_synth_emit_fn emit, void *ctx)
{
    recd_synth_rec_block b;
    int rc = recd_synth_rec_gen_next(gen, &b);
    if (rc <= 0)
        return rc < 0 ? rc : 1;
    bool vehicle = b.type == RECD_REC_TYPE_VEHICLE;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT);
    if (vehicle)
        m.vehicle = b.vehicle;
    else
        m.onfoot = b.onfoot;
    return emit(ctx, &m);
}

static void session_free(void *gen)
{
    recd_synth_rec_gen_free(gen);
}

const struct recd_format_synth recd_rec__synth_onfoot = {
    .refuse = refuse_onfoot,
    .write = write_rec,
    .sample_ms = 0, /* a generator gives blocks until its duration ends */
    .session_new = session_new,
    .session_open = session_open,
    .session_next = session_next,
    .session_free = session_free,
};

const struct recd_format_synth recd_rec__synth_vehicle = {
    .refuse = refuse_vehicle,
    .write = write_rec,
    .sample_ms = 0,
    .session_new = session_new,
    .session_open = session_open,
    .session_next = session_next,
    .session_free = session_free,
};
