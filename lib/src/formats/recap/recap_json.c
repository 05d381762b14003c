/* SPDX-License-Identifier: MIT */
/* Recap's JSON lines hooks (recd_recap__json): the open's "recap" header, a state (its "tick"
 * and fields) and an event, through the Recap JSON codec (recap_json_read.c, recap_json_write.c),
 * with the codec's error text placed under the message's type. */
#include <errno.h>

#include "formats/recap/recap_json_fast.h"
#include "formats/recap/recap_msg.h"
#include "message/json/msg_json_formats.h"
#include "base/json_text.h"
#include "base/why.h"

static const char *const common_keys[] = {MSG_JSON_COMMON_KEYS, NULL};

/* "TYPE.FIELD: ..." or "TYPE: ..." for the codec's "FIELD: ..." or ": ...". */
static int recap_error(int rc, const char *type, const char *why, char *err, size_t errlen)
{
    if (rc == -EBADMSG)
        recd_why(err, errlen, "%s%s%s", type, why[0] == ':' ? "" : ".", why);
    return rc;
}

static int recap_open_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    json_t *recap = json_object_get(root, "recap");
    if (!recap) {
        recd_why(err, errlen, "open: missing key \"recap\" (format recap)");
        return -EBADMSG;
    }
    char why[200];
    int rc = msg_recap_open_from_json(recap, &out->open.recap, why, sizeof why);
    return recap_error(rc, "open.recap", why, err, errlen);
}

static int recap_open_write(const recd_msg *m, recd_buf *out)
{
    if (!m->open.recap)
        return -EINVAL;
    int rc = json_text_put_key(out, "recap");
    return rc == 0 ? msg_recap_open_to_json(m->open.recap, out) : rc;
}

static int recap_state_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_RECAP;
    char why[200];
    int rc = msg_recap_state_from_json(root, common_keys, &out->recap_state, why, sizeof why);
    return recap_error(rc, "state", why, err, errlen);
}

static int recap_state_write(const recd_msg *m, recd_buf *out)
{
    return m->recap_state ? msg_recap_state_to_json(m->recap_state, out) : -EINVAL;
}

static int recap_event_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_RECAP;
    char why[200];
    int rc = msg_recap_event_from_json(root, common_keys, &out->recap_event, why, sizeof why);
    return recap_error(rc, "event", why, err, errlen);
}

static int recap_event_write(const recd_msg *m, bool with_tick, recd_buf *out)
{
    return m->recap_event ? msg_recap_event_to_json(m->recap_event, with_tick, out) : -EINVAL;
}

/* Without a session format a state with "tick" is a Recap state. */
static bool recap_state_sniff(const json_t *root)
{
    return json_object_get(root, "tick") != NULL;
}

const struct recd_format_json recd_recap__json = {
    .open_key = "recap",
    .open_read = recap_open_read,
    .open_write = recap_open_write,
    .state_read = recap_state_read,
    .state_write = recap_state_write,
    .event_read = recap_event_read,
    .event_write = recap_event_write,
    .state_sniff = recap_state_sniff,
    .fast_state = recap_json_fast_state,
};
