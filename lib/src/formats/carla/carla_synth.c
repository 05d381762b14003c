/* SPDX-License-Identifier: MIT */
/* The CARLA traffic scenario: a 5 x 5 town grid of 100 m blocks with a traffic light at every
 * crossing (green 10 s, yellow 3 s, red 13 s, phases shifted per crossing), vehicles driving the
 * roads and turning at crossings, walkers on the pavements, a collision sensor parented to the
 * first vehicle, and every few seconds two vehicles touching (a Collision event) and a walker
 * leaving and another arriving. Every actor's BoundingBox is recorded in the frame it spawns in,
 * as CARLA does. Written at 20 frames/s through the carla importer, so the
 * output is what recd writes for a live episode. */
#include "formats/carla/carla_synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/format_import.h"
#include "formats/format_synth.h"
#include "recd/message.h"

#define GRID 5
#define BLOCK_CM 10000.0
#define FRAME_S 0.05

typedef struct actor {
    uint32_t id;
    bool vehicle;
    double x, y, z, yaw, speed; /* cm, degrees, cm/s */
    int axis;                   /* vehicles: 0 along x, 1 along y */
    int dir;                    /* +1 / -1 */
    bool boxed;                 /* its BoundingBox is recorded */
} actor;

typedef struct gen {
    recd_synth_rng rng;
    actor *actors;
    uint32_t n, next_id, lights, collisions;
    bool visual_time; /* the id table has VisualTime (0.9.15 and later) */
    recd_importer im;
    recd_buf rec[RECD_CARLA_KIND_COUNT];
    uint32_t count[RECD_CARLA_KIND_COUNT];
} gen;

static void put32(recd_buf *b, uint32_t v)
{
    uint8_t t[4];
    st_le32(t, v);
    recd_buf_append(b, t, 4);
}
static void putf(recd_buf *b, double v) { put32(b, f32_to_bits((float)v)); }
static void put8(recd_buf *b, uint8_t v) { recd_buf_append(b, &v, 1); }
static void putstr(recd_buf *b, const char *s)
{
    uint8_t t[2];
    st_le16(t, (uint16_t)strlen(s));
    recd_buf_append(b, t, 2);
    recd_buf_append(b, s, strlen(s));
}
static void putvec(recd_buf *b, double x, double y, double z)
{
    putf(b, x);
    putf(b, y);
    putf(b, z);
}

static int send_event(gen *g, unsigned kind, recd_buf *b, char *err, size_t errlen)
{
    recd_carla_event e = {.kind = (uint8_t)kind, .width = 4, .len = (uint32_t)b->len, .data = b->data};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
    m.carla_event = &e;
    int rc = recd_format__importer_msg(&g->im, &recd_carla__importer, &m, err, errlen);
    recd_buf_reset(b);
    return rc;
}

static int add_actor(gen *g, uint32_t id, uint8_t type, const char *bp, double x, double y,
                     double z, double yaw, const char *role, char *err, size_t errlen)
{
    recd_buf b = {0};
    put32(&b, id);
    put8(&b, type);
    putvec(&b, x, y, z);
    putvec(&b, 0, 0, yaw);
    put32(&b, type == 0 || type == 3 ? 0 : 1 + id % 40);
    putstr(&b, bp);
    uint8_t n[2];
    st_le16(n, role ? 2 : 0);
    recd_buf_append(&b, n, 2);
    if (role) {
        put8(&b, 3);
        putstr(&b, "role_name");
        putstr(&b, role);
        put8(&b, 4);
        putstr(&b, "color");
        char color[32];
        snprintf(color, sizeof color, "%u,%u,%u", id * 37 % 256, id * 91 % 256, id * 53 % 256);
        putstr(&b, color);
    }
    int rc = send_event(g, RECD_CARLA_EVENT_ADD, &b, err, errlen);
    recd_buf_free(&b);
    return rc;
}

static void place(gen *g, actor *a)
{
    double along = recd_synth_rng_range(&g->rng, 0, (GRID - 1) * BLOCK_CM);
    double road = BLOCK_CM * recd_synth_rng_below(&g->rng, GRID);
    a->axis = (int)recd_synth_rng_below(&g->rng, 2);
    a->dir = recd_synth_rng_chance(&g->rng, 0.5) ? 1 : -1;
    double lane = a->vehicle ? 175.0 * a->dir : 600.0; /* walkers on the pavement */
    a->x = a->axis == 0 ? along : road + lane;
    a->y = a->axis == 0 ? road - lane : along;
    a->z = a->vehicle ? 2.0 : 95.0;
    a->speed = a->vehicle ? recd_synth_rng_range(&g->rng, 600, 1400) : recd_synth_rng_range(&g->rng, 90, 160);
    a->yaw = a->axis == 0 ? (a->dir > 0 ? 0 : 180) : (a->dir > 0 ? 90 : -90);
}

