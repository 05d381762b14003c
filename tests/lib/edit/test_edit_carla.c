/* SPDX-License-Identifier: MIT */
/* Editing CARLA logs (recd/edit.h): a cut replays on its own (its first frame adds every actor
 * alive at the cut, where it stands then, and re-attaches its sensors), frames renumbered from 1
 * and elapsed rebased to 0 unless keep-time; concat continues ids and times and deletes each
 * input's actors before the next one's; split pieces and the corpus log's cut verify; retime and
 * transform are refused with a reason; tracks give every vehicle and walker in metres. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/carla.h"
#include "recd/edit.h"
#include "recd/format.h"
#include "recd/message.h"

#define FRAMES 20
#define STEP 0.05

/* Vehicle 10 drives east 100 cm a frame; sensor 11 rides on it; walker 12 walks south 10 cm a
 * frame and is deleted in frame 5; vehicle 13 appears in frame 8. */
static recd_buf make_log(void)
{
    recd_buf text = {0};
    char line[1024];
#define PUT(...)                                                                                  \
    do {                                                                                          \
        snprintf(line, sizeof line, __VA_ARGS__);                                                 \
        assert_int_equal(recd_buf_append(&text, line, strlen(line)), 0);                          \
    } while (0)
    PUT("{\"type\":\"open\",\"format\":\"carla\",\"carla\":{\"map\":\"Town01\",\"date\":1700000000}}\n");
    for (int k = 1; k <= FRAMES; k++) {
        PUT("{\"type\":\"state\",\"frame\":%d,\"elapsed\":%.17g,\"positions\":[", k, STEP * (k - 1));
        PUT("{\"id\":10,\"location\":[%d,0,0],\"rotation\":[0,0,0]}", 100 * (k - 1));
        if (k <= 5)
            PUT(",{\"id\":12,\"location\":[500,%d,0],\"rotation\":[0,0,90]}", 10 * (k - 1));
        if (k >= 8)
            PUT(",{\"id\":13,\"location\":[0,%d,0],\"rotation\":[0,0,0]}", 1000 + 50 * (k - 8));
        PUT("]}\n");
        if (k == 1) {
            PUT("{\"type\":\"event\",\"kind\":\"add\",\"id\":10,\"actor_type\":1,\"location\":[0,0,0],"
                "\"rotation\":[0,0,0],\"uid\":1,\"blueprint\":\"vehicle.test\",\"attributes\":[]}\n");
            PUT("{\"type\":\"event\",\"kind\":\"add\",\"id\":11,\"actor_type\":5,\"location\":[0,0,0],"
                "\"rotation\":[0,0,0],\"uid\":2,\"blueprint\":\"sensor.other.collision\","
                "\"attributes\":[]}\n");
            PUT("{\"type\":\"event\",\"kind\":\"add\",\"id\":12,\"actor_type\":2,\"location\":[500,0,0],"
                "\"rotation\":[0,0,90],\"uid\":3,\"blueprint\":\"walker.test\",\"attributes\":[]}\n");
            PUT("{\"type\":\"event\",\"kind\":\"parent\",\"id\":11,\"parent\":10}\n");
        }
        if (k == 5)
            PUT("{\"type\":\"event\",\"kind\":\"delete\",\"id\":12}\n");
        if (k == 8)
            PUT("{\"type\":\"event\",\"kind\":\"add\",\"id\":13,\"actor_type\":1,\"location\":[0,1000,0],"
                "\"rotation\":[0,0,0],\"uid\":1,\"blueprint\":\"vehicle.test\",\"attributes\":[]}\n");
    }
    PUT("{\"type\":\"close\"}\n");
#undef PUT
    recd_buf out = {0};
    char err[256] = "";
    if (recd_import_text(text.data, text.len, RECD_TEXT_JSONL, RECD_MSG_FMT_CARLA,
                         recd_buf_sink(&out), NULL, err, sizeof err) != 0)
        fail_msg("import: %s", err);
    recd_buf_free(&text);
    return out;
}

