/* SPDX-License-Identifier: MIT */
/* The wire hooks of the formats (recd_format.wire, through the format list) and the message
 * model's descriptors (msg_formats.h): every recorded format has hooks at its format's index, open
 * format bytes are unique, the block path's sizes are the .rec codec's, and the unknown-format
 * error lists them all. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "message/msg_formats.h"
#include "recd/format.h"
#include "recd/format_list.h"
#include "recd/wire.h"
#include "wire/wire_formats.h"

static void entries_at_their_index(void **state)
{
    (void)state;
    size_t count = 0;
    for (size_t f = 0; f < RECD_MSG_FORMAT_SLOTS; f++) {
        const wire_format *w = wire_format_of((recd_msg_format)f);
        const recd_format *m = msg_format_of((recd_msg_format)f);
        assert_true((w == NULL) == (m == NULL)); /* a format in one table is in both */
        if (!w)
            continue;
        count++;
        assert_int_equal(w->format, f);
        assert_int_equal(m->msg_format, f);
        assert_string_equal(recd_msg_format_name((recd_msg_format)f), m->name);
        assert_int_equal(recd_msg_format_parse(m->name), f);
        assert_ptr_equal(wire_format_by_code(w->code), w);
        assert_non_null(w->open_read);
        assert_non_null(w->state_read);
        assert_non_null(w->state_write);
        assert_non_null(w->msg_time);
        assert_true((w->event_read == NULL) == (w->event_write == NULL));
        assert_true((m->model == NULL || m->model->event_free == NULL) == (w->event_read == NULL));
        if (f == RECD_MSG_FMT_SAMP_ONFOOT)
            assert_int_equal(w->block_len, RECD_REC_ONFOOT_BLOCK_SIZE);
        else if (f == RECD_MSG_FMT_SAMP_VEHICLE)
            assert_int_equal(w->block_len, RECD_REC_VEHICLE_BLOCK_SIZE);
        else
            assert_int_equal(w->block_len, 0);
        assert_true((w->block_len == 0) == (w->block_fields_check == NULL));
        assert_true((w->block_len == 0) == (w->block_refuse == NULL));
        assert_true((w->block_len == 0) == (w->block_decode == NULL));
    }
    assert_int_equal(count, 5);
    assert_null(wire_format_of(RECD_MSG_FMT_NONE));
    assert_null(wire_format_of((recd_msg_format)99));
    assert_null(msg_format_of((recd_msg_format)99));
    assert_string_equal(recd_msg_format_name((recd_msg_format)99), "");
    assert_string_equal(recd_msg_format_ext((recd_msg_format)99), "");
    assert_null(wire_format_by_code(0));
}

/* Every recorded format of the list (session-only ones too) has wire hooks for its own message
 * format, found at it; one format owns events without a format. */
static void table_entries_have_hooks(void **state)
{
    (void)state;
    size_t formatless = 0;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        assert_true((f->wire != NULL) == recd_format_is_recorded(f));
        if (f->wire) {
            assert_int_equal(f->wire->format, f->msg_format);
            assert_ptr_equal(wire_format_of(f->msg_format), f->wire);
        }
        formatless += f->model && f->model->owns_unformatted_events;
    }
    assert_int_equal(formatless, 1);
}

/* An event without a format is sent and owned as a Recap event. */
static void formatless_event_is_recap(void **state)
{
    (void)state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_NONE);
    assert_ptr_equal(wire_format_of_msg(&m), wire_format_of(RECD_MSG_FMT_RECAP));
    assert_ptr_equal(msg_format_of_msg(&m), msg_format_of(RECD_MSG_FMT_RECAP));
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_NONE);
    assert_null(wire_format_of_msg(&m));
}

/* The open's unknown-format error names every format by its byte, in byte order. */
static void unknown_format_lists_codes(void **state)
{
    (void)state;
    char codes[256];
    wire_format_codes_text(codes, sizeof codes);
    assert_string_equal(codes, "1 samp-onfoot, 2 samp-vehicle, 3 recap, 4 carla, 5 samp-player");
    /* header (open, 12-byte body), key "k", format byte 9, no start time, no token */
    const uint8_t frame[] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, 1, 0, 12, 0, 0, 0, 1, 'k', 9,
                             0, 0, 0, 0, 0, 0, 0, 0, 0};
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY};
    char err[320] = "";
    assert_int_equal(recd_wire_decode_datagram(&cfg, frame, sizeof frame, err, sizeof err),
                     -EBADMSG);
    assert_non_null(strstr(err, "open: unknown format 9 (1 samp-onfoot, 2 samp-vehicle, 3 recap, "
                                "4 carla, 5 samp-player)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entries_at_their_index),
        cmocka_unit_test(table_entries_have_hooks),
        cmocka_unit_test(formatless_event_is_recap),
        cmocka_unit_test(unknown_format_lists_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
