/* SPDX-License-Identifier: MIT */
/* What the record layer counts for each part's manifest (output.part_manifest), on the fake
 * writer, which renders a part's manifest as soon as the part ends: a Recap session rotated by
 * duration lists its ticks' messages in the part that holds their tick, with their sequence
 * numbers and tick times; .rec blocks from the binary path count without sequence numbers when
 * they carry none; with the option off no part has a manifest; and the text escapes what it
 * holds. */
#include "testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fake_writer.h"
#include "record_fixture.h"
#include "recd/recap.h"
#include "record/part_manifest.h"
#include "record/sessions.h"

static int setup(void **state)
{
    record_fixture *r = calloc(1, sizeof *r);
    assert_non_null(r);
    record_fixture_configure(r);
    r->cfg.output.part_manifest = true;
    r->cfg.rotation.max_duration_ms = 1000; /* 20 Recap ticks */
    record_fixture_start(r, (sessions_events){.data = r});
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    record_fixture *r = *state;
    record_fixture_stop(r);
    free(r);
    return 0;
}

static void send_msg(record_fixture *r, recd_msg *m)
{
    if (record_fixture_send(r, m) < 0)
        fail_msg("refused: %s", r->why);
    recd_msg_free(m);
}

static void send_recap_open(record_fixture *r, const char *key)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("tally");
    h.start_ms = INT64_C(1700000000000);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    send_msg(r, &m);
}

static void send_recap_state(record_fixture *r, const char *key, uint64_t tick, uint64_t seq)
{
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.pos[0] = (double)tick;
    st.health = 20.0f;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_state(&m, tick, &st), 0);
    m.has_seq = true;
    m.seq = seq;
    send_msg(r, &m);
}

static void send_recap_chat(record_fixture *r, const char *key, uint64_t tick, uint64_t seq)
{
    recd_recap_value text = {.blob = recd_recap_str("hi")};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &text};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_event(&m, tick, &ev), 0);
    m.has_seq = true;
    m.seq = seq;
    send_msg(r, &m);
}

static void send_close(record_fixture *r, const char *key)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_NONE);
    snprintf(m.session, sizeof m.session, "%s", key);
    send_msg(r, &m);
}

/* Part i's manifest, parsed (json_decref it). */
static json_t *manifest_of(size_t i)
{
    fake_file *file = fake_writer_file(i);
    assert_non_null(file);
    assert_true(file->ended);
    if (!file->sidecar)
        fail_msg("part %zu has no manifest", i);
    json_error_t err;
    json_t *m = json_loads(file->sidecar, JSON_REJECT_DUPLICATES, &err);
    if (!m)
        fail_msg("part %zu: %s", i, err.text);
    return m;
}

static json_int_t int_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer", key);
    return json_integer_value(v);
}

/* Ticks 0..59, each a state and every third one a chat message too, numbered from seq 100: parts
 * of 20 ticks, each manifest naming its own ticks' messages. */
static void recap_parts_count_their_ticks(void **state)
{
    record_fixture *r = *state;
    const char *key = "recap.tally";
    send_recap_open(r, key);
    uint64_t seq = 100;
    for (uint64_t tick = 0; tick < 60; tick++) {
        send_recap_state(r, key, tick, seq++);
        if (tick % 3 == 0)
            send_recap_chat(r, key, tick, seq++);
    }
    send_close(r, key);
    fake_writer_run();
    assert_int_equal(fake_writer_files(), 3);
    uint64_t next = 100;
    for (size_t i = 0; i < 3; i++) {
        json_t *m = manifest_of(i);
        assert_string_equal(json_string_value(json_object_get(m, "session")), key);
        assert_string_equal(json_string_value(json_object_get(m, "format")), "recap");
        assert_true(json_string_length(json_object_get(m, "instance")) > 0);
        assert_string_equal(json_string_value(json_object_get(m, "file")),
                            fake_writer_file(i)->part->name);
        assert_int_equal(int_at(m, "part"), i);
        uint64_t first_tick = 20 * i, last_tick = first_tick + 19;
        /* 20 states, and a chat at every multiple of 3: 7 in 0..19 and 20..39, 6 in 40..59 */
        uint64_t samples = i < 2 ? 20 + 7 : 20 + 6;
        assert_int_equal(int_at(m, "samples"), samples);
        assert_int_equal(int_at(m, "first_seq"), next);
        assert_int_equal(int_at(m, "last_seq"), next + samples - 1);
        assert_int_equal(int_at(m, "first_time_ms"), first_tick * RECD_RECAP_TICK_MS);
        assert_int_equal(int_at(m, "last_time_ms"), last_tick * RECD_RECAP_TICK_MS);
        assert_true(int_at(m, "start_ms") <= int_at(m, "end_ms"));
        next += samples;
        json_decref(m);
    }
    assert_int_equal(next, seq);
}

