/* SPDX-License-Identifier: MIT */
/* Live synthetic sessions as messages for load generators (rectool send --synthetic, benchgen),
 * dispatched through the format's synth hook. */
#include "recd/synth.h"

#include <errno.h>
#include <stdlib.h>

#include "formats/format_synth.h"

struct recd_synth_session {
    const recd_format *format;
    void *gen;
};

uint32_t recd_synth_sample_ms(const recd_format *f)
{
    return f && f->synth ? f->synth->sample_ms : 0;
}

bool recd_synth_has_sessions(const recd_format *f)
{
    return f && f->synth && f->synth->session_new;
}

int recd_synth_session_new(const recd_synth_params *p, recd_synth_session **out)
{
    *out = NULL;
    if (recd_synth_params_check(p, NULL) < 0)
        return -EINVAL;
    const struct recd_format_synth *hook = p->format->synth;
    if (!hook->session_new)
        return -ENOTSUP;
    recd_synth_session *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->format = p->format;
    int rc = hook->session_new(p, &s->gen);
    if (rc < 0) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int recd_synth_session_open(recd_synth_session *s, recd_msg *m, int64_t start_ms)
{
    recd_msg_init(m, RECD_MSG_OPEN, s->format->msg_format);
    return s->format->synth->session_open(s->gen, m, start_ms);
}

int recd_synth_session_next(recd_synth_session *s, recd_synth_emit_fn emit, void *ctx)
{
    return s->format->synth->session_next(s->gen, emit, ctx);
}

void recd_synth_session_free(recd_synth_session *s)
{
    if (!s)
        return;
    s->format->synth->session_free(s->gen);
    free(s);
}
