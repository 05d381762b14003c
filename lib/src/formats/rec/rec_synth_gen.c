/* SPDX-License-Identifier: MIT */
/* Synthetic SA-MP .rec generator: sample timing as real servers record it and the public API.
 *
 * Timing follows the public recordings: blocks every 25-110 ms while moving (a per-file typical
 * interval with jitter), about 500 ms while idle, the first block 0-600 ms after the start, rare
 * lag spikes, and bursts of 2-7 blocks with one timestamp (packets drained in one server tick:
 * their payloads were sampled at distinct client times). */
#include "formats/rec/rec_synth_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int recd_synth_rec_gen_new(const recd_synth_params *p, recd_synth_rec_gen **out)
{
    *out = NULL;
    if (recd_synth_params_check(p, NULL) < 0 ||
        (p->format->msg_format != RECD_MSG_FMT_SAMP_ONFOOT &&
         p->format->msg_format != RECD_MSG_FMT_SAMP_VEHICLE))
        return -EINVAL;
    recd_synth_rec_gen *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    g->p = *p;
    g->type = p->format->msg_format == RECD_MSG_FMT_SAMP_VEHICLE ? RECD_REC_TYPE_VEHICLE
                                                                 : RECD_REC_TYPE_ONFOOT;
    recd_synth_rng_seed(&g->rng, p->seed);
    synth_terrain_init(&g->terrain, &g->rng, 4.0, 40.0);
    g->mover.terrain = &g->terrain;
    g->mover.x = recd_synth_rng_range(&g->rng, -2000.0, 2000.0);
    g->mover.y = recd_synth_rng_range(&g->rng, -2000.0, 2000.0);
    g->mover.heading = recd_synth_rng_range(&g->rng, -SYNTH_PI, SYNTH_PI);
    g->mover.bound = 2300.0;
    if (g->type == RECD_REC_TYPE_VEHICLE) {
        g->moving_gap_ms = recd_synth_rng_range(&g->rng, 40.0, 100.0);
        synth_car_init(g);
    } else {
        g->moving_gap_ms = recd_synth_rng_range(&g->rng, 35.0, 65.0);
        synth_foot_init(g);
    }
    g->mover.z = synth_terrain_height(&g->terrain, g->mover.x, g->mover.y) + g->mover.height;
    *out = g;
    return 0;
}

void recd_synth_rec_gen_free(recd_synth_rec_gen *g) { free(g); }

static bool active(const recd_synth_rec_gen *g)
{
    return g->type == RECD_REC_TYPE_VEHICLE ? synth_car_active(g) : synth_foot_active(g);
}

/* Seconds until the client's next packet. */
static double next_gap(recd_synth_rec_gen *g)
{
    recd_synth_rng *r = &g->rng;
    double ms;
    if (active(g)) {
        ms = g->moving_gap_ms * recd_synth_rng_range(r, 0.7, 1.3);
        ms = synth_clamp(ms, 25.0, 110.0);
    } else {
        ms = recd_synth_rng_range(r, 480.0, 530.0);
        if (recd_synth_rng_chance(r, 0.02)) /* one idle packet lost or late */
            ms += 500.0;
    }
    if (recd_synth_rng_chance(r, 0.003)) /* network or server hiccup */
        ms += recd_synth_rng_range(r, 100.0, 600.0);
    return ms / 1000.0;
}

static unsigned burst_length(recd_synth_rng *r)
{
    static const unsigned weights[] = {45, 25, 13, 8, 5, 4}; /* lengths 2..7 */
    return 2 + (unsigned)synth_pick_weighted(r, weights, 6);
}

static void sample(recd_synth_rec_gen *g, double dt, recd_synth_rec_block *b)
{
    memset(b, 0, sizeof *b);
    b->type = g->type;
    if (g->type == RECD_REC_TYPE_VEHICLE) {
        synth_car_step(g, dt);
        synth_car_block(g, &b->vehicle);
    } else {
        synth_foot_step(g, dt);
        synth_foot_block(g, &b->onfoot);
    }
}

static void set_time(recd_synth_rec_block *b, uint32_t ms)
{
    if (b->type == RECD_REC_TYPE_VEHICLE)
        b->vehicle.time_ms = ms;
    else
        b->onfoot.time_ms = ms;
}

/* Fills the queue with the next packet or burst of packets; false when the duration is used up. */
static bool refill(recd_synth_rec_gen *g)
{
    double limit = (double)g->p.duration_ms / 1000.0;
    double gap = g->started ? next_gap(g) : recd_synth_rng_range(&g->rng, 0.0, 0.6);
    unsigned want = 1;
    if (g->started && active(g) && recd_synth_rng_chance(&g->rng, 0.012))
        want = burst_length(&g->rng);
    g->q_len = g->q_pos = 0;
    while (g->q_len < want) {
        if (g->t + gap > limit)
            break;
        g->t += gap;
        sample(g, gap, &g->queue[g->q_len++]);
        gap = next_gap(g);
    }
    if (g->q_len == 0)
        return false;
    g->started = true;
    uint32_t ms = (uint32_t)synth_round(g->t * 1000.0); /* the burst arrives with its newest */
    if (ms > g->p.duration_ms)
        ms = (uint32_t)g->p.duration_ms;
    for (unsigned i = 0; i < g->q_len; i++)
        set_time(&g->queue[i], ms);
    return true;
}

int recd_synth_rec_gen_next(recd_synth_rec_gen *g, recd_synth_rec_block *out)
{
    if (g->q_pos >= g->q_len) {
        if (g->done || !refill(g)) {
            g->done = true;
            return 0;
        }
    }
    *out = g->queue[g->q_pos++];
    return 1;
}

int recd_synth_rec_run(const recd_synth_params *p, recd_synth_rec_fn fn, void *ctx)
{
    recd_synth_rec_gen *g;
    int rc = recd_synth_rec_gen_new(p, &g);
    if (rc < 0)
        return rc;
    recd_synth_rec_block b;
    while ((rc = recd_synth_rec_gen_next(g, &b)) > 0) {
        rc = fn(ctx, &b);
        if (rc < 0)
            break;
    }
    recd_synth_rec_gen_free(g);
    return rc < 0 ? rc : 0;
}