static void move(gen *g, actor *a)
{
    double *p = a->axis == 0 ? &a->x : &a->y;
    double before = *p;
    *p += a->dir * a->speed * FRAME_S;
    double max = (GRID - 1) * BLOCK_CM;
    if (*p < 0 || *p > max) { /* the town's edge: turn round */
        *p = *p < 0 ? 0 : max;
        a->dir = -a->dir;
    } else if (a->vehicle && floor(before / BLOCK_CM) != floor(*p / BLOCK_CM) &&
               recd_synth_rng_chance(&g->rng, 0.3)) { /* a crossing: turn */
        double at = round(*p / BLOCK_CM) * BLOCK_CM, road = a->axis == 0 ? a->y : a->x;
        a->axis ^= 1;
        a->dir = recd_synth_rng_chance(&g->rng, 0.5) ? 1 : -1;
        double cross = round(road / BLOCK_CM) * BLOCK_CM;
        a->x = a->axis == 0 ? cross : at + 175.0 * a->dir;
        a->y = a->axis == 0 ? at - 175.0 * a->dir : cross;
    }
    a->yaw = a->axis == 0 ? (a->dir > 0 ? 0 : 180) : (a->dir > 0 ? 90 : -90);
}

/* CARLA records an actor's local box once, when it spawns: vehicles about 4.7 x 2 x 1.5 m,
 * walkers 0.4 x 0.4 x 1.9 m (origin and half extents, cm). */
static void put_box(gen *g, actor *a)
{
    recd_buf *b = &g->rec[RECD_CARLA_BOUNDING_BOX];
    put32(b, a->id);
    if (a->vehicle) {
        putvec(b, 0, 0, 75);
        putvec(b, 235, 100, 75);
    } else {
        putvec(b, 0, 0, 0);
        putvec(b, 19, 19, 93);
    }
    g->count[RECD_CARLA_BOUNDING_BOX]++;
    a->boxed = true;
}

static void light_state(double t, uint32_t i, uint8_t *state, double *in_state)
{
    double c = fmod(t + 7.0 * i, 26.0);
    *state = c < 10 ? 2 : c < 13 ? 1 : 0;
    *in_state = c < 10 ? c : c < 13 ? c - 10 : c - 13;
}

static int frame(gen *g, uint64_t id, double t, char *err, size_t errlen)
{
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++) {
        recd_buf_reset(&g->rec[k]);
        g->count[k] = 0;
    }
    recd_buf *pos = &g->rec[RECD_CARLA_POSITION];
    for (uint32_t i = 0; i < g->n; i++) {
        actor *a = &g->actors[i];
        if (id > 1)
            move(g, a);
        if (!a->boxed)
            put_box(g, a);
        put32(pos, a->id);
        putvec(pos, a->x, a->y, a->z);
        putvec(pos, 0, 0, a->yaw);
        g->count[RECD_CARLA_POSITION]++;
        recd_buf *kin = &g->rec[RECD_CARLA_KINEMATICS];
        put32(kin, a->id);
        double v = a->speed / 100.0;
        putvec(kin, a->axis == 0 ? v * a->dir : 0, a->axis == 1 ? v * a->dir : 0, 0);
        putvec(kin, 0, 0, 0);
        g->count[RECD_CARLA_KINEMATICS]++;
        if (a->vehicle) {
            recd_buf *an = &g->rec[RECD_CARLA_ANIM_VEHICLE];
            put32(an, a->id);
            putf(an, 0);
            putf(an, 0.55);
            putf(an, 0);
            put8(an, 0);
            put32(an, 3);
            g->count[RECD_CARLA_ANIM_VEHICLE]++;
            recd_buf *li = &g->rec[RECD_CARLA_VEHICLE_LIGHT];
            put32(li, a->id);
            put32(li, t > 60 ? 0x3 : 0x1);
            g->count[RECD_CARLA_VEHICLE_LIGHT]++;
        } else {
            recd_buf *an = &g->rec[RECD_CARLA_ANIM_WALKER];
            put32(an, a->id);
            putf(an, a->speed);
            g->count[RECD_CARLA_ANIM_WALKER]++;
        }
    }
    for (uint32_t i = 0; i < g->lights; i++) {
        uint8_t st;
        double in;
        light_state(t, i, &st, &in);
        recd_buf *b = &g->rec[RECD_CARLA_STATE];
        put32(b, 2 + i);
        put8(b, 0);
        putf(b, in);
        put8(b, st);
        g->count[RECD_CARLA_STATE]++;
    }
    if (id == 1)
        for (uint32_t i = 0; i < g->lights; i++) {
            recd_buf *b = &g->rec[RECD_CARLA_TRAFFIC_LIGHT_TIME];
            put32(b, 2 + i);
            putf(b, 10);
            putf(b, 3);
            putf(b, 13);
            g->count[RECD_CARLA_TRAFFIC_LIGHT_TIME]++;
        }
    uint8_t tb[8];
    st_le64(tb, f64_to_bits(t));
    recd_buf_append(&g->rec[RECD_CARLA_PLATFORM_TIME], tb, 8);
    recd_buf_append(&g->rec[RECD_CARLA_VISUAL_TIME], tb, 8);
    static const uint8_t kinds[] = {RECD_CARLA_POSITION, RECD_CARLA_STATE, RECD_CARLA_ANIM_VEHICLE,
                                    RECD_CARLA_ANIM_WALKER, RECD_CARLA_VEHICLE_LIGHT, RECD_CARLA_KINEMATICS,
                                    RECD_CARLA_BOUNDING_BOX, RECD_CARLA_TRAFFIC_LIGHT_TIME, RECD_CARLA_PLATFORM_TIME,
                                    RECD_CARLA_VISUAL_TIME};
    recd_carla_packet pk[sizeof kinds];
    size_t n = 0;
    for (size_t i = 0; i < sizeof kinds; i++) {
        unsigned k = kinds[i];
        bool countless = k == RECD_CARLA_PLATFORM_TIME || k == RECD_CARLA_VISUAL_TIME;
        if (k == RECD_CARLA_VISUAL_TIME && !g->visual_time)
            continue;
        if (!countless && k != RECD_CARLA_POSITION && k != RECD_CARLA_STATE && g->count[k] == 0)
            continue;
        pk[n++] = (recd_carla_packet){.kind = (uint8_t)k, .count = g->count[k],
                                      .len = (uint32_t)g->rec[k].len, .data = g->rec[k].data};
    }
    recd_carla_frame f = {.id = id, .elapsed = t, .width = 4, .count = n, .packets = pk};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    m.carla_state = &f;
    return recd_format__importer_msg(&g->im, &recd_carla__importer, &m, err, errlen);
}

