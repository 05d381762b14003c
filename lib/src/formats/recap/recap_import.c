/* SPDX-License-Identifier: MIT */
/* The Recap importer: feeds the Recap encoder a tick at a time (a tick's state and events are
 * grouped, flush messages end gzip members where they did) into a buffer, whose header gets the
 * frame count and end time the messages left open before it goes to the sink. */
#include "formats/recap/recap_format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format_import.h"
#include "base/why.h"
#include "formats/recap/recap_msg.h"
#include "recd/recap.h"

typedef struct recap_import {
    recd_recap_encoder *enc;
    recd_buf file; /* the whole output: the header is patched before it goes to the sink */
    recd_msg_recap_open *open;
    bool have_pending;
    uint64_t pending_tick;
    recd_msg_recap_state *state; /* of the pending tick, or NULL */
    recd_msg_recap_event **events;
    size_t nevents, cap;
    bool fed;
    uint64_t last_fed;
    bool has_close_end;
    int64_t close_end;
    bool started;        /* first_tick is known */
    uint64_t first_tick; /* the message tick that becomes file tick 0 */
} recap_import;

static void recap_pending_clear(recap_import *ri)
{
    msg_recap_state_free(ri->state);
    ri->state = NULL;
    for (size_t i = 0; i < ri->nevents; i++)
        msg_recap_event_free(ri->events[i]);
    ri->nevents = 0;
    ri->have_pending = false;
}

static int buf_write(void *ctx, const void *data, size_t len) { return recd_buf_append(ctx, data, len); }

static int recap_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    if (!m->open.recap) {
        recd_why(err, errlen, "open: missing key \"recap\" (format recap)");
        return -EBADMSG;
    }
    recap_import *ri = calloc(1, sizeof *ri);
    if (!ri)
        return -ENOMEM;
    im->impl = ri;
    recd_recap_header h = m->open.recap->header;
    if (!m->open.recap->has_start_time)
        h.start_ms = m->open.has_start_time ? m->open.start_time_ms : 0;
    ri->open = msg_recap_open_clone(&h);
    if (!ri->open)
        return -ENOMEM;
    ri->open->has_end_time = m->open.recap->has_end_time;
    ri->open->has_frame_count = m->open.recap->has_frame_count;
    recd_recap_encoder_options opt;
    recd_recap_encoder_options_from_header(&h, &opt);
    recd_sink sink = {buf_write, &ri->file};
    int rc = recd_recap_encoder_new(&ri->enc, &h, &opt, sink);
    if (rc < 0) {
        recd_why(err, errlen, "open.recap: the header cannot be encoded: %s%s", recd_strerror(rc),
                 rc == -EMSGSIZE ? " (header over 65535 bytes)" : "");
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    return 0;
}

