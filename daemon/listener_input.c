/* Decoded messages from any listener: dispatch to the sessions, input byte accounting, and the
 * metric label of a refused input. */
#include <errno.h>
#include <string.h>

#include "listener.h"
#include "server.h"

static recd_m_format metric_format(recd_msg_format f)
{
    switch (f) {
    case RECD_MSG_FMT_SAMP_VEHICLE: return RECD_M_SAMP_VEHICLE;
    case RECD_MSG_FMT_RECAP: return RECD_M_RECAP;
    default: return RECD_M_SAMP_ONFOOT;
    }
}

void listener_account_end(session_input *in, uint64_t end_offset)
{
    if (!in->acct_open)
        return;
    in->acct_open = false;
    if (end_offset < in->acct_offset)
        return;
    uint64_t bytes = end_offset - in->acct_offset;
    recd_daemon_metrics *m = &in->srv->metrics;
    if (in->acct_sample) {
        recd_metrics_sample(m, in->transport, metric_format(in->acct_format), bytes);
    } else {
        size_t series = recd_metric_series2(m->bytes_in_total, (size_t)in->transport,
                                            (size_t)metric_format(in->acct_format));
        recd_metric_add(m->bytes_in_total, series, bytes);
    }
}

int listener_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen)
{
    session_input *in = ctx;
    listener_account_end(in, meta->offset);
    in->accepted = false;
    in->lookup_missed = false; /* a miss that still decoded (a close) is not an error */
    int rc = session_dispatch(in, m, meta, err, errlen);
    if (rc == 0 && in->accepted) {
        in->acct_open = true;
        in->acct_offset = meta->offset;
        in->acct_sample = m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT;
    }
    return rc;
}

recd_m_reason listener_error_reason(const session_input *in, int rc, const char *err)
{
    if (in->reason_set)
        return in->reason;
    if (in->lookup_missed || strstr(err, "unknown session"))
        return RECD_M_UNKNOWN_SESSION;
    switch (rc) {
    case -EPROTO: return RECD_M_FRAMING;
    case -EMSGSIZE: return RECD_M_TOO_LARGE;
    case -EBADMSG:
        if (strstr(err, "invalid JSON") || strstr(err, "invalid UTF-8"))
            return RECD_M_SYNTAX;
        return RECD_M_SCHEMA;
    default: return RECD_M_OTHER;
    }
}
