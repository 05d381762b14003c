/* SPDX-License-Identifier: MIT */
/* The common event stream of foreign replays as text: one JSON line or one CSV row per event, the
 * shape every foreign reader exports (recd/replay.h). */
#include "recd/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "message/csv/msg_csv.h"
#include "base/text.h"

/* Cheap shape check: the readers build fields themselves, so a brace pair is the contract. */
static bool looks_like_object(const char *s, size_t len)
{
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\n'))
        len--;
    while (len && *s == ' ')
        s++, len--;
    return len >= 2 && s[0] == '{' && s[len - 1] == '}';
}

static int check_event(const recd_replay_event *ev)
{
    if (!ev || !ev->source || !ev->kind || !ev->fields || !looks_like_object(ev->fields, ev->fields_len))
        return -EINVAL;
    return 0;
}

int recd_replay_event_jsonl(const recd_replay_event *ev, recd_buf *out)
{
    int rc = check_event(ev);
    if (rc < 0)
        return rc;
    if (!isfinite(ev->t))
        return -EINVAL;
    size_t start = out->len;
    if ((rc = recd_buf_append(out, "{\"source\":", 10)) < 0 ||
        (rc = text_put_json_string(out, ev->source, strlen(ev->source))) < 0 ||
        (rc = recd_buf_append(out, ",\"t\":", 5)) < 0 || (rc = text_put_f64(out, ev->t)) < 0 ||
        (rc = recd_buf_append(out, ",\"t_raw\":", 9)) < 0 ||
        (rc = text_put_i64(out, ev->t_raw)) < 0 ||
        (rc = recd_buf_append(out, ",\"actor\":", 9)) < 0 ||
        (rc = text_put_i64(out, ev->actor)) < 0 ||
        (rc = recd_buf_append(out, ",\"kind\":", 8)) < 0 ||
        (rc = text_put_json_string(out, ev->kind, strlen(ev->kind))) < 0 ||
        (rc = recd_buf_append(out, ",\"fields\":", 10)) < 0 ||
        (rc = recd_buf_append(out, ev->fields, ev->fields_len)) < 0 ||
        (rc = recd_buf_append(out, "}\n", 2)) < 0) {
        out->len = start;
        return rc;
    }
    return 0;
}

int recd_replay_event_csv_header(recd_buf *out)
{
    return text_puts(out, "source,t,t_raw,actor,kind,fields\n");
}

int recd_replay_event_csv(const recd_replay_event *ev, recd_buf *out)
{
    int rc = check_event(ev);
    char t[40], t_raw[24], actor[24];
    if (rc < 0 || text_format_f64(ev->t, t) < 0)
        return rc < 0 ? rc : -EINVAL;
    snprintf(t_raw, sizeof t_raw, "%" PRId64, ev->t_raw);
    snprintf(actor, sizeof actor, "%" PRId64, ev->actor);
    if ((rc = msg_csv_put_cell(out, ev->source, strlen(ev->source), true)) < 0 ||
        (rc = msg_csv_put_cell(out, t, strlen(t), false)) < 0 ||
        (rc = msg_csv_put_cell(out, t_raw, strlen(t_raw), false)) < 0 ||
        (rc = msg_csv_put_cell(out, actor, strlen(actor), false)) < 0 ||
        (rc = msg_csv_put_cell(out, ev->kind, strlen(ev->kind), false)) < 0 ||
        (rc = msg_csv_put_cell(out, ev->fields, ev->fields_len, false)) < 0)
        return rc;
    return text_puts(out, "\n");
}