static recd_edit_input input_of(const recd_buf *b)
{
    recd_edit_input in = {b->data, b->len};
    return in;
}

static void check_valid(const uint8_t *data, size_t len)
{
    const recd_format *f = recd_format_sniff(data, len, NULL);
    assert_non_null(f);
    assert_string_equal(f->name, "carla");
    recd_format_verdict v;
    memset(&v, 0, sizeof v);
    assert_int_equal(recd_format_verify(f, data, len, &v, NULL), 0);
    assert_true(v.valid);
}

/* What a log holds, message by message. */
typedef struct seen_event {
    uint64_t frame; /* the frame it belongs to */
    uint8_t kind;
    uint32_t id, other; /* parent id for EventParent */
    float x, y;         /* EventAdd location */
} seen_event;

typedef struct seen {
    uint64_t frames;
    uint64_t ids[512];
    double elapsed[512];
    seen_event ev[2048];
    size_t events;
} seen;

static int on_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    seen *s = ctx;
    if (m->type == RECD_MSG_STATE && s->frames < 512) {
        s->ids[s->frames] = m->carla_state->id;
        s->elapsed[s->frames] = m->carla_state->elapsed;
        s->frames++;
    } else if (m->type == RECD_MSG_EVENT && s->events < 2048) {
        const recd_carla_event *e = m->carla_event;
        seen_event *v = &s->ev[s->events++];
        memset(v, 0, sizeof *v);
        v->frame = s->frames;
        v->kind = e->kind;
        memcpy(&v->id, e->data, 4);
        if (e->kind == RECD_CARLA_EVENT_PARENT)
            memcpy(&v->other, e->data + 4, 4);
        if (e->kind == RECD_CARLA_EVENT_ADD) {
            memcpy(&v->x, e->data + 5, 4);
            memcpy(&v->y, e->data + 9, 4);
        }
    }
    return 0;
}

static seen read_log(const recd_buf *b)
{
    check_valid(b->data, b->len);
    seen s;
    memset(&s, 0, sizeof s);
    char err[256] = "";
    if (recd_format_export(recd_format_find("carla"), b->data, b->len, on_msg, &s, err,
                           sizeof err) != 0)
        fail_msg("export: %s", err);
    return s;
}

static const seen_event *find_event(const seen *s, uint8_t kind, uint32_t id)
{
    for (size_t i = 0; i < s->events; i++)
        if (s->ev[i].kind == kind && s->ev[i].id == id)
            return &s->ev[i];
    return NULL;
}

