/* SPDX-License-Identifier: MIT */
/* The tree-free CARLA state reader: it takes every state line of a generated recording, and on
 * those lines, on hand-made edge lines and on mutated and truncated lines it gives the jansson
 * reader's decision, values and error text. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/carla/carla_json_fast.h"
#include "lib/message/json/json_oracle.h"
#include "message/json/msg_json_formats.h"
#include "recd/format.h"
#include "recd/message.h"
#include "recd/synth.h"

static const char state_line[] =
    "{\"type\":\"state\",\"session\":\"c-1\",\"seq\":2,\"frame\":7,\"elapsed\":0.35,\"duration\":0.05,"
    "\"visual_time\":0.35,\"doors\":[],\"positions\":[{\"id\":27,\"location\":[20175.0,28116.873,2.0],"
    "\"rotation\":[0.0,-0.0,90.0]},{\"id\":28,\"location\":[1,2,3],\"rotation\":[0,0,1e-7]}],"
    "\"traffic_lights\":[{\"id\":2,\"frozen\":0,\"elapsed\":4.95,\"state\":2}],\"vehicle_lights\":[],"
    "\"vehicle_animations\":[{\"id\":27,\"steering\":-0.25,\"throttle\":0.55,\"brake\":0.0,"
    "\"handbrake\":0,\"gear\":3}],\"walker_animations\":[{\"id\":62,\"speed\":141.43434}],"
    "\"platform_time\":0.35}";

/* A state may hold event records too: strings and lists inside a record. */
static const char add_line[] =
    "{\"type\":\"state\",\"frame\":1,\"elapsed\":0,\"add\":[{\"id\":27,\"actor_type\":1,"
    "\"location\":[20175.0,28116.873,2.0],\"rotation\":[0.0,0.0,90.0],\"uid\":28,"
    "\"blueprint\":\"vehicle.lincoln.mkz_2020\",\"attributes\":[{\"type\":3,\"id\":\"role_name\","
    "\"value\":\"hero\"},{\"type\":4,\"id\":\"color\",\"value\":\"231,153,151\"}]}]}";

/* The fast reader alone on a line it must take: it does, with jansson's values. */
static void fast_takes(const char *line, size_t len)
{
    recd_msg a;
    if (carla_json_fast_state(line, len, RECD_MSG_FMT_CARLA, &a) != 1)
        fail_msg("declined: %.*s", (int)len, line);
    recd_msg_free(&a);
    json_oracle_compare(line, len, RECD_MSG_FMT_CARLA);
}

typedef struct lines_seen {
    size_t states, others;
    recd_buf first_state; /* kept for the mutations */
} lines_seen;

static int check_exported(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    lines_seen *seen = ctx;
    recd_buf line = {0};
    assert_int_equal(recd_msg_to_json(m, &line), 0);
    const char *text = (const char *)line.data;
    size_t body = line.len - 1; /* without its '\n' */
    if (m->type == RECD_MSG_STATE) {
        fast_takes(text, body);
        if (seen->states++ == 20)
            assert_int_equal(recd_buf_append(&seen->first_state, text, body), 0);
    } else {
        json_oracle_compare(text, line.len, RECD_MSG_FMT_CARLA);
        seen->others++;
    }
    json_oracle_compare(text, line.len, RECD_MSG_FMT_NONE);
    recd_buf_free(&line);
    return 0;
}

static recd_buf generated_state; /* a state line of the generated recording */

/* Every line of generated recordings (CARLA has one scenario, traffic): the states all go the
 * fast way. */
static void test_generated_recordings(void **state)
{
    (void)state;
    const recd_format *f = recd_synth_format_find("carla");
    assert_non_null(f);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        recd_synth_params p = {f, RECD_SYNTH_SCENARIO_TRAFFIC, 3000, seed};
        recd_buf rec = {0};
        uint64_t units;
        assert_int_equal(recd_synth_write(&p, recd_buf_sink(&rec), &units), 0);
        lines_seen seen = {0, 0, {0}};
        char err[256] = "";
        assert_int_equal(
            recd_format_export(f, rec.data, rec.len, check_exported, &seen, err, sizeof err), 0);
        assert_true(seen.states > 50 && seen.others > 2);
        if (seed == 1)
            generated_state = seen.first_state;
        else
            recd_buf_free(&seen.first_state);
        recd_buf_free(&rec);
    }
    assert_true(generated_state.len > 1000);
}

/* Lines the fast reader takes: spacing, optional keys, number forms, records with strings and
 * lists. */
