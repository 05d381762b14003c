/* SPDX-License-Identifier: MIT */
/* The wire hooks of every format, gathered from the format list (recd_format.wire, session-only
 * entries included) into a slot per recd_msg_format on first use: the block path then finds a
 * session's hooks with one indexed load, as from a static table. */
#include "wire/wire_formats.h"

#include <pthread.h>
#include <stdio.h>

#include "message/msg_formats.h"
#include "recd/format.h"
#include "recd/format_list.h"

_Atomic(const wire_format *) wire_format_slots[WIRE_FORMAT_SLOTS];
static const wire_format *formatless_event; /* of the model that owns them; set with the slots */
static pthread_once_t gather_once = PTHREAD_ONCE_INIT;

static void wire_formats_add(const recd_format *f)
{
    const wire_format *w = f->wire;
    if (!w || (size_t)w->format >= WIRE_FORMAT_SLOTS || w->format == RECD_MSG_FMT_NONE)
        return; /* raise WIRE_FORMAT_SLOTS (tests/lib/wire/test_wire_formats.c finds it missing) */
    atomic_store_explicit(&wire_format_slots[w->format], w, memory_order_relaxed);
    if (f->model && f->model->owns_unformatted_events)
        formatless_event = w;
}

static void wire_formats_gather(void)
{
    for (size_t i = 0; i < recd_format__all_count(); i++)
        wire_formats_add(recd_format__all_at(i));
}

const wire_format *wire_format_gathered(recd_msg_format f)
{
    pthread_once(&gather_once, wire_formats_gather);
    if ((size_t)f >= WIRE_FORMAT_SLOTS)
        return NULL;
    return atomic_load_explicit(&wire_format_slots[f], memory_order_relaxed);
}

const wire_format *wire_format_of_msg(const recd_msg *m)
{
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE) {
        pthread_once(&gather_once, wire_formats_gather);
        return formatless_event;
    }
    return wire_format_of(m->format);
}

const wire_format *wire_format_by_code(uint8_t code)
{
    for (size_t i = 0; i < WIRE_FORMAT_SLOTS; i++) {
        const wire_format *w = wire_format_of((recd_msg_format)i);
        if (w && w->code == code)
            return w;
    }
    return NULL;
}

void wire_format_codes_text(char *out, size_t outlen)
{
    size_t n = 0;
    out[0] = 0;
    for (unsigned code = 1; code <= 255; code++) {
        const wire_format *f = wire_format_by_code((uint8_t)code);
        if (!f || n >= outlen)
            continue;
        int k = snprintf(out + n, outlen - n, "%s%u %s", n ? ", " : "", code,
                         recd_msg_format_name(f->format));
        n += k > 0 ? (size_t)k : 0;
    }
}

void wire_format_event_names(char *out, size_t outlen)
{
    size_t n = 0, total = 0, seen = 0;
    for (size_t i = 0; i < WIRE_FORMAT_SLOTS; i++) {
        const wire_format *f = wire_format_of((recd_msg_format)i);
        total += f && f->event_read;
    }
    out[0] = 0;
    for (size_t i = 0; i < WIRE_FORMAT_SLOTS && n < outlen; i++) {
        const wire_format *f = wire_format_of((recd_msg_format)i);
        if (!f || !f->event_read)
            continue;
        seen++;
        const char *sep = seen == 1 ? "" : seen == total ? " and " : ", ";
        int k = snprintf(out + n, outlen - n, "%s%s", sep, recd_msg_format_name(f->format));
        n += k > 0 ? (size_t)k : 0;
    }
}
