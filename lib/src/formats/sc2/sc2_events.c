/* SPDX-License-Identifier: MIT */
/* Tracker event -> common stream record, one function per event kind (field tags in
 * docs/formats/sc2replay.md, "Tracker events"). */
#include "formats/sc2/sc2_events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "formats/sc2/sc2_replay.h"
#include "base/text.h"
#include "recd/buf_printf.h"

#define FOOD_ONE 4096.0  /* supply is stored in 1/4096ths */

typedef struct export_ctx {
    recd_replay_event_fn on_event;
    void *data;
    recd_buf fields;
    int oom;
} export_ctx;

static void put(export_ctx *x, const char *s, size_t n)
{
    if (recd_buf_append(&x->fields, s, n) < 0)
        x->oom = 1;
}


/* Integers without printf: most of a tracker line is integers. */
static void put_int(export_ctx *x, int64_t v)
{
    if (text_put_i64(&x->fields, v) < 0)
        x->oom = 1;
}

static void key(export_ctx *x, const char *name)
{
    if (x->fields.len > 1)
        put(x, ",", 1);
    put(x, "\"", 1);
    put(x, name, strlen(name));
    put(x, "\":", 2);
}

static void int_field(export_ctx *x, const char *name, int64_t v)
{
    key(x, name);
    put_int(x, v);
}

/* Supply as a number, with a '.' whatever the locale says. */
static void food_field(export_ctx *x, const char *name, int64_t stored)
{
    char text[40];
    key(x, name);
    if (text_format_f64((double)stored / FOOD_ONE, text) == 0)
        put(x, text, strlen(text));
}

/* An optional integer: null when the event leaves it out. */
static void opt_field(export_ctx *x, const char *name, const sc2v_tree *t, const sc2v_node *n)
{
    key(x, name);
    if (sc2v_int(t, n, INT64_MIN) == INT64_MIN)
        put(x, "null", 4);
    else
        put_int(x, sc2v_int(t, n, 0));
}