static void test_cut_replays_alone(void **state)
{
    (void)state;
    recd_buf log = make_log();
    assert_string_equal(recd_edit_time_unit(recd_format_find("carla")), "ms");
    /* [250, 600) ms: frames 6..12 of the source (elapsed 0.25 .. 0.55). */
    recd_cut_opts o = {250, 600, false};
    recd_buf out = {0};
    char err[256] = "";
    if (recd_edit_cut(input_of(&log), &o, recd_buf_sink(&out), NULL, err, sizeof err) != 0)
        fail_msg("cut: %s", err);
    seen s = read_log(&out);
    assert_int_equal(s.frames, 7);
    for (uint64_t i = 0; i < s.frames; i++) {
        assert_int_equal(s.ids[i], i + 1);
        assert_true(fabs(s.elapsed[i] - STEP * (double)i) < 1e-9);
    }
    /* Frame 1 adds the vehicle where it stood in source frame 5 (x = 400 cm), the sensor, and
     * attaches the sensor again; the walker deleted in frame 5 is gone; vehicle 13 comes with
     * its own add in its own frame (source 8 = frame 3). */
    const seen_event *v = find_event(&s, RECD_CARLA_EVENT_ADD, 10);
    assert_non_null(v);
    assert_int_equal(v->frame, 1);
    assert_true(v->x == 400.0f && v->y == 0.0f);
    assert_non_null(find_event(&s, RECD_CARLA_EVENT_ADD, 11));
    const seen_event *p = find_event(&s, RECD_CARLA_EVENT_PARENT, 11);
    assert_non_null(p);
    assert_int_equal(p->frame, 1);
    assert_int_equal(p->other, 10);
    assert_null(find_event(&s, RECD_CARLA_EVENT_ADD, 12));
    const seen_event *late = find_event(&s, RECD_CARLA_EVENT_ADD, 13);
    assert_non_null(late);
    assert_int_equal(late->frame, 3);
    assert_int_equal(s.events, 4);
    recd_buf_free(&out);

    /* keep-time keeps elapsed; ids still start at 1. */
    o.keep_time = true;
    assert_int_equal(recd_edit_cut(input_of(&log), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    s = read_log(&out);
    assert_int_equal(s.ids[0], 1);
    assert_true(fabs(s.elapsed[0] - 0.25) < 1e-9);
    recd_buf_free(&out);

    /* A range without frames is refused and writes nothing. */
    recd_cut_opts none = {5000, 6000, false};
    assert_int_equal(recd_edit_cut(input_of(&log), &none, recd_buf_sink(&out), NULL, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "no frame"));
    recd_buf_free(&log);
}

static void test_concat(void **state)
{
    (void)state;
    recd_buf log = make_log();
    recd_edit_input two[2] = {input_of(&log), input_of(&log)};
    recd_buf out = {0};
    char err[256] = "";
    if (recd_edit_concat(two, 2, 100, recd_buf_sink(&out), NULL, err, sizeof err) != 0)
        fail_msg("concat: %s", err);
    seen s = read_log(&out);
    assert_int_equal(s.frames, 2 * FRAMES);
    for (uint64_t i = 0; i < s.frames; i++)
        assert_int_equal(s.ids[i], i + 1);
    /* The second input starts 100 ms after the first one's last frame. */
    double last = STEP * (FRAMES - 1);
    assert_true(fabs(s.elapsed[FRAMES] - (last + 0.1)) < 1e-9);
    /* Actors alive at the end of input 1 (10, 11, 13) are deleted in its last frame. */
    const seen_event *d = find_event(&s, RECD_CARLA_EVENT_DEL, 13);
    assert_non_null(d);
    assert_int_equal(d->frame, FRAMES);
    assert_non_null(find_event(&s, RECD_CARLA_EVENT_DEL, 10));
    recd_buf_free(&out);

    /* gap < 0: the previous input's last step. */
    assert_int_equal(recd_edit_concat(two, 2, -1, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    s = read_log(&out);
    assert_true(fabs(s.elapsed[FRAMES] - (last + STEP)) < 1e-9);
    recd_buf_free(&out);

    recd_buf_free(&log);
}

static recd_buf split_pieces[3];

static int piece_sink(void *data, size_t i, recd_sink *sink)
{
    (void)data;
    if (i >= 3)
        return -E2BIG;
    *sink = recd_buf_sink(&split_pieces[i]);
    return 0;
}

static void test_split(void **state)
{
    (void)state;
    recd_buf log = make_log();
    int64_t at[1] = {500};
    char err[256] = "";
    if (recd_edit_split(input_of(&log), at, 1, false, piece_sink, NULL, NULL, err, sizeof err) != 0)
        fail_msg("split: %s", err);
    seen a = read_log(&split_pieces[0]), b = read_log(&split_pieces[1]);
    assert_int_equal(a.frames + b.frames, FRAMES);
    assert_int_equal(b.ids[0], 1);
    const seen_event *v = find_event(&b, RECD_CARLA_EVENT_ADD, 10);
    assert_non_null(v);
    assert_true(v->x == 900.0f); /* source frame 10 at 450 ms */
    assert_non_null(find_event(&b, RECD_CARLA_EVENT_ADD, 13));
    for (int i = 0; i < 3; i++)
        recd_buf_free(&split_pieces[i]);
    recd_buf_free(&log);
}

static void test_retime_transform_refused(void **state)
{
    (void)state;
    recd_buf log = make_log();
    recd_buf out = {0};
    char err[256] = "";
    recd_retime_opts r = {2.0, 0};
    assert_int_equal(recd_edit_retime(input_of(&log), &r, recd_buf_sink(&out), NULL, err, sizeof err),
                     -ENOTSUP);
    assert_non_null(strstr(err, "time factor"));
    recd_transform_opts t = {{1, 2, 3}, 90, false, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(input_of(&log), &t, recd_buf_sink(&out), NULL, err, sizeof err),
                     -ENOTSUP);
    assert_non_null(strstr(err, "map"));
    assert_int_equal(out.len, 0);
    recd_buf_free(&log);
}

typedef struct track_seen {
    size_t n[16];
    recd_track_kind kind[16];
    double last_x[16], last_y[16], speed[16];
} track_seen;

static int on_point(void *data, const recd_track_point *p)
{
    track_seen *t = data;
    if (p->actor < 0 || p->actor >= 16)
        return -EINVAL;
    t->n[p->actor]++;
    t->kind[p->actor] = p->kind;
    t->last_x[p->actor] = p->x;
    t->last_y[p->actor] = p->y;
    t->speed[p->actor] = p->speed;
    return 0;
}

static void test_track_every_vehicle_and_walker(void **state)
{
    (void)state;
    recd_buf log = make_log();
    track_seen t;
    memset(&t, 0, sizeof t);
    char err[256] = "";
    if (recd_track_read(log.data, log.len, on_point, &t, NULL, err, sizeof err) != 0)
        fail_msg("track: %s", err);
    assert_int_equal(t.n[10], FRAMES);
    assert_int_equal(t.kind[10], RECD_TRACK_VEHICLE);
    assert_true(fabs(t.last_x[10] - (FRAMES - 1)) < 1e-6); /* metres */
    assert_true(fabs(t.speed[10] - 1.0 / STEP) < 1e-3);    /* 1 m per frame */
    assert_int_equal(t.n[11], 0);                           /* a sensor has no route */
    assert_int_equal(t.n[12], 5);
    assert_int_equal(t.kind[12], RECD_TRACK_ONFOOT);
    assert_true(fabs(t.last_y[12] - -0.4) < 1e-6); /* Unreal's y points south */
    assert_int_equal(t.n[13], FRAMES - 7);
    recd_buf_free(&log);
}

static void test_corpus_cut(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = tu_corpus_file("carla", "DistanceToLaneCenter.log", &len);
    recd_edit_input in = {buf, len};
    recd_cut_opts o = {5000, 10000, false};
    recd_buf out = {0};
    char err[256] = "";
    if (recd_edit_cut(in, &o, recd_buf_sink(&out), NULL, err, sizeof err) != 0)
        fail_msg("corpus cut: %s", err);
    seen s = read_log(&out);
    assert_true(s.frames > 50);
    assert_int_equal(s.ids[0], 1);
    assert_true(s.elapsed[0] == 0.0);
    /* The hero (234) is added in frame 1 with its sensors attached to it. */
    const seen_event *hero = find_event(&s, RECD_CARLA_EVENT_ADD, 234);
    assert_non_null(hero);
    assert_int_equal(hero->frame, 1);
    const seen_event *p = find_event(&s, RECD_CARLA_EVENT_PARENT, 239);
    assert_non_null(p);
    assert_int_equal(p->other, 234);
    recd_buf_free(&out);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_replays_alone),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_retime_transform_refused),
        cmocka_unit_test(test_track_every_vehicle_and_walker),
        cmocka_unit_test(test_corpus_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
