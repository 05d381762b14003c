/* SPDX-License-Identifier: MIT */
/* Byte sinks that also hand out room to fill in place (recd/reserve_sink.h). */
#include "recd/reserve_sink.h"

static int reserve_sink_write(void *ctx, const void *data, size_t len)
{
    const recd_reserve_sink *rs = ctx;
    return rs->write(rs->ctx, data, len);
}

recd_sink recd_reserve_sink_as_sink(recd_reserve_sink *rs)
{
    return (recd_sink){reserve_sink_write, rs};
}

const recd_reserve_sink *recd_reserve_sink_of(recd_sink s)
{
    return s.write == reserve_sink_write ? s.ctx : NULL; /* only this file makes such sinks */
}
