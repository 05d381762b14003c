/* SPDX-License-Identifier: MIT */
/* A session's buffering and parts (see session.h): accounting of its unwritten bytes, its batch
 * through the writer's reserve, naming and starting parts from the path template, rotation by
 * size and duration, and ending a part. Used by the format modules and the registry. */
#include "session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/path_template.h"
#include "support/clock.h"
#include "support/instance_name.h"
#include "support/log.h"
#include "support/peer_name.h"

int session_refuse(session_input *in, recd_m_reason reason, char *why, size_t whylen,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    in->reason_set = true;
    in->reason = reason;
    return -EBADMSG;
}

static void count_by(recd_session *s, size_t slot, uint64_t n)
{
    if (!s->drops_by)
        s->drops_by = calloc(SESSION_DROP_SLOTS, sizeof *s->drops_by);
    if (s->drops_by) /* out of memory: the metrics and the total still count it */
        s->drops_by[slot] += n;
}

void session_count_refusal(recd_session *s, recd_m_reason reason)
{
    count_by(s, (size_t)reason, 1);
}

void session_count_drop(recd_session *s, recd_m_drop reason, uint64_t samples)
{
    count_by(s, (size_t)RECD_M_REASONS + (size_t)reason, samples);
}

const char *session_input_peer(session_input *in)
{
    if (!in->peer)
        in->peer = recd_peer_name(in->peer_addr, "udp ", in->peer_buf, sizeof in->peer_buf);
    return in->peer;
}

/* ---- buffering ------------------------------------------------------------------------------- */

void session_account(recd_session *s, int64_t delta)
{
    if (delta < 0 && (uint64_t)-delta > s->buffered)
        delta = -(int64_t)s->buffered;
    s->buffered += (uint64_t)delta;
    s->env->buffered += (uint64_t)delta; /* the gauge is set from this at each scrape */
    if (s->peer)
        s->peer->bytes += (uint64_t)delta;
}

const char *session_hold_over(const recd_session *s, uint64_t bytes)
{
    const session_env *env = s->env;
    if (s->held + bytes > env->cfg->limits.session_state)
        return "limits.session_state";
    uint64_t process_bound = env->cfg->limits.process_buffer / 2;
    if (env->held + bytes > process_bound)
        return "half of limits.process_buffer";
    /* One peer may hold half of that, so that its sessions cannot take all of it from others. */
    if (s->peer && s->peer->held + bytes > process_bound / 2)
        return "its peer's share, a quarter of limits.process_buffer";
    return NULL;
}

void session_hold(recd_session *s, uint64_t bytes)
{
    s->held += bytes;
    s->env->held += bytes;
    if (s->peer)
        s->peer->held += bytes;
}

void session_release(recd_session *s, uint64_t bytes)
{
    if (bytes > s->held)
        bytes = s->held;
    s->held -= bytes;
    s->env->held -= bytes;
    if (s->peer)
        s->peer->held -= bytes;
}

void session_note_pending(recd_session *s, uint64_t now_ms)
{
    if (!s->pending_since_ms)
        s->pending_since_ms = now_ms ? now_ms : 1;
}

uint8_t *session_reserve(recd_session *s, size_t len)
{
    if (!s->part)
        return NULL;
    uint8_t *at = writer_reserve(s->env->writer, &s->queue, s->part, len);
    if (!at)
        return NULL;
    s->part_pending += len;
    session_queued(s, len);
    session_note_pending(s, session_now_ms(s));
    return at;
}

int session_put(recd_session *s, const void *data, size_t len)
{
    if (!s->part)
        return -EINVAL;
    if (len == 0)
        return 0;
    uint8_t *at = session_reserve(s, len);
    if (!at)
        return -ENOMEM;
    memcpy(at, data, len);
    return 0;
}

/* ---- parts ----------------------------------------------------------------------------------- */

int session_start_part(recd_session *s, int64_t start_epoch_ms, int gzip_level)
{
    const recd_config *cfg = s->env->cfg;
    recd_path_vars v = {recd_msg_format_name(s->format), recd_msg_format_ext(s->format), s->key,
                        start_epoch_ms, s->part_no, instance_name(cfg)};
    char rel[RECD_PATH_MAX];
    int rc = recd_path_render(&cfg->output.path_template, &v, rel, sizeof rel);
    if (rc == -ERANGE) { /* a start time strftime cannot show: name the part by arrival */
        v.start_ms = recd_epoch_ms();
        rc = recd_path_render(&cfg->output.path_template, &v, rel, sizeof rel);
    }
    if (rc < 0) {
        log_err("session '%s': cannot name part %u from the path template: %s", s->key, s->part_no,
                recd_strerror(rc));
        return rc;
    }
    writer_part *p = writer_part_new(rel, gzip_level);
    if (!p)
        return -ENOMEM;
    writer_part_set_seek_format(p, recd_format_of_msg(s->format)); /* FILE.idx as it grows */
    s->part = p;
    s->part_no++;
    s->part_written = 0;
    s->part_pending = 0;
    memset(&s->tally, 0, sizeof s->tally);
    s->tally.on = cfg->output.part_manifest;
    s->tally.start_ms = recd_epoch_ms();
    return 0;
}