static int spawn_all(gen *g, char *err, size_t errlen)
{
    int rc = add_actor(g, 1, 0, "spectator", 20000, 20000, 5000, 0, NULL, err, errlen);
    for (uint32_t i = 0; rc == 0 && i < g->lights; i++)
        rc = add_actor(g, 2 + i, 3, "traffic.traffic_light", BLOCK_CM * (i % GRID) + 650,
                       BLOCK_CM * (i / GRID) + 650, 10, 90.0 * (i % 4), NULL, err, errlen);
    static const char *const cars[] = {"vehicle.tesla.model3", "vehicle.audi.a2",
                                       "vehicle.lincoln.mkz_2020", "vehicle.nissan.patrol",
                                       "vehicle.mini.cooper_s"};
    for (uint32_t i = 0; rc == 0 && i < g->n; i++) {
        actor *a = &g->actors[i];
        char bp[40];
        snprintf(bp, sizeof bp, "walker.pedestrian.%04u", 1 + a->id % 40);
        rc = add_actor(g, a->id, a->vehicle ? 1 : 2, a->vehicle ? cars[a->id % 5] : bp, a->x, a->y,
                       a->z, a->yaw, a->vehicle ? (i == 0 ? "hero" : "autopilot") : NULL, err, errlen);
    }
    if (rc == 0 && g->n && g->actors[0].vehicle) { /* a collision sensor on the hero */
        uint32_t sensor = g->next_id++;
        rc = add_actor(g, sensor, 5, "sensor.other.collision", 0, 0, 0, 0, NULL, err, errlen);
        recd_buf b = {0};
        put32(&b, sensor);
        put32(&b, g->actors[0].id);
        if (rc == 0)
            rc = send_event(g, RECD_CARLA_EVENT_PARENT, &b, err, errlen);
        recd_buf_free(&b);
    }
    return rc;
}

