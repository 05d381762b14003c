/* SPDX-License-Identifier: MIT */
/* Decoded messages from any listener: dispatch to the sessions, input accounting for the metrics
 * (tallied per message, published per read), and the metric label of a refused input. */
#include <stddef.h>

#include "listener.h"

void listener_account_end(session_input *in, uint64_t end_offset)
{
    if (!in->acct_open)
        return;
    in->acct_open = false;
    if (end_offset < in->acct_offset)
        return;
    size_t f = (size_t)recd_metrics_format_of(in->acct_format);
    in->tally->bytes[f] += end_offset - in->acct_offset;
    in->tally->samples[f] += in->acct_sample;
}

void listener_tally_publish(recd_daemon_metrics *metrics, recd_m_transport t, input_tally *tally)
{
    for (size_t f = 0; f < RECD_M_FORMATS; f++) {
        if (!tally->bytes[f] && !tally->samples[f])
            continue;
        recd_metrics_input(metrics, t, (recd_m_format)f, tally->samples[f], tally->bytes[f]);
        tally->samples[f] = tally->bytes[f] = 0;
    }
}

static void account_start(session_input *in, const recd_wire_meta *meta)
{
    listener_account_end(in, meta->offset);
    in->accepted = false;
    in->lookup_missed = false; /* a miss that still decoded (a close) is not an error */
}

/* An accepted message's bytes are counted when the next one starts (or the read ends). */
static void account_open(session_input *in, const recd_wire_meta *meta, bool sample)
{
    in->acct_open = true;
    in->acct_offset = meta->offset;
    in->acct_sample = sample;
}

/* A stream connection that opened a session is not idle while it holds it (limits.idle_timeout,
 * shedding at the connection limits). */
static void note_sessions_held(session_input *in, recd_msg_type type)
{
    recd_conn *c = (recd_conn *)(void *)((char *)in - offsetof(recd_conn, in));
    if (type == RECD_MSG_OPEN)
        c->sessions_held++;
    else if (type == RECD_MSG_CLOSE && c->sessions_held > 0)
        c->sessions_held--;
}

int listener_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen)
{
    session_input *in = ctx;
    account_start(in, meta);
    recd_msg_type type = m->type; /* m may be moved from */
    bool sample = type == RECD_MSG_STATE || type == RECD_MSG_EVENT;
    int rc = session_dispatch(in, m, meta, err, errlen);
    if (rc == 0 && in->accepted) {
        account_open(in, meta, sample);
        if (!in->datagram)
            note_sessions_held(in, type);
    }
    return rc;
}

int listener_on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                          char *err, size_t errlen)
{
    session_input *in = ctx;
    account_start(in, meta);
    int rc = session_dispatch_fast(in, st, meta, err, errlen);
    if (rc == 0 && in->accepted)
        account_open(in, meta, true);
    return rc;
}

recd_m_reason listener_error_reason(const session_input *in, int rc, recd_wire_reason noted)
{
    if (in->reason_set)
        return in->reason;
    if (in->lookup_missed)
        return RECD_M_UNKNOWN_SESSION;
    switch (recd_wire_reason_of(rc, noted)) {
    case RECD_WIRE_REASON_FRAMING: return RECD_M_FRAMING;
    case RECD_WIRE_REASON_TOO_LARGE: return RECD_M_TOO_LARGE;
    case RECD_WIRE_REASON_SYNTAX: return RECD_M_SYNTAX;
    case RECD_WIRE_REASON_SCHEMA: return RECD_M_SCHEMA;
    case RECD_WIRE_REASON_UNKNOWN_SESSION: return RECD_M_UNKNOWN_SESSION;
    default: return RECD_M_OTHER;
    }
}