static void test_fast_path_variants(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"", ""},
        {"{\"type\":\"state\",", " {\t\"type\" : \"state\" ,\r"},
        {"[20175.0,28116.873,2.0]", "[ 20175.0 , 28116.873 , 2.0 ]"},
        {"{\"id\":62,\"speed\":141.43434}", "{ \"id\" : 62 , \"speed\" : 141.43434 }"},
        {"\"session\":\"c-1\",", ""},
        {"\"seq\":2,", ""},
        {"\"duration\":0.05,", ""},
        {"\"doors\":[],", ""},
        {"\"elapsed\":0.35", "\"elapsed\":-7"},
        {"\"frame\":7", "\"frame\":9223372036854775807"},
        {"\"speed\":141.43434", "\"speed\":3.4028234663852886e38"},
        {"\"speed\":141.43434", "\"speed\":-3.4028234e38"},
        {"\"speed\":141.43434", "\"speed\":1e-50"},
        {"\"speed\":141.43434", "\"speed\":16777217"},
        {"\"speed\":141.43434", "\"speed\":0.1000000000000000055511151231257827"},
        {"20175.0", "1E+300"},
        {"20175.0", "-9223372036854775808"},
        {"\"id\":27", "\"id\":4294967295"},
        {"\"gear\":3", "\"gear\":-2147483648"},
        {"\"state\":2}", "\"state\":255}"},
        {"\"frame\":7,", "\"frame\":7,\"platform_time\":1,"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[2048];
        json_oracle_replace(line, sizeof line, state_line, cases[i].from, cases[i].to);
        if (strstr(cases[i].to, "platform_time"))
            json_oracle_compare(line, strlen(line), RECD_MSG_FMT_CARLA); /* repeated: refused */
        else
            fast_takes(line, strlen(line));
    }
    fast_takes(add_line, strlen(add_line));
}

/* Lines the fast reader must decline (escapes, non-ASCII, NaN and inf text, big numbers,
 * missing, extra, repeated and reordered keys, bad ranges): the jansson reader answers, word
 * for word. */
static void test_edge_lines_agree(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"\"c-1\"", "\"c\\u002d1\""},
        {"\"state\":2}", "\"st\\u0061te\":2}"},
        {"\"positions\"", "\"po\\u0073itions\""},
        {"\"positions\"", "\"positions\xC3\xA9\""},
        {"\"speed\":141.43434", "\"speed\":NaN"},
        {"\"speed\":141.43434", "\"speed\":\"nan\""},
        {"\"speed\":141.43434", "\"speed\":\"-inf\""},
        {"\"speed\":141.43434", "\"speed\":\"nan:0x7ff0000000000001\""},
        {"\"speed\":141.43434", "\"speed\":3.4028236e38"},
        {"\"speed\":141.43434", "\"speed\":-3.4028235e38"},
        {"\"speed\":141.43434", "\"speed\":1e999"},
        {"\"speed\":141.43434", "\"speed\":null"},
        {"\"elapsed\":0.35", "\"elapsed\":\"inf\""},
        {"\"elapsed\":0.35", "\"elapsed\":1e400"},
        {"\"duration\":0.05", "\"duration\":\"nan\""},
        {"\"visual_time\":0.35", "\"visual_time\":\"inf\""},
        {"\"visual_time\":0.35", "\"visual_time\":[0.35]"},
        {"20175.0", "1e400"},
        {"20175.0", "\"1\""},
        {"20175.0", "01"},
        {"20175.0", "99999999999999999999"},
        {"\"frame\":7", "\"frame\":-1"},
        {"\"frame\":7", "\"frame\":7.0"},
        {"\"frame\":7,", ""},
        {"\"elapsed\":0.35,", ""},
        {"\"type\":\"state\",", ""},
        {"\"type\":\"state\"", "\"type\":\"event\""},
        {"\"type\":\"state\"", "\"type\":\"state\",\"save\":true"},
        {"\"type\":\"state\"", "\"type\":\"state\",\"colour\":1"},
        {"\"type\":\"state\"", "\"type\":\"state\",\"raw\":[]"},
        {"\"type\":\"state\"", "\"type\":\"state\",\"raw\":[{\"id\":200,\"data\":\"AAE=\"}]"},
        {"\"frame\":7", "\"frame\":7,\"frame\":7"},
        {"\"seq\":2", "\"seq\":-2"},
        {"\"seq\":2", "\"seq\":2,\"seq\":2"},
        {"\"session\":\"c-1\"", "\"session\":\".bad\""},
        {"\"doors\":[]", "\"doors\":[],\"doors\":[]"},
        {"\"doors\":[]", "\"doors\":{}"},
        {"\"doors\":[]", "\"doors\":[{}]"},
        {"\"id\":27", "\"id\":4294967296"},
        {"\"id\":27", "\"id\":-1"},
        {"\"id\":27", "\"id\":27.5"},
        {"\"gear\":3", "\"gear\":2147483648"},
        {"\"state\":2}", "\"state\":256}"},
        {"\"state\":2}", "\"state\":2,\"x\":1}"},
        {"\"state\":2}", "\"state\":2,\"state\":2}"},
        {"{\"id\":62,\"speed\":141.43434}", "{\"speed\":141.43434,\"id\":62}"},
        {"{\"id\":62,\"speed\":141.43434}", "{\"id\":62}"},
        {"[20175.0,28116.873,2.0]", "[20175.0,28116.873]"},
        {"[20175.0,28116.873,2.0]", "[20175.0,28116.873,2.0,1]"},
        {"\"positions\":[{", "\"positions\":[1,{"},
        {"\"platform_time\":0.35}", "\"platform_time\":0.35}}"},
        {"\"platform_time\":0.35}", "\"platform_time\":0.35,}"},
        {"\"platform_time\":0.35}", "\"platform_time\":0.35} x"},
        {"{\"type\"", "{\"type\"\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[2048];
        json_oracle_replace(line, sizeof line, state_line, cases[i].from, cases[i].to);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_CARLA);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_NONE);
    }
    static const struct {
        const char *from, *to;
    } add_cases[] = {
        {"\"hero\"", "\"h\\u00e9ro\""},
        {"\"hero\"", "\"h\xC3\xA9ro\""},
        {"\"hero\"", "4"},
        {"\"type\":3", "\"type\":256"},
        {"\"attributes\":[", "\"attributes\":[{},"},
    };
    for (size_t i = 0; i < sizeof add_cases / sizeof add_cases[0]; i++) {
        char line[2048];
        json_oracle_replace(line, sizeof line, add_line, add_cases[i].from, add_cases[i].to);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_CARLA);
    }
}