/* Names (unit types, upgrades) are ASCII identifiers; other bytes are escaped as code points. */
static void str_field(export_ctx *x, const char *name, const sc2v_tree *t, const sc2v_node *n)
{
    const uint8_t *s;
    size_t len;
    key(x, name);
    if (!sc2v_blob(t, n, &s, &len)) {
        put(x, "null", 4);
        return;
    }
    put(x, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        int rc = 0;
        if (c == '"' || c == '\\')
            rc = recd_buf_printf(&x->fields, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            rc = recd_buf_printf(&x->fields, "\\u%04x", c);
        else
            put(x, (const char *)&c, 1);
        if (rc < 0)
            x->oom = 1;
    }
    put(x, "\"", 1);
}

static int64_t field(const sc2v_tree *t, const sc2v_node *ev, int64_t tag)
{
    return sc2v_int(t, sc2v_field(t, ev, tag), 0);
}

/* A unit tag is index << 18 | recycle, the value game events refer to units by. */
static void tag_field(export_ctx *x, const char *name, const sc2v_tree *t, const sc2v_node *ev,
                      int64_t index_tag)
{
    const sc2v_node *index = sc2v_field(t, ev, index_tag);
    key(x, name);
    if (sc2v_int(t, index, INT64_MIN) == INT64_MIN)
        put(x, "null", 4);
    else
        put_int(x, (int64_t)((uint64_t)sc2v_int(t, index, 0) << 18 |
                             (uint64_t)field(t, ev, index_tag + 1)));
}

/* PlayerStats: the named values most tools chart, and every stored value in "stats". */
static int64_t player_stats(export_ctx *x, const sc2v_tree *t, const sc2v_node *ev)
{
    static const struct { int64_t tag; const char *name; } named[] = {
        {0, "minerals"},         {1, "vespene"},           {2, "minerals_rate"},
        {3, "vespene_rate"},     {4, "workers"},           {11, "army_minerals"},
        {14, "army_vespene"},    {17, "minerals_lost_army"}, {20, "vespene_lost_army"},
        {23, "minerals_killed_army"}, {26, "vespene_killed_army"},
    };
    int64_t player = field(t, ev, 0);
    const sc2v_node *stats = sc2v_field(t, ev, 1);
    int_field(x, "player", player);
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        int_field(x, named[i].name, field(t, stats, named[i].tag));
    food_field(x, "food_used", field(t, stats, 29));
    food_field(x, "food_made", field(t, stats, 30));
    key(x, "stats");
    put(x, "{", 1);
    size_t mark = x->fields.len;
    for (const sc2v_node *c = sc2v_first(t, stats); c; c = sc2v_next(t, c)) {
        if (x->fields.len > mark)
            put(x, ",", 1);
        put(x, "\"", 1);
        put_int(x, c->tag);
        put(x, "\":", 2);
        put_int(x, sc2v_int(t, c, 0));
    }
    put(x, "}", 1);
    return player;
}

static int64_t unit_born_or_init(export_ctx *x, const sc2v_tree *t, const sc2v_node *ev, bool born)
{
    tag_field(x, "unit_tag", t, ev, 0);
    int_field(x, "unit_index", field(t, ev, 0));
    str_field(x, "unit_type", t, sc2v_field(t, ev, 2));
    int_field(x, "control_player", field(t, ev, 3));
    int_field(x, "upkeep_player", field(t, ev, 4));
    int_field(x, "x", field(t, ev, 5));
    int_field(x, "y", field(t, ev, 6));
    if (born) {
        tag_field(x, "creator_unit_tag", t, ev, 7);
        str_field(x, "creator_ability", t, sc2v_field(t, ev, 9));
    }
    return field(t, ev, 3);
}

static int64_t unit_died(export_ctx *x, const sc2v_tree *t, const sc2v_node *ev)
{
    tag_field(x, "unit_tag", t, ev, 0);
    int_field(x, "unit_index", field(t, ev, 0));
    opt_field(x, "killer_player", t, sc2v_field(t, ev, 2));
    int_field(x, "x", field(t, ev, 3));
    int_field(x, "y", field(t, ev, 4));
    tag_field(x, "killer_unit_tag", t, ev, 5);
    return sc2v_int(t, sc2v_field(t, ev, 2), -1);
}

/* Items are (index delta, x, y) triples from the first unit index. x and y are whole map cells,
 * the same unit as UnitBorn's and UnitDied's (a unit's last position and its death place agree),
 * so they are kept as stored; tools that multiply them by 4 get quarter-cell "points". */
static void unit_positions(export_ctx *x, const sc2v_tree *t, const sc2v_node *ev)
{
    int64_t index = field(t, ev, 0);
    const sc2v_node *items = sc2v_field(t, ev, 1);
    key(x, "units");
    put(x, "[", 1);
    const sc2v_node *c = sc2v_first(t, items);
    for (int n = 0; c; n++) {
        const sc2v_node *cx = sc2v_next(t, c), *cy = sc2v_next(t, cx);
        if (!cy)
            break;
        index = (int64_t)((uint64_t)index + (uint64_t)sc2v_int(t, c, 0)); /* hostile deltas wrap */
        if (n)
            put(x, ",", 1);
        put(x, "{\"unit_index\":", 14);
        put_int(x, index);
        put(x, ",\"x\":", 5);
        put_int(x, sc2v_int(t, cx, 0));
        put(x, ",\"y\":", 5);
        put_int(x, sc2v_int(t, cy, 0));
        put(x, "}", 1);
        c = sc2v_next(t, cy);
    }
    put(x, "]", 1);
}

static int64_t describe_event(export_ctx *x, int64_t id, const sc2v_tree *t, const sc2v_node *ev)
{
    switch (id) {
    case 0: return player_stats(x, t, ev);
    case 1: return unit_born_or_init(x, t, ev, true);
    case 2: return unit_died(x, t, ev);
    case 3:
        tag_field(x, "unit_tag", t, ev, 0);
        int_field(x, "control_player", field(t, ev, 2));
        int_field(x, "upkeep_player", field(t, ev, 3));
        return field(t, ev, 2);
    case 4:
        tag_field(x, "unit_tag", t, ev, 0);
        str_field(x, "unit_type", t, sc2v_field(t, ev, 2));
        return -1;
    case 5:
        int_field(x, "player", field(t, ev, 0));
        str_field(x, "upgrade", t, sc2v_field(t, ev, 1));
        int_field(x, "count", field(t, ev, 2));
        return field(t, ev, 0);
    case 6: return unit_born_or_init(x, t, ev, false);
    case 7: tag_field(x, "unit_tag", t, ev, 0); return -1;
    case 8: unit_positions(x, t, ev); return -1;
    case 9:
        int_field(x, "player", field(t, ev, 0));
        int_field(x, "type", field(t, ev, 1));
        opt_field(x, "user_id", t, sc2v_field(t, ev, 2));
        opt_field(x, "slot_id", t, sc2v_field(t, ev, 3));
        return field(t, ev, 0);
    default: int_field(x, "id", id); return -1;
    }
}

static int on_tracker(void *data, int64_t loop, int64_t id, const sc2v_tree *t, const sc2v_node *ev)
{
    export_ctx *x = data;
    recd_buf_reset(&x->fields);
    put(x, "{", 1);
    int64_t actor = describe_event(x, id, t, ev);
    put(x, "}", 1);
    if (x->oom)
        return -ENOMEM;
    const char *kind = sc2_tracker_kind(id);
    recd_replay_event e = {
        .source = "sc2replay",
        .t = (double)loop / SC2_LOOPS_PER_SECOND,
        .t_raw = loop,
        .actor = actor,
        .kind = kind ? kind : "tracker_unknown",
        .fields = (const char *)x->fields.data,
        .fields_len = x->fields.len,
    };
    return x->on_event(x->data, &e);
}

int sc2_tracker_export(const uint8_t *data, size_t len, recd_replay_event_fn on_event, void *ctx,
                       char *err, size_t errlen)
{
    export_ctx x = {on_event, ctx, {0}, 0};
    int rc = sc2_tracker_walk(data, len, on_tracker, &x, err, errlen);
    recd_buf_free(&x.fields);
    return rc;
}
