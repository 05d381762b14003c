/* recd_importer: writes the recording a message sequence describes. .rec goes through the
 * streaming recd_rec_writer; .recap through the Recap encoder, grouping a tick's state and events
 * and replaying flush points, into a buffer whose header is patched at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format_import.h"
#include "formats/rec/rec_format.h"
#include "formats/recap/recap_format.h"
#include "message/msg_fields.h"
#include "message/msg_recap.h"

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

typedef struct rec_import {
    recd_rec_writer w;
} rec_import;

void recd_importer_init(recd_importer *im, recd_msg_format expect, recd_sink sink)
{
    memset(im, 0, sizeof *im);
    im->expect = expect;
    im->sink = sink;
    im->rec_time_policy = RECD_REC_TIME_REJECT;
}

static void recap_pending_clear(recap_import *ri)
{
    msg_recap_state_free(ri->state);
    ri->state = NULL;
    for (size_t i = 0; i < ri->nevents; i++)
        msg_recap_event_free(ri->events[i]);
    ri->nevents = 0;
    ri->have_pending = false;
}

/* The importer of the session's format (set by its open message). */
static const struct recd_format_importer *importer_of(const recd_importer *im)
{
    const recd_format *f = recd_format_of_msg(im->format);
    return f ? f->importer : NULL;
}

void recd_importer_free(recd_importer *im)
{
    if (!im->impl)
        return;
    const struct recd_format_importer *ops = importer_of(im);
    if (ops && ops->release)
        ops->release(im);
    free(im->impl);
    im->impl = NULL;
}

/* ---- .rec ------------------------------------------------------------------------------------ */

static int rec_state(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    rec_import *ri = im->impl;
    if (m->format != im->format) {
        msg_err(err, errlen, "state: a %s block in a %s session", recd_msg_format_name(m->format),
                recd_msg_format_name(im->format));
        return -EBADMSG;
    }
    uint32_t prev = ri->w.last_time_ms;
    uint32_t t = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? m->onfoot.time_ms : m->vehicle.time_ms;
    int rc = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? recd_rec_writer_onfoot(&ri->w, &m->onfoot)
                                                   : recd_rec_writer_vehicle(&ri->w, &m->vehicle);
    if (rc == -ERANGE)
        msg_err(err, errlen, "state.t: %u is before the previous block's %u (.rec times never "
                "decrease)", t, prev);
    else if (rc == -EINVAL)
        msg_err(err, errlen, "state: a float is NaN or infinite, or weapon/additional_key overflow");
    else if (rc < 0)
        msg_err(err, errlen, "writing block: %s", recd_strerror(rc));
    if (rc == 0)
        im->states++;
    return rc < 0 ? (rc == -ERANGE || rc == -EINVAL ? -EBADMSG : rc) : 0;
}

static int rec_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec_import *ri = calloc(1, sizeof *ri);
    if (!ri)
        return -ENOMEM;
    im->impl = ri;
    recd_rec_type type = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_TYPE_ONFOOT
                                                               : RECD_REC_TYPE_VEHICLE;
    return recd_rec_writer_init(&ri->w, type, im->rec_time_policy, im->sink);
}

