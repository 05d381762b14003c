/* SPDX-License-Identifier: MIT */
/* The message model's lookups of a format's descriptor, over the one format list
 * (formats/format_table.c). */
#include "message/msg_formats.h"

#include <stdatomic.h>

#include "recd/format_list.h"

const recd_format *msg_format_of(recd_msg_format f)
{
    return recd_format__by_msg(f);
}

static const recd_format *find_unformatted_events_owner(void)
{
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (f->model && f->model->owns_unformatted_events)
            return f;
    }
    return NULL;
}

/* Found once: every event the wire encodes without a format asks. Threads that race store the
 * same constant pointer. */
const recd_format *msg_format_unformatted_events(void)
{
    static _Atomic(const recd_format *) owner;
    const recd_format *f = atomic_load_explicit(&owner, memory_order_relaxed);
    if (!f) {
        f = find_unformatted_events_owner();
        atomic_store_explicit(&owner, f, memory_order_relaxed);
    }
    return f;
}

const recd_format *msg_format_of_msg(const recd_msg *m)
{
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE)
        return msg_format_unformatted_events();
    return recd_format__by_msg(m->format);
}