/* Every 5 s: two vehicles touch; a walker leaves and another comes. */
static int happenings(gen *g, char *err, size_t errlen)
{
    recd_buf b = {0};
    int rc = 0;
    uint32_t vehicles = 0;
    for (uint32_t i = 0; i < g->n; i++)
        vehicles += g->actors[i].vehicle;
    if (vehicles >= 2) {
        actor *a = &g->actors[0], *o = &g->actors[1 + recd_synth_rng_below(&g->rng, vehicles - 1)];
        put32(&b, ++g->collisions);
        put32(&b, a->id);
        put32(&b, o->id);
        put8(&b, 1); /* the first vehicle is the hero */
        put8(&b, 0);
        rc = send_event(g, RECD_CARLA_COLLISION, &b, err, errlen);
    }
    for (uint32_t i = 0; rc == 0 && i < g->n; i++) {
        actor *a = &g->actors[i];
        if (a->vehicle)
            continue;
        put32(&b, a->id);
        rc = send_event(g, RECD_CARLA_EVENT_DEL, &b, err, errlen);
        a->id = g->next_id++;
        a->boxed = false; /* boxed in the next frame, the first that holds it */
        place(g, a);
        char bp[40];
        snprintf(bp, sizeof bp, "walker.pedestrian.%04u", 1 + a->id % 40);
        if (rc == 0)
            rc = add_actor(g, a->id, 2, bp, a->x, a->y, a->z, a->yaw, NULL, err, errlen);
        break;
    }
    recd_buf_free(&b);
    return rc;
}

int recd_synth_write_carla(const recd_synth_params *p, uint32_t actors, recd_sink sink,
                           uint64_t *frames_out)
{
    recd_synth_carla_layout layout = {.actors = actors, .width = 4, .ids = RECD_CARLA_IDS_0_9_16};
    return recd_synth_write_carla_layout(p, &layout, sink, frames_out);
}

int recd_synth_write_carla_layout(const recd_synth_params *p,
                                  const recd_synth_carla_layout *layout, recd_sink sink,
                                  uint64_t *frames_out)
{
    if (frames_out)
        *frames_out = 0;
    uint32_t actors = layout->actors;
    if (recd_synth_params_check(p, NULL) < 0 || p->format->msg_format != RECD_MSG_FMT_CARLA ||
        actors > RECD_SYNTH_CARLA_MAX_ACTORS || (layout->width != 4 && layout->width != 8) ||
        !recd_carla_ids_name(layout->ids)[0])
        return -EINVAL;
    gen g;
    memset(&g, 0, sizeof g);
    recd_synth_rng_seed(&g.rng, p->seed);
    g.n = actors ? actors : 50;
    g.visual_time = layout->ids != RECD_CARLA_IDS_0_9_13;
    g.lights = GRID * GRID;
    g.next_id = 2 + g.lights;
    g.actors = calloc(g.n, sizeof *g.actors);
    if (!g.actors)
        return -ENOMEM;
    uint32_t vehicles = g.n - g.n * 3 / 10;
    for (uint32_t i = 0; i < g.n; i++) {
        g.actors[i].id = g.next_id++;
        g.actors[i].vehicle = i < vehicles;
        place(&g, &g.actors[i]);
    }
    recd_importer_init(&g.im, RECD_MSG_FMT_CARLA, sink);
    char map[] = "Town10HD_Opt";
    recd_carla_open o = {.date = 1700000000 + (int64_t)(p->seed % 100000000), .map = map,
                         .width = layout->width, .ids = layout->ids, .additional_data = true};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_CARLA);
    m.open.carla = &o;
    char err[256];
    int rc = recd_format__importer_msg(&g.im, &recd_carla__importer, &m, err, sizeof err);
    uint64_t frames = p->duration_ms / 50 + 1;
    for (uint64_t i = 1; rc == 0 && i <= frames; i++) {
        double t = (double)(i - 1) * FRAME_S;
        rc = frame(&g, i, t, err, sizeof err);
        if (rc == 0 && i == 1)
            rc = spawn_all(&g, err, sizeof err);
        else if (rc == 0 && i % 100 == 0)
            rc = happenings(&g, err, sizeof err);
    }
    if (rc == 0)
        rc = recd_format__importer_finish(&g.im, &recd_carla__importer, err, sizeof err);
    if (rc == 0 && frames_out)
        *frames_out = frames;
    recd_format__importer_free(&g.im, &recd_carla__importer);
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
        recd_buf_free(&g.rec[k]);
    free(g.actors);
    return rc;
}

static const char *refuse(const recd_synth_params *p)
{
    if (p->scenario != RECD_SYNTH_SCENARIO_TRAFFIC && p->scenario != RECD_SYNTH_SCENARIO_MIXED)
        return "a CARLA log holds the 'traffic' scenario (or 'mixed', the same)";
    return NULL;
}

/* The default actor count; no progress: a few seconds at most. */
static int write_default(const recd_synth_params *p, recd_sink sink, uint64_t *frames_out,
                         recd_synth_progress_fn progress, void *ctx)
{
    (void)progress;
    (void)ctx;
    return recd_synth_write_carla(p, 0, sink, frames_out);
}

/* No live sessions: send a generated log instead. */
const struct recd_format_synth recd_carla__synth = {
    .refuse = refuse,
    .write = write_default,
};
