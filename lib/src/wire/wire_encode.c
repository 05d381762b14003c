/* SPDX-License-Identifier: MIT */
/* Public encoders: one message as a binary frame or an NDJSON line. */
#include <errno.h>

#include "wire/wire_internal.h"

int recd_wire_encode(const recd_msg *m, recd_wire_encoding enc, size_t max_frame, recd_buf *out)
{
    if (!m || !out)
        return -EINVAL;
    switch (enc) {
    case RECD_WIRE_BINARY: return wire_binary_encode(m, max_frame, false, true, out);
    case RECD_WIRE_NDJSON: return wire_ndjson_encode(m, max_frame, false, out);
    default: return -EINVAL;
    }
}

int recd_wire_encode_untimed(const recd_msg *m, size_t max_frame, recd_buf *out)
{
    if (!m || !out || (m->type != RECD_MSG_STATE && m->type != RECD_MSG_EVENT))
        return -EINVAL;
    return wire_binary_encode(m, max_frame, false, false, out);
}
