/* SPDX-License-Identifier: MIT */
/* A synthetic samp-player session: a walk and a drive in turns on one clock (rec_player_synth.h),
 * sent by send --synthetic and written by generate as JSON lines (docs/protocol.md 2.9). */
#include "rec_player_synth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/rec/rec_synth.h"
#include "recd/buf_printf.h"

#define PLAYER_STRETCH_MS 5000u   /* on foot, then in the car, then on foot, ... */
#define PLAYER_VEHICLE_MODEL 411 /* an Infernus */

typedef struct player_synth {
    recd_synth_rec_gen *walk, *car;
    bool in_car, stretch_starts, any;
    uint32_t stretch_at_ms, stretch_gen_ms, last_ms;
} player_synth;

static void player_free(void *gen)
{
    player_synth *p = gen;
    if (!p)
        return;
    recd_synth_rec_gen_free(p->walk);
    recd_synth_rec_gen_free(p->car);
    free(p);
}

static int player_init(void **gen, uint64_t seed, uint64_t duration_ms)
{
    player_synth *p = calloc(1, sizeof *p);
    *gen = p;
    if (!p)
        return -ENOMEM;
    recd_synth_params walk = {recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                              duration_ms, seed};
    recd_synth_params drive = {recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE,
                               duration_ms, seed};
    int rc = recd_synth_rec_gen_new(&walk, &p->walk);
    if (rc == 0)
        rc = recd_synth_rec_gen_new(&drive, &p->car);
    p->stretch_starts = true;
    return rc;
}

/* Each stretch goes on 100 ms after the last one's end, its first block at the stretch's start. */
static int player_next(void *gen, recd_msg *m)
{
    player_synth *p = gen;
    recd_synth_rec_block b;
    int rc = recd_synth_rec_gen_next(p->in_car ? p->car : p->walk, &b);
    if (rc <= 0)
        return rc < 0 ? rc : 1;
    uint32_t *t = p->in_car ? &b.vehicle.time_ms : &b.onfoot.time_ms;
    if (p->stretch_starts) {
        p->stretch_gen_ms = *t;
        p->stretch_at_ms = p->any ? p->last_ms + 100 : 0;
        p->stretch_starts = false;
    }
    *t = p->stretch_at_ms + (*t - p->stretch_gen_ms);
    p->last_ms = *t;
    p->any = true;
    m->player.rec_type = p->in_car ? RECD_REC_TYPE_VEHICLE : RECD_REC_TYPE_ONFOOT;
    if (p->in_car) {
        m->vehicle = b.vehicle;
        m->player.has_model = m->player.has_seat = true;
        m->player.vehicle_model = PLAYER_VEHICLE_MODEL;
        m->player.seat = 0;
    } else {
        m->onfoot = b.onfoot;
    }
    if (*t - p->stretch_at_ms >= PLAYER_STRETCH_MS) {
        p->in_car = !p->in_car;
        p->stretch_starts = true;
    }
    return 0;
}

/* One JSON line. librecd writes no samp-player state (files never hold one), so a state is written
 * as the on-foot or vehicle state it holds, a vehicle's model and seat added (protocol 2.9). */
static int write_json_line(recd_sink sink, const recd_msg *m)
{
    recd_buf line = {0};
    recd_msg as_rec = *m;
    bool state = m->type == RECD_MSG_STATE;
    bool vehicle = state && m->player.rec_type == RECD_REC_TYPE_VEHICLE;
    if (state)
        as_rec.format = vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT;
    int rc = recd_msg_to_json(&as_rec, &line); /* the line with its "}\n" */
    if (rc == 0 && vehicle) {
        line.len -= 2;
        rc = recd_buf_printf(&line, ",\"vehicle_model\":%u,\"seat\":%u}\n",
                             (unsigned)m->player.vehicle_model, (unsigned)m->player.seat);
    }
    if (rc == 0)
        rc = sink.write(sink.ctx, line.data, line.len);
    recd_buf_free(&line);
    return rc;
}

/* A samp-player session as JSON lines: open, the states up to the duration, close; *states
 * counts the states. */
static int player_write(const recd_synth_params *p, recd_sink sink, uint64_t *states)
{
    void *g;
    int rc = player_init(&g, p->seed, p->duration_ms);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_PLAYER);
    if (rc == 0)
        rc = write_json_line(sink, &m);
    while (rc == 0) {
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_PLAYER);
        if ((rc = player_next(g, &m)) != 0 || ((player_synth *)g)->last_ms > p->duration_ms)
            break;
        rc = write_json_line(sink, &m);
        ++*states;
    }
    player_free(g);
    if (rc < 0)
        return rc;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_PLAYER);
    return write_json_line(sink, &m);
}

const rt_session_synth rt_rec_player_synth = {
    .base = "samp-onfoot",
    .scenario = RECD_SYNTH_SCENARIO_WALK, /* walks and drives, whatever --scenario says */
    .summary = "walk+drive",
    .unit = "states",
    .init = player_init,
    .next = player_next,
    .free = player_free,
    .write = player_write,
};
