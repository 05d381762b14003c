/* SPDX-License-Identifier: MIT */
/* diff: where two recordings first differ. Both are read as messages and compared one by one
 * through their JSON text (floats print exactly, so equal text is equal bits); the first pair that
 * differs is listed field by field. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/why.h"
#include "edit/edit_internal.h"
#include "recd/buf_printf.h"

#define DIFF_MAX_LINES 200

typedef struct diff_out {
    recd_buf *buf;
    unsigned lines;
    int rc;
} diff_out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(diff_out *d, const char *fmt, ...)
{
    if (d->rc < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int rc = recd_buf_vprintf(d->buf, fmt, ap);
    va_end(ap);
    if (rc < 0)
        d->rc = rc;
}

static void value_text(const json_t *v, char *out, size_t n)
{
    if (!v) {
        snprintf(out, n, "(absent)");
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
    snprintf(out, n, "%s", s ? s : "?");
    free(s);
}

/* Lists the paths where a and b differ, depth first. */
static void diff_json(diff_out *d, const char *path, const json_t *a, const json_t *b)
{
    if (d->lines >= DIFF_MAX_LINES || (a && b && json_equal(a, b)))
        return;
    char sub[256];
    if (json_is_object(a) && json_is_object(b)) {
        const char *key;
        json_t *va;
        json_object_foreach((json_t *)a, key, va) {
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", key);
            diff_json(d, sub, va, json_object_get(b, key));
        }
        json_t *vb;
        json_object_foreach((json_t *)b, key, vb) {
            if (!json_object_get(a, key)) {
                snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", key);
                diff_json(d, sub, NULL, vb);
            }
        }
        return;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            diff_json(d, sub, json_array_get(a, i), json_array_get(b, i));
        }
        return;
    }
    char ta[200], tb[200];
    value_text(a, ta, sizeof ta);
    value_text(b, tb, sizeof tb);
    say(d, "  %s: %s vs %s\n", path[0] ? path : "(message)", ta, tb);
    d->lines++;
}

/* "block 12 (t 1200 ms)", "tick 40 state", "frame 3 (t 100 ms)", "frame 3 event", "header". */
static void where(const recd_edit_msgs *l, size_t i, uint64_t state_index, char *out, size_t n)
{
    const recd_msg *m = &l->v[i];
    const struct recd_format_edit *e = edit_hooks(l);
    int64_t t = e->time_of(m);
    if (m->type == RECD_MSG_OPEN)
        snprintf(out, n, "header");
    else if (m->type == RECD_MSG_CLOSE)
        snprintf(out, n, "end");
    else if (e->place == RECD_EDIT_PLACE_BLOCK)
        snprintf(out, n, "%s %" PRIu64 " (t %lld %s)", e->unit_name, state_index, (long long)t,
                 e->time_unit);
    else if (e->place == RECD_EDIT_PLACE_FRAME && m->type == RECD_MSG_STATE)
        snprintf(out, n, "%s %" PRIu64 " (t %lld %s)", e->unit_name, state_index + 1, (long long)t,
                 e->time_unit);
    else if (e->place == RECD_EDIT_PLACE_FRAME) /* an event belongs to the frame before it */
        snprintf(out, n, "%s %" PRIu64 " %s", e->unit_name, state_index,
                 recd_msg_type_name(m->type));
    else if (t >= 0)
        snprintf(out, n, "%s %lld %s", e->unit_name, (long long)t, recd_msg_type_name(m->type));
    else
        snprintf(out, n, "%s", recd_msg_type_name(m->type));
}

