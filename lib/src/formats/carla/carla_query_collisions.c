/* SPDX-License-Identifier: MIT */
/* CARLA's show_recorder_collisions from the file, quirks included (docs/formats/carla.md 7.2). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_query.h"
#include "formats/carla/carla_schema.h"

/* CARLA's category letter: by EventAdd type {o v w t h a}, so a traffic sign (4) counts as 'h'
 * and a sensor (5) as 'a'; an unknown or non-actor id is 'o'. */
static char category(actor_map *m, uint32_t id, bool hero)
{
    static const char by_type[] = {'o', 'v', 'w', 't', 'h', 'a'};
    if (hero)
        return 'h';
    actor_name *a = id == 0xFFFFFFFFu ? NULL : carla_actor_find(m, id);
    return a && a->type < 6 ? by_type[a->type] : 'o';
}

static bool matches(char want, char got)
{
    return want == 'a' || want == got;
}

typedef struct pair {
    uint32_t a, b;
} pair;

static bool pair_in(const pair *set, size_t n, pair p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].a == p.a && set[i].b == p.b)
            return true;
    return false;
}

int recd_carla_collisions(const uint8_t *buf, size_t len, char cat1, char cat2, bool json,
                          recd_buf *out, char *err, size_t errlen)
{
    if (!strchr("hvwtoa", cat1) || !strchr("hvwtoa", cat2) || !cat1 || !cat2) {
        snprintf(err, errlen, "categories are h (hero), v (vehicle), w (walker), t (traffic light), "
                 "o (other) or a (any)");
        return -EINVAL;
    }
    carla_reader r;
    int rc = carla_query_open(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc;
    rc = json ? carla_put_json_header(&r, out) : carla_put_query_header(&r, out);
    if (rc == 0)
        rc = json ? recd_buf_printf(out, ",\"collisions\":[")
                  : recd_buf_printf(out, "%8s %6s %6s %-35s %6s %-35s\n", "Time", "Types", "Id", "Actor 1",
                               "Id", "Actor 2");
    actor_map m = {0};
    pair *prev = NULL, *cur = NULL;
    size_t nprev = 0, ncur = 0, capcur = 0, capprev = 0;
    uint32_t last_add = 0;
    bool have_add = false, any_row = false;
    recd_carla_frame f;
    size_t at;
    uint64_t last_id = 0;
    double last_elapsed = 0;
    while (rc == 0 && carla_reader_next(&r, &f, &at) == 1) {
        last_id = f.id;
        last_elapsed = f.elapsed;
        ncur = 0;
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw)
                continue;
            size_t off = 0;
            for (uint32_t k = 0; k < p->count && rc == 0 && carla_is_event(p); k++) {
                const uint8_t *q = p->data + off;
                off += carla_rec_size(p->kind, r.width, q, p->len - off);
                if (p->kind == RECD_CARLA_EVENT_ADD) {
                    actor_name a = carla_add_record(q, r.width);
                    rc = carla_actor_set(&m, &a);
                    last_add = a.id;
                    have_add = true;
                } else if (p->kind == RECD_CARLA_EVENT_DEL) {
                    if (have_add) /* CARLA's quirk: it forgets the last added actor */
                        carla_actor_erase(&m, last_add);
                } else if (p->kind == RECD_CARLA_COLLISION) {
                    pair pr = {ld_le32(q + 4), ld_le32(q + 8)};
                    pair *grown = recd__array_room(cur, &capcur, ncur, sizeof *cur, 16);
                    if (!grown) {
                        rc = -ENOMEM;
                        break;
                    }
                    cur = grown;
                    cur[ncur++] = pr;
                    char t1 = category(&m, pr.a, q[12]), t2 = category(&m, pr.b, q[13]);
                    bool show = (matches(cat1, t1) && matches(cat2, t2)) ||
                                (matches(cat1, t2) && matches(cat2, t1));
                    if (!show || pair_in(prev, nprev, pr))
                        continue;
                    if (json) {
                        rc = recd_buf_printf(out, "%s{\"frame\":%" PRIu64 ",\"time\":", any_row ? "," : "", f.id);
                        if (rc == 0)
                            rc = carla_put_f64(out, f.elapsed);
                        if (rc == 0)
                            rc = recd_buf_printf(out, ",\"types\":\"%c%c\",\"id1\":%" PRIu32 ",\"actor1\":", t1, t2, pr.a);
                        if (rc == 0)
                            rc = carla_put_name_json(out, &m, pr.a);
                        if (rc == 0)
                            rc = recd_buf_printf(out, ",\"id2\":%" PRIu32 ",\"actor2\":", pr.b);
                        if (rc == 0)
                            rc = carla_put_name_json(out, &m, pr.b);
                        if (rc == 0)
                            rc = recd_buf_printf(out, "}");
                    } else {
                        rc = recd_buf_printf(out, "%8.0f   %c %c  %6" PRIu32 " ", f.elapsed, t1, t2, pr.a);
                        if (rc == 0)
                            rc = carla_put_name_cell(out, &m, pr.a);
                        if (rc == 0)
                            rc = recd_buf_printf(out, " %6" PRIu32 " ", pr.b);
                        if (rc == 0)
                            rc = carla_put_name_cell(out, &m, pr.b);
                        if (rc == 0)
                            rc = recd_buf_printf(out, "\n");
                    }
                    any_row = true;
                }
            }
        }
        pair *t = prev; /* this frame's contacts become the previous frame's */
        size_t tc = capprev;
        prev = cur;
        capprev = capcur;
        nprev = ncur;
        cur = t;
        capcur = tc;
    }
    if (rc == 0)
        rc = json ? recd_buf_printf(out, "],\"frames\":%" PRIu64 ",\"duration\":", last_id)
                  : recd_buf_printf(out, "\nFrames: %" PRIu64 "\n", last_id);
    if (rc == 0)
        rc = json ? carla_put_f64(out, last_elapsed)
                  : (any_row ? recd_buf_printf(out, "Duration: %.0f seconds\n", last_elapsed)
                             : recd_buf_printf(out, "Duration: %g seconds\n", last_elapsed));
    if (rc == 0 && json)
        rc = recd_buf_printf(out, "}\n");
    free(prev);
    free(cur);
    carla_actor_map_free(&m);
    carla_reader_free(&r);
    return rc;
}

