/* SPDX-License-Identifier: MIT */
/* The record layer's test fixture (record_fixture.h). */
#include "testutil.h"

#include <string.h>

#include "fake_writer.h"
#include "record_fixture.h"
#include "recd/samp_rec.h"
#include "record/session_formats.h"

void record_fixture_configure(record_fixture *r)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(uv_loop_init(&r->loop), 0);
    assert_int_equal(session_formats_install_config(), 0);
    assert_int_equal(recd_config_defaults(&r->cfg), 0);
    const recd_m_state_kind *kinds[RECD_M_STATE_KINDS_MAX];
    recd_metrics_install_state_kinds(kinds, session_formats_state_kinds(kinds, RECD_M_STATE_KINDS_MAX));
    assert_int_equal(recd_daemon_metrics_init(&r->metrics), 0);
}

void record_fixture_start(record_fixture *r, sessions_events on)
{
    assert_int_equal(sessions_init(&r->reg, &r->loop, &r->cfg, &r->metrics, &r->writer, on), 0);
    r->in.sessions = &r->reg;
    r->in.transport = RECD_M_TCP;
    r->in.peer = "test";
    r->in.tally = &r->tally;
}

void record_fixture_stop(record_fixture *r)
{
    sessions_close_all(&r->reg, "test end");
    fake_writer_run();
    assert_int_equal(r->reg.live_count, 0);
    sessions_free(&r->reg);
    fake_writer_reset();
    recd_daemon_metrics_free(&r->metrics);
    recd_config_free(&r->cfg);
    uv_loop_close(&r->loop);
}

int record_fixture_send(record_fixture *r, recd_msg *m)
{
    recd_wire_meta meta = {.encoding = RECD_WIRE_NDJSON, .has_time = true, .movable = m};
    r->in.accepted = false;
    r->in.reason_set = false;
    return session_dispatch(&r->in, m, &meta, r->why, sizeof r->why);
}

int record_fixture_send_block(record_fixture *r, const char *key, uint32_t time_ms, uint8_t fill)
{
    uint8_t fields[RECD_REC_ONFOOT_BLOCK_SIZE - 4];
    memset(fields, fill, sizeof fields);
    recd_wire_rec_state st = {.key = key,
                              .key_len = strlen(key),
                              .format = RECD_MSG_FMT_SAMP_ONFOOT,
                              .time_ms = time_ms,
                              .fields = fields,
                              .block_len = RECD_REC_ONFOOT_BLOCK_SIZE};
    recd_wire_meta meta = {.encoding = RECD_WIRE_BINARY, .has_time = true};
    r->in.accepted = false;
    return session_dispatch_fast(&r->in, &st, &meta, r->why, sizeof r->why);
}