void session_tally_add(recd_session *s, uint64_t samples, bool has_seq, uint64_t first_seq,
                       uint64_t last_seq, bool has_time, uint64_t time_ms)
{
    part_tally *t = &s->tally;
    if (!t->on || !s->part || !samples)
        return;
    t->samples += samples;
    if (has_seq) {
        if (!t->has_seq)
            t->first_seq = first_seq;
        t->last_seq = last_seq;
        t->has_seq = true;
    }
    if (has_time) {
        if (!t->has_time)
            t->first_time_ms = time_ms;
        t->last_time_ms = time_ms;
        t->has_time = true;
    }
}

bool session_should_rotate(const recd_session *s, uint64_t add_bytes, uint64_t span_ms)
{
    const recd_config *cfg = s->env->cfg;
    if (!s->part)
        return false;
    if (cfg->rotation.max_size) {
        /* What the part will hold once everything queued for it is written: what was queued,
         * unless the format estimates it (ops->part_size: compressed later). */
        uint64_t size = s->ops->part_size ? s->ops->part_size(s)
                                          : s->part_written + s->part_pending;
        if (size && size + add_bytes > cfg->rotation.max_size)
            return true;
    }
    return cfg->rotation.max_duration_ms && span_ms >= cfg->rotation.max_duration_ms;
}

size_t session_name_split(const char *rel, size_t *dir_len)
{
    const char *slash = strrchr(rel, '/'), *dot = strrchr(rel, '.');
    if (dir_len)
        *dir_len = slash ? (size_t)(slash - rel) + 1 : 0;
    return dot && (!slash || dot > slash) ? (size_t)(dot - rel) : strlen(rel);
}

int session_rename_part(recd_session *s, const char *rel)
{
    if (!s->part || s->part->created)
        return -EINVAL;
    char *name = strdup(rel);
    if (!name)
        return -ENOMEM;
    free(s->part->name);
    s->part->name = name;
    return 0;
}

/* output.part_manifest: what the current part holds, as its manifest says it. */
static part_manifest_fields manifest_fields(const recd_session *s, bool in_progress)
{
    return (part_manifest_fields){
        .session = s->key,
        .instance = instance_name(s->env->cfg),
        .format = recd_msg_format_name(s->format),
        .identity = s->identity[0] ? s->identity : NULL,
        .part = s->part_no - 1, /* the number {part} rendered: part_no counts the part already */
        .tally = s->tally,
        .end_ms = recd_epoch_ms(),
        .in_progress = in_progress,
    };
}

/* The option was on when the part started and still is. */
static bool manifest_wanted(const recd_session *s)
{
    return s->part && s->tally.on && s->env->cfg->output.part_manifest;
}

/* The part about to end gets its manifest, stored once it is finalized. Without memory it goes
 * without one, logged and counted as a failure. */
static void attach_manifest(recd_session *s)
{
    part_manifest_fields f = manifest_fields(s, false);
    writer_sidecar *sc = part_manifest_sidecar(&f);
    if (!sc) {
        recd_metric_add(s->env->metrics->part_manifest_failures_total, 0, 1);
        log_warn("session '%s': out of memory: part %u gets no manifest", s->key, f.part);
        return;
    }
    writer_part_set_sidecar(s->part, sc);
}

void session_note_progress(recd_session *s)
{
    if (!manifest_wanted(s) || !s->tally.samples || !writer_open_bytes(&s->queue))
        return;
    part_manifest_fields f = manifest_fields(s, true);
    writer_sidecar *sc = part_manifest_sidecar(&f);
    if (!sc) { /* the next flush tries again; recovery would only find an older one */
        recd_metric_add(s->env->metrics->part_manifest_failures_total, 0, 1);
        return;
    }
    writer_set_progress(&s->queue, s->part, sc);
}

void session_end_part(recd_session *s, uint8_t *header, size_t header_len)
{
    if (!s->part)
        return;
    if (manifest_wanted(s))
        attach_manifest(s);
    int rc = writer_end_part(&s->queue, s->part, header, header_len);
    if (rc < 0) {
        free(header);
        log_crit("session '%s': out of memory ending a part; its .part file is left for recovery",
                 s->key);
    }
    s->part = NULL;
    s->part_written = s->part_pending = 0;
}

/* Ends the current part in the format's way (a last member, a header patch). */
