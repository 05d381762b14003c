/* SPDX-License-Identifier: MIT */
/* The record layer on the fake writer, as its tests set it up: a sessions registry on the
 * default config, one input that stands for a TCP peer, and senders for a message (the NDJSON
 * path) and for an on-foot block (the binary frames' direct path). A test embeds it in its own
 * fixture, may change cfg between configure and start, and checks what it owns before stop. */
#ifndef RECD_TEST_RECORD_FIXTURE_H
#define RECD_TEST_RECORD_FIXTURE_H

#include <stdint.h>
#include <uv.h>

#include "record/sessions.h"

typedef struct record_fixture {
    uv_loop_t loop;
    recd_config cfg;
    recd_daemon_metrics metrics;
    writer_stage writer; /* never initialised: the fake ignores it */
    recd_sessions reg;
    session_input in;
    input_tally tally;
    char why[256];
} record_fixture;

/* The loop, the default config and the metrics. */
void record_fixture_configure(record_fixture *r);
/* The registry on r->cfg, with the app's callbacks on, and the input. */
void record_fixture_start(record_fixture *r, sessions_events on);
/* Closes every session, completes the writes, checks none is left and frees it all. */
void record_fixture_stop(record_fixture *r);

/* m as an NDJSON message (timed); the dispatch's result, why in r->why. */
int record_fixture_send(record_fixture *r, recd_msg *m);
/* A samp-onfoot sample at time_ms whose fields are all fill, through the binary frames' path. */
int record_fixture_send_block(record_fixture *r, const char *key, uint32_t time_ms, uint8_t fill);

#endif
