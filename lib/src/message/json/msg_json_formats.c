/* SPDX-License-Identifier: MIT */
/* The JSON lines codec's lookups of a format's JSON hooks, over the one format list
 * (formats/format_table.c), whose order is the order in which lines are recognised by their
 * keys: a format whose keys another's contain must come after it there. */
#include "message/json/msg_json_formats.h"

#include <stdatomic.h>

#include "message/msg_formats.h"
#include "recd/format_list.h"

static const recd_format *with_json(const recd_format *f)
{
    return f && f->json ? f : NULL;
}

const recd_format *msg_json_format_of(recd_msg_format f)
{
    return with_json(recd_format__by_msg(f));
}

const recd_format *msg_json_format_back(size_t i)
{
    for (size_t k = recd_format__all_count(); k-- > 0;)
        if (recd_format__all_at(k)->json && i-- == 0)
            return recd_format__all_at(k);
    return NULL;
}

const recd_format *msg_json_format_of_msg(const recd_msg *m)
{
    return with_json(msg_format_of_msg(m));
}

const recd_format *msg_json_state_sniff(const json_t *root)
{
    const recd_format *fallback = NULL;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!f->json)
            continue;
        if (f->json->state_sniff && f->json->state_sniff(root))
            return f;
        if (f->json->state_fallback)
            fallback = f;
    }
    return fallback;
}

const recd_format *msg_json_event_sniff(const json_t *root)
{
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (f->json && f->json->event_sniff && f->json->event_sniff(root))
            return f;
    }
    return with_json(msg_format_unformatted_events());
}

/* The fast reader for lines without a session format: the state fallback format's, found once
 * (threads that race to find it find the same one). */
static _Atomic(msg_json_fast_fn) unformatted_fast;
static atomic_bool unformatted_fast_found;

static msg_json_fast_fn find_unformatted_fast(void)
{
    msg_json_fast_fn fn = NULL;
    for (size_t i = 0; !fn && i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        fn = f->json && f->json->state_fallback ? f->json->fast_state : NULL;
    }
    atomic_store_explicit(&unformatted_fast, fn, memory_order_relaxed);
    atomic_store_explicit(&unformatted_fast_found, true, memory_order_release);
    return fn;
}

msg_json_fast_fn msg_json_fast_reader(recd_msg_format session_format)
{
    if (session_format != RECD_MSG_FMT_NONE) {
        const recd_format *f = recd_format__by_msg(session_format);
        return f && f->json ? f->json->fast_state : NULL;
    }
    if (!atomic_load_explicit(&unformatted_fast_found, memory_order_acquire))
        return find_unformatted_fast();
    return atomic_load_explicit(&unformatted_fast, memory_order_relaxed);
}