/* Binary .rec frames without a sequence number: counted, times kept, seq null. */
static void rec_blocks_without_seq(void **state)
{
    record_fixture *r = *state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "%s", "foot");
    send_msg(r, &m);
    for (uint32_t t = 0; t < 1500; t += 100) /* rotated after 1 s */
        assert_int_equal(record_fixture_send_block(r, "foot", t, 7), 0);
    send_close(r, "foot");
    fake_writer_run();
    assert_int_equal(fake_writer_files(), 2);
    json_t *a = manifest_of(0), *b = manifest_of(1);
    assert_int_equal(int_at(a, "samples"), 10);
    assert_int_equal(int_at(a, "first_time_ms"), 0);
    assert_int_equal(int_at(a, "last_time_ms"), 900);
    assert_int_equal(int_at(b, "samples"), 5);
    assert_int_equal(int_at(b, "first_time_ms"), 1000);
    assert_int_equal(int_at(b, "last_time_ms"), 1400);
    assert_true(json_is_null(json_object_get(a, "first_seq")));
    assert_true(json_is_null(json_object_get(b, "last_seq")));
    json_decref(a);
    json_decref(b);
}

/* The option off: parts go without. */
static void off_means_none(void **state)
{
    record_fixture *r = *state;
    r->cfg.output.part_manifest = false;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "%s", "plain");
    send_msg(r, &m);
    for (uint32_t t = 0; t < 1500; t += 100)
        assert_int_equal(record_fixture_send_block(r, "plain", t, 1), 0);
    send_close(r, "plain");
    fake_writer_run();
    assert_int_equal(fake_writer_files(), 2);
    assert_null(fake_writer_file(0)->sidecar);
    assert_null(fake_writer_file(1)->sidecar);
}

/* Whatever the strings hold, the text is JSON that reads back to them (and a time before 1970
 * still prints). */
static void text_escapes_every_string(void **state)
{
    (void)state;
    part_manifest_fields f = {
        .session = "a\"b\\c\n",
        .instance = "host\t\x01",
        .format = "samp-onfoot",
        .file = "d/\"e\".rec",
        .part = 7,
        .tally = {.on = true, .samples = 2, .has_seq = true, .first_seq = 5, .last_seq = 6,
                  .start_ms = -1},
        .end_ms = INT64_C(1795668304101),
    };
    char *text = part_manifest_text(&f);
    assert_non_null(text);
    assert_int_equal(text[strlen(text) - 1], '\n');
    json_error_t err;
    json_t *m = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!m)
        fail_msg("%s: %s", text, err.text);
    assert_string_equal(json_string_value(json_object_get(m, "session")), f.session);
    assert_string_equal(json_string_value(json_object_get(m, "instance")), f.instance);
    assert_string_equal(json_string_value(json_object_get(m, "file")), f.file);
    assert_int_equal(int_at(m, "part"), 7);
    assert_true(json_is_null(json_object_get(m, "first_time_ms")));
    assert_string_equal(json_string_value(json_object_get(m, "start")), "1969-12-31T23:59:59.999Z");
    assert_string_equal(json_string_value(json_object_get(m, "end")), "2026-11-26T04:45:04.101Z");
    json_decref(m);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(recap_parts_count_their_ticks, setup, teardown),
        cmocka_unit_test_setup_teardown(rec_blocks_without_seq, setup, teardown),
        cmocka_unit_test_setup_teardown(off_means_none, setup, teardown),
        cmocka_unit_test(text_escapes_every_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