/* Random edits of the line (and of a generated one): both readers agree on every one. */
static void test_mutations_agree(void **state)
{
    (void)state;
    static const char *const inserts[] = {
        " ",  ",",    "\"",    "{",     "}",         "[",           "]",  ":",
        "0",  "-",    ".",     "e",     "1e400",     "true",        "\\u0074", "\xC3\xA9",
        "\xFF", "\"frame\":1,", "\"seq\":1,", "{\"id\":1,\"state\":1},", "\"\"",
        "\"save\":false,", "NaN", "\"nan\"", "\"inf\"", "\"raw\":[],", "\"doors\":[],"};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_CARLA, RECD_MSG_FMT_CARLA,
                                          RECD_MSG_FMT_CARLA, RECD_MSG_FMT_NONE};
    json_oracle_mutations m = {inserts, JSON_ORACLE_COUNT(inserts), sfs, JSON_ORACLE_COUNT(sfs),
                               30000, 42};
    json_oracle_mutate(state_line, strlen(state_line), &m);
}

/* Random edits of a generated state line (50 actors' records). */
static void test_generated_mutations_agree(void **state)
{
    (void)state;
    assert_true(generated_state.len > 0 && generated_state.len < 60000);
    static const char *const inserts[] = {" ", ",", "\"", "{", "}", "[", "]", ":", "0", "-", ".",
                                          "e", "1e400", "\\u0074", "\xFF", "\"nan\""};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_CARLA};
    json_oracle_mutations m = {inserts, JSON_ORACLE_COUNT(inserts), sfs, 1, 1500, 7};
    json_oracle_mutate((const char *)generated_state.data, generated_state.len, &m);
    recd_buf_free(&generated_state);
}

/* Every prefix of the line closed by one to three '}' (the byte that bounds the fast reader's
 * scans, now closing the line anywhere), with and without spaces around it. */
static void test_truncated_lines_agree(void **state)
{
    (void)state;
    static const char *const tails[] = {"}", "}}", "}}}", " } ", "]}", "}]}", "\"}", "0}", "e}"};
    static const char *const lines[] = {state_line, add_line};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_CARLA};
    for (size_t l = 0; l < JSON_ORACLE_COUNT(lines); l++)
        json_oracle_truncate(lines[l], tails, JSON_ORACLE_COUNT(tails), sfs, 1);
}

/* Other session formats are not its: it declines them. */
static void test_other_formats_declined(void **state)
{
    (void)state;
    recd_msg m;
    assert_int_equal(carla_json_fast_state(state_line, strlen(state_line), RECD_MSG_FMT_NONE, &m), 0);
    assert_int_equal(carla_json_fast_state(state_line, strlen(state_line), RECD_MSG_FMT_RECAP, &m), 0);
    assert_true(msg_json_fast_reader(RECD_MSG_FMT_CARLA) == carla_json_fast_state);
    assert_true(msg_json_fast_reader(RECD_MSG_FMT_NONE) != carla_json_fast_state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_recordings),
        cmocka_unit_test(test_fast_path_variants),
        cmocka_unit_test(test_edge_lines_agree),
        cmocka_unit_test(test_mutations_agree),
        cmocka_unit_test(test_generated_mutations_agree),
        cmocka_unit_test(test_truncated_lines_agree),
        cmocka_unit_test(test_other_formats_declined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