static int rec_finish(recd_importer *im, char *err, size_t errlen)
{
    rec_import *ri = im->impl;
    if (ri->w.header_written)
        return 0;
    int rc = recd_rec_writer_header(&ri->w); /* a file with no blocks is the header alone */
    if (rc < 0)
        msg_err(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

/* .rec blocks are written whole as they come: flush is ignored and there are no events. */
const struct recd_format_importer recd_rec__importer = {
    .open = rec_open,
    .state = rec_state,
    .finish = rec_finish,
};

/* ---- .recap ---------------------------------------------------------------------------------- */

static int buf_write(void *ctx, const void *data, size_t len) { return recd_buf_append(ctx, data, len); }

static int recap_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    if (!m->open.recap) {
        msg_err(err, errlen, "open: missing key \"recap\" (format recap)");
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
        msg_err(err, errlen, "open.recap: the header cannot be encoded: %s%s", recd_strerror(rc),
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
        msg_err(err, errlen, "tick %llu: the first tick needs a state",
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
        msg_err(err, errlen, "tick %llu: the Recap encoder refused it: %s",
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
    msg_err(err, errlen, "%s: %llu makes %llu ticks, but open.recap.frame_count is %u", what,
            (unsigned long long)tick, (unsigned long long)frames, declared);
    return -EBADMSG;
}

/* Moves the pending tick on to `tick`, feeding the previous one when the tick changes. */
static int recap_at_tick(recd_importer *im, const char *what, uint64_t tick, char *err, size_t errlen)
{
    recap_import *ri = im->impl;
    if (ri->have_pending && tick == ri->pending_tick)
        return 0;
    uint64_t last = ri->have_pending ? ri->pending_tick : ri->last_fed;
    if ((ri->have_pending || ri->fed) && tick < last + (ri->have_pending ? 0 : 1)) {
        msg_err(err, errlen, "%s.tick: %llu, but tick %llu came before (ticks only move forward)", what,
                (unsigned long long)tick, (unsigned long long)last);
        return -EBADMSG;
    }
    if (!ri->started) {
        ri->started = true;
        ri->first_tick = tick;
    }
    char field[32];
    snprintf(field, sizeof field, "%s.tick", what);
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
    int rc = recap_at_tick(im, "state", s->tick, err, errlen);
    if (rc < 0)
        return rc;
    if (ri->state) {
        msg_err(err, errlen, "state.tick: a second state for tick %llu", (unsigned long long)s->tick);
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
        msg_err(err, errlen, "event: invalid %s action: %s", recd_recap_tag_info_get(e->event.tag)
                ? recd_recap_tag_info_get(e->event.tag)->name : "?", recd_strerror(rc));
        return -EBADMSG;
    }
    if ((rc = recap_at_tick(im, "event", e->tick, err, errlen)) < 0)
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
        msg_err(err, errlen, "flush: before the first state");
        return -EBADMSG;
    }
    if (m->flush.has_end_tick) {
        if (m->flush.end_tick <= ri->last_fed) {
            msg_err(err, errlen, "flush.end_tick: %llu must be after the last tick %llu",
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
        msg_err(err, errlen, "flush: %s", recd_strerror(rc));
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
        msg_err(err, errlen, "finishing the Recap file: %s", recd_strerror(rc));
        return rc;
    }
    const recd_recap_header *h = &ri->open->header;
    uint32_t declared = recap_declared_frames(ri);
    if (declared != 0 && declared != info.frame_count) {
        /* Writing it would give a file that verify rejects (frame-count-mismatch). */
        msg_err(err, errlen, "open.recap.frame_count: %u, but the messages hold %llu ticks (leave "
                "frame_count out to have it counted)", declared,
                (unsigned long long)info.frame_count);
        return -EBADMSG;
    }
    if (info.frame_count > UINT32_MAX) {
        msg_err(err, errlen, "%llu ticks do not fit the header's frame count",
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
        msg_err(err, errlen, "patching the Recap header: %s", recd_strerror(rc));
        return rc;
    }
    rc = im->sink.write(im->sink.ctx, ri->file.data, ri->file.len);
    if (rc < 0)
        msg_err(err, errlen, "writing the output: %s", recd_strerror(rc));
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
    .open = recap_open,
    .state = recap_state,
    .event = recap_event,
    .flush = recap_flush,
    .close = recap_close,
    .finish = recap_finish,
    .release = recap_release,
};

/* ---- dispatch: message order here, everything else in the session format's importer --------- */

static int import_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    if (im->expect && m->format != im->expect) {
        msg_err(err, errlen, "open.format: the input is %s, but %s was asked for",
                recd_msg_format_name(m->format), recd_msg_format_name(im->expect));
        return -EBADMSG;
    }
    const recd_format *f = recd_format_of_msg(m->format);
    if (!f || !f->importer) {
        msg_err(err, errlen, "open.format: no importer for format '%s'",
                recd_msg_format_name(m->format));
        return -EBADMSG;
    }
    im->format = m->format;
    im->opened = true;
    return f->importer->open(im, m, err, errlen);
}

int recd_importer_msg(void *importer, const recd_msg *m, char *err, size_t errlen)
{
    recd_importer *im = importer;
    if (im->closed) {
        msg_err(err, errlen, "%s after close", recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (!im->opened && m->type != RECD_MSG_OPEN) {
        msg_err(err, errlen, "the first message must be open");
        return -EBADMSG;
    }
    const struct recd_format_importer *ops = importer_of(im);
    switch (m->type) {
    case RECD_MSG_OPEN:
        if (im->opened) {
            msg_err(err, errlen, "a second open: one file holds one session");
            return -EBADMSG;
        }
        return import_open(im, m, err, errlen);
    case RECD_MSG_STATE: {
        const recd_format *sf = recd_format_of_msg(m->format);
        if (!sf || sf->importer != ops) { /* the session's importer checks within its family */
            msg_err(err, errlen, "state: a %s state in a %s session",
                    recd_msg_format_name(m->format), recd_msg_format_name(im->format));
            return -EBADMSG;
        }
        return ops->state(im, m, err, errlen);
    }
    case RECD_MSG_EVENT:
        if (!ops->event) {
            msg_err(err, errlen, "event: .%s sessions have no events",
                    recd_msg_format_ext(im->format));
            return -EBADMSG;
        }
        return ops->event(im, m, err, errlen);
    case RECD_MSG_FLUSH:
        return ops->flush ? ops->flush(im, m, err, errlen) : 0;
    case RECD_MSG_CLOSE:
        im->closed = true;
        if (ops->close)
            ops->close(im, m);
        return 0;
    default: msg_err(err, errlen, "unknown message type"); return -EBADMSG;
    }
}

int recd_importer_finish(recd_importer *im, char *err, size_t errlen)
{
    if (!im->opened) {
        msg_err(err, errlen, "no open message: nothing to write");
        return -EBADMSG;
    }
    im->closed = true;
    return importer_of(im)->finish(im, err, errlen);
}