static int recap_feed(recd_importer *im, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    if (!ri->have_pending)
        return 0;
    if (!ri->fed && !ri->state) {
        recd_why(err, errlen, "tick %llu: the first tick needs a state",
                 (unsigned long long)ri->pending_tick);
        return -EBADMSG;
    }
    recd_recap_event *evs = NULL;
    if (ri->nevents) {
        evs = malloc(ri->nevents * sizeof *evs);
        if (!evs)
            return -ENOMEM;
        for (size_t i = 0; i < ri->nevents; i++)
            evs[i] = ri->events[i]->event;
    }
    int rc = recd_recap_encoder_tick(ri->enc, ri->pending_tick, ri->state ? &ri->state->state : NULL,
                                     evs, ri->nevents);
    free(evs);
    if (rc < 0) {
        recd_why(err, errlen, "tick %llu: the Recap encoder refused it: %s",
                 (unsigned long long)ri->pending_tick, recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    ri->fed = true;
    ri->last_fed = ri->pending_tick;
    recap_pending_clear(ri);
    return 0;
}

/* The open's frame_count, when it promises one (0 means "not finalized" and promises nothing). */
static uint32_t recap_declared_frames(const recap_import *ri)
{
    return ri->open->has_frame_count ? ri->open->header.frame_count : 0;
}

/* Refuses, at the message that does it, a tick count running past the open's frame_count:
 * `frames` file ticks would be recorded. */
static int recap_check_frames(const recap_import *ri, const char *what, uint64_t tick,
                              uint64_t frames, char *err, size_t errlen)
{
    uint32_t declared = recap_declared_frames(ri);
    if (declared == 0 || frames <= declared)
        return 0;
    recd_why(err, errlen, "%s: %llu makes %llu ticks, but open.recap.frame_count is %u", what,
             (unsigned long long)tick, (unsigned long long)frames, declared);
    return -EBADMSG;
}

/* Moves the pending tick on to `tick`, feeding the previous one when the tick changes. field:
 * the message's tick field, for errors ("state.tick"). */
static int recap_at_tick(recd_importer *im, const char *field, uint64_t tick, char *err,
                         size_t errlen)
{
    recap_import *ri = im->impl;
    if (ri->have_pending && tick == ri->pending_tick)
        return 0;
    uint64_t last = ri->have_pending ? ri->pending_tick : ri->last_fed;
    if ((ri->have_pending || ri->fed) && tick < last + (ri->have_pending ? 0 : 1)) {
        recd_why(err, errlen, "%s: %llu, but tick %llu came before (ticks only move forward)", field,
                 (unsigned long long)tick, (unsigned long long)last);
        return -EBADMSG;
    }
    if (!ri->started) {
        ri->started = true;
        ri->first_tick = tick;
    }
    int rc = recap_check_frames(ri, field, tick, tick - ri->first_tick + 1, err, errlen);
    if (rc == 0)
        rc = recap_feed(im, err, errlen);
    if (rc < 0)
        return rc;
    ri->have_pending = true;
    ri->pending_tick = tick;
    return 0;
}

static int recap_state(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    const recd_msg_recap_state *s = m->recap_state;
    int rc = recap_at_tick(im, "state.tick", s->tick, err, errlen);
    if (rc < 0)
        return rc;
    if (ri->state) {
        recd_why(err, errlen, "state.tick: a second state for tick %llu", (unsigned long long)s->tick);
        return -EBADMSG;
    }
    ri->state = msg_recap_state_clone(s->tick, &s->state);
    if (!ri->state)
        return -ENOMEM;
    im->states++;
    return 0;
}

static int recap_event(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    const recd_msg_recap_event *e = m->recap_event;
    int rc = recd_recap_event_check(&e->event);
    if (rc < 0) {
        recd_why(err, errlen, "event: invalid %s action: %s", recd_recap_tag_info_get(e->event.tag)
                 ? recd_recap_tag_info_get(e->event.tag)->name : "?", recd_strerror(rc));
        return -EBADMSG;
    }
    if ((rc = recap_at_tick(im, "event.tick", e->tick, err, errlen)) < 0)
        return rc;
    if (ri->nevents == ri->cap) {
        size_t cap = ri->cap ? ri->cap * 2 : 8;
        recd_msg_recap_event **p = realloc(ri->events, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        ri->events = p;
        ri->cap = cap;
    }
    ri->events[ri->nevents] = msg_recap_event_clone(e->tick, &e->event);
    if (!ri->events[ri->nevents])
        return -ENOMEM;
    ri->nevents++;
    im->events++;
    return 0;
}

static int recap_flush(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    int rc = recap_feed(im, err, errlen);
    if (rc < 0)
        return rc;
    if (!ri->fed) {
        recd_why(err, errlen, "flush: before the first state");
        return -EBADMSG;
    }
    if (m->flush.has_end_tick) {
        if (m->flush.end_tick <= ri->last_fed) {
            recd_why(err, errlen, "flush.end_tick: %llu must be after the last tick %llu",
                     (unsigned long long)m->flush.end_tick, (unsigned long long)ri->last_fed);
            return -EBADMSG;
        }
        rc = recap_check_frames(ri, "flush.end_tick", m->flush.end_tick,
                                m->flush.end_tick - ri->first_tick, err, errlen);
        if (rc < 0)
            return rc;
        rc = recd_recap_encoder_flush_at(ri->enc, m->flush.end_tick);
        if (rc == 0)
            ri->last_fed = m->flush.end_tick - 1; /* the skipped ticks are now recorded */
    } else {
        rc = recd_recap_encoder_flush(ri->enc);
    }
    if (rc < 0) {
        recd_why(err, errlen, "flush: %s", recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    im->flushes++;
    return 0;
}

static int recap_finish(recd_importer *im, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    int rc = recap_feed(im, err, errlen);
    if (rc < 0)
        return rc;
    recd_recap_finish_info info = {0};
    rc = recd_recap_encoder_finish(ri->enc, &info);
    if (rc < 0) {
        recd_why(err, errlen, "finishing the Recap file: %s", recd_strerror(rc));
        return rc;
    }
    const recd_recap_header *h = &ri->open->header;
    uint32_t declared = recap_declared_frames(ri);
    if (declared != 0 && declared != info.frame_count) {
        /* Writing it would give a file that verify rejects (frame-count-mismatch). */
        recd_why(err, errlen, "open.recap.frame_count: %u, but the messages hold %llu ticks (leave "
                 "frame_count out to have it counted)", declared,
                 (unsigned long long)info.frame_count);
        return -EBADMSG;
    }
    if (info.frame_count > UINT32_MAX) {
        recd_why(err, errlen, "%llu ticks do not fit the header's frame count",
                 (unsigned long long)info.frame_count);
        return -EBADMSG;
    }
    uint32_t frames = ri->open->has_frame_count ? h->frame_count : (uint32_t)info.frame_count;
    int64_t end = ri->has_close_end ? ri->close_end
                  : ri->open->has_end_time ? h->end_ms
                                           : info.end_ms;
    /* The encoder wrote the header as given; patch only what the messages left open. */
    if (frames != h->frame_count || end != h->end_ms)
        rc = recd_recap_header_patch(ri->file.data, ri->file.len, frames, end);
    if (rc < 0) {
        recd_why(err, errlen, "patching the Recap header: %s", recd_strerror(rc));
        return rc;
    }
    rc = im->sink.write(im->sink.ctx, ri->file.data, ri->file.len);
    if (rc < 0)
        recd_why(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

static void recap_close(recd_importer *im, const recd_msg *m)
{
    recap_import *ri = im->impl;
    if (m->close.has_end_time) {
        ri->has_close_end = true;
        ri->close_end = m->close.end_time_ms;
    }
}

static void recap_release(recd_importer *im)
{
    recap_import *ri = im->impl;
    recap_pending_clear(ri);
    free(ri->events);
    if (ri->enc)
        recd_recap_encoder_free(ri->enc);
    recd_buf_free(&ri->file);
    msg_recap_open_free(ri->open);
}

const struct recd_format_importer recd_recap__importer = {
    .formats = {RECD_MSG_FMT_RECAP},
    .open = recap_open,
    .state = recap_state,
    .event = recap_event,
    .flush = recap_flush,
    .close = recap_close,
    .finish = recap_finish,
    .release = recap_release,
};