static int compare(const recd_edit_msgs *a, const recd_edit_msgs *b, diff_out *d,
                   edit_progress *progress)
{
    if (a->format != b->format) {
        say(d, "format: %s vs %s\n", a->format->name, b->format->name);
        return 1;
    }
    recd_buf ja = {0}, jb = {0};
    uint64_t states = 0;
    int result = 0;
    size_t i = 0, j = 0;
    for (;; i++, j++) {
        /* Member ends (flush) are how a file is packed, not what it holds. */
        while (i < a->n && a->v[i].type == RECD_MSG_FLUSH)
            i++;
        while (j < b->n && b->v[j].type == RECD_MSG_FLUSH)
            j++;
        if (i >= a->n || j >= b->n || result != 0)
            break;
        bool a_ends = a->v[i].type == RECD_MSG_CLOSE, b_ends = b->v[j].type == RECD_MSG_CLOSE;
        if (a_ends != b_ends) {
            char w[96];
            where(a_ends ? b : a, a_ends ? j : i, states, w, sizeof w);
            say(d, "%s ends first: %s goes on from %s\n", a_ends ? "A" : "B", a_ends ? "B" : "A",
                w);
            result = 1;
            break;
        }
        edit_progress_step(progress);
        recd_buf_reset(&ja);
        recd_buf_reset(&jb);
        int rc = recd_msg_to_json(&a->v[i], &ja);
        if (rc == 0)
            rc = recd_msg_to_json(&b->v[j], &jb);
        if (rc < 0) {
            result = rc;
            break;
        }
        if (ja.len != jb.len || memcmp(ja.data, jb.data, ja.len) != 0) {
            char wa[96], wb[96];
            where(a, i, states, wa, sizeof wa);
            where(b, j, states, wb, sizeof wb);
            if (strcmp(wa, wb) == 0)
                say(d, "first difference at %s:\n", wa);
            else
                say(d, "first difference at %s in A, %s in B:\n", wa, wb);
            json_t *oa = json_loadb((const char *)ja.data, ja.len, 0, NULL);
            json_t *ob = json_loadb((const char *)jb.data, jb.len, 0, NULL);
            diff_json(d, "", oa, ob);
            json_decref(oa);
            json_decref(ob);
            result = 1;
        }
        if (a->v[i].type == RECD_MSG_STATE)
            states++;
    }
    if (result == 0 && (i < a->n || j < b->n)) {
        bool a_longer = i < a->n;
        const recd_edit_msgs *longer = a_longer ? a : b;
        size_t at = a_longer ? i : j;
        char w[96];
        where(longer, at, states, w, sizeof w);
        say(d, "%s ends first: %s goes on from %s (%zu more message%s)\n", a_longer ? "B" : "A",
            a_longer ? "A" : "B", w, longer->n - at, longer->n - at == 1 ? "" : "s");
        result = 1;
    }
    recd_buf_free(&ja);
    recd_buf_free(&jb);
    return d->rc < 0 ? d->rc : result;
}

/* Drops what says only how a file is packed (the format's clear_packing), before comparing. */
static void clear_packing(recd_edit_msgs *l)
{
    void (*clear)(recd_msg *) = edit_hooks(l)->clear_packing;
    if (!clear)
        return;
    for (size_t i = 0; i < l->n; i++)
        clear(&l->v[i]);
}

int recd_edit_diff(recd_edit_input a, recd_edit_input b, recd_buf *out,
                   const recd_progress *progress, char *err, size_t errlen)
{
    recd_edit_input both[2] = {a, b};
    edit_progress p;
    edit_progress_begin(&p, progress, both, 2, 2);
    recd_edit_msgs la, lb;
    char why[200] = "";
    int rc = edit_load(a, &la, &p, why, sizeof why);
    if (rc < 0) {
        recd_why(err, errlen, "A: %s", why);
        return rc;
    }
    rc = edit_load(b, &lb, &p, why, sizeof why);
    if (rc < 0) {
        recd_why(err, errlen, "B: %s", why);
        recd_edit__msgs_free(&la);
        return rc;
    }
    edit_progress_loaded(&p, la.n > lb.n ? la.n : lb.n); /* at most: it stops at a difference */
    clear_packing(&la);
    clear_packing(&lb);
    diff_out d = {out, 0, 0};
    rc = compare(&la, &lb, &d, &p);
    recd_edit__msgs_free(&la);
    recd_edit__msgs_free(&lb);
    edit_progress_end(&p, rc);
    return rc;
}
