/* SPDX-License-Identifier: MIT */
/* The tree-free Recap state reader: it takes every state line of generated recordings (every
 * scenario), and on those lines, on hand-made edge lines and on mutated and truncated lines it
 * gives the jansson reader's decision, values and error text. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/recap/recap_json_fast.h"
#include "lib/message/json/json_oracle.h"
#include "message/json/msg_json_formats.h"
#include "recd/format.h"
#include "recd/message.h"
#include "recd/synth.h"

#define EQUIPMENT                                                                                  \
    "\"equipment\":[{\"slot\":0,\"key\":\"minecraft:diamond_sword\",\"count\":1,\"flags\":1},"       \
    "{\"slot\":5,\"key\":\"minecraft:iron_helmet\",\"count\":1,\"data\":\"AAEC/w==\"}],"
static const char state_line[] =
    "{\"type\":\"state\",\"session\":\"mc-1\",\"seq\":3,\"tick\":40,\"pos\":[-34.5,69.0,-1816.5],"
    "\"rot\":[-157.04122877703463,4.264603896466564,-0.0],\"vel\":[0.0,-0.0784000015258789,0],"
    "\"flags\":512,\"pose\":0,\"game_mode\":1,\"hand_state\":2,\"health\":20.0,\"absorption\":0,"
    EQUIPMENT
    "\"inventory\":[{\"slot\":40,\"key\":\"minecraft:shield\",\"count\":1},{\"slot\":6,\"key\":"
    "\"minecraft:cobblestone\",\"count\":64}]}";

/* The fast reader alone on a line it must take: it does, with jansson's values. */
static void fast_takes(const char *line, size_t len)
{
    recd_msg a;
    if (recap_json_fast_state(line, len, RECD_MSG_FMT_RECAP, &a) != 1)
        fail_msg("declined: %.*s", (int)len, line);
    recd_msg_free(&a);
    json_oracle_compare(line, len, RECD_MSG_FMT_RECAP);
}

typedef struct lines_seen {
    size_t states, others;
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
        seen->states++;
    } else {
        json_oracle_compare(text, line.len, RECD_MSG_FMT_RECAP);
        seen->others++;
    }
    json_oracle_compare(text, line.len, RECD_MSG_FMT_NONE);
    recd_buf_free(&line);
    return 0;
}

/* Every line of generated recordings, every scenario: the states all go the fast way. */
static void test_generated_recordings(void **state)
{
    (void)state;
    static const recd_synth_scenario scenarios[] = {
        RECD_SYNTH_SCENARIO_IDLE, RECD_SYNTH_SCENARIO_WALK, RECD_SYNTH_SCENARIO_DRIVE,
        RECD_SYNTH_SCENARIO_MIXED};
    const recd_format *f = recd_synth_format_find("recap");
    assert_non_null(f);
    size_t total = 0;
    for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
        for (uint64_t seed = 1; seed <= 2; seed++) {
            recd_synth_params p = {f, scenarios[s], 20000, seed};
            recd_buf rec = {0};
            uint64_t units;
            assert_int_equal(recd_synth_write(&p, recd_buf_sink(&rec), &units), 0);
            lines_seen seen = {0, 0};
            char err[256] = "";
            assert_int_equal(recd_format_export(f, rec.data, rec.len, check_exported, &seen, err,
                                                sizeof err),
                             0);
            assert_true(seen.states > 0 && seen.others > 2);
            total += seen.states;
            recd_buf_free(&rec);
        }
    }
    assert_true(total > 1000);
}

/* Lines the fast reader takes: spacing, key order, optional keys, number forms. */
static void test_fast_path_variants(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"", ""},
        {"{\"type\":\"state\",", " {\t\"type\" : \"state\" ,\r"},
        {"[-34.5,69.0,-1816.5]", "[ -34.5 , 69.0 , -1816.5 ]"},
        {"\"session\":\"mc-1\",", ""},
        {"\"seq\":3,", ""},
        {"\"seq\":3,", "\"seq\":9223372036854775807,"},
        {"\"tick\":40", "\"tick\":9223372036854775807"},
        {EQUIPMENT, ""},
        {EQUIPMENT, "\"equipment\":[ ],"},
        {"\"flags\":512", "\"flags\":65535"},
        {"\"hand_state\":2", "\"hand_state\":255"},
        {"\"health\":20.0", "\"health\":3.4028234e38"},
        {"\"health\":20.0", "\"health\":-7"},
        {"\"health\":20.0", "\"health\":1e-50"},
        {"69.0", "1E+300"},
        {"69.0", "-9223372036854775808"},
        {"69.0", "123456789012345678901234567890.5e-3"},
        {"69.0", "0.30000000000000004"},
        {"\"data\":\"AAEC/w==\"", "\"data\":\"\""},
        {"{\"slot\":0,\"key\":\"minecraft:diamond_sword\",\"count\":1,\"flags\":1}",
         "{\"flags\":0,\"count\":255,\"key\":\"minecraft:diamond_sword\",\"slot\":4}"},
        {"\"tick\":40,", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[2048];
        json_oracle_replace(line, sizeof line, state_line, cases[i].from, cases[i].to);
        if (strstr(line, "\"tick\":"))
            fast_takes(line, strlen(line));
        else
            json_oracle_compare(line, strlen(line), RECD_MSG_FMT_RECAP);
    }
}

/* Lines the fast reader must decline (escapes, non-ASCII, NaN text, big numbers, missing, extra
 * and repeated keys, bad ranges): the jansson reader answers, word for word. */
static void test_edge_lines_agree(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"minecraft:shield", "minecraft:shi\\u0065ld"},
        {"minecraft:shield", "minecraft\\/shield"},
        {"minecraft:shield", "minecraft:\xC3\xA9"},
        {"minecraft:shield", "minecraft:\xFF"},
        {"mc-1", "mc\\u002d1"},
        {"\"state\"", "\"st\\u0061te\""},
        {"\"tick\"", "\"ti\\u0063k\""},
        {"\"health\":20.0", "\"health\":NaN"},
        {"\"health\":20.0", "\"health\":nan"},
        {"\"health\":20.0", "\"health\":Infinity"},
        {"\"health\":20.0", "\"health\":\"NaN\""},
        {"\"health\":20.0", "\"health\":3.5e38"},
        {"\"health\":20.0", "\"health\":1e999"},
        {"\"health\":20.0", "\"health\":null"},
        {"\"health\":20.0", "\"health\":true"},
        {"69.0", "1e400"},
        {"69.0", "-1e400"},
        {"69.0", "\"69\""},
        {"69.0", "069"},
        {"69.0", "69."},
        {"69.0", ".5"},
        {"69.0", "+1"},
        {"69.0", "99999999999999999999"},
        {"\"tick\":40", "\"tick\":-1"},
        {"\"tick\":40", "\"tick\":40.0"},
        {"\"tick\":40", "\"tick\":9223372036854775808"},
        {"\"seq\":3", "\"seq\":-3"},
        {"\"seq\":3", "\"seq\":3.5"},
        {"\"flags\":512", "\"flags\":65536"},
        {"\"pose\":0", "\"pose\":256"},
        {"\"pose\":0", "\"pose\":-0"},
        {"\"pose\":0", "\"pose\":-1"},
        {"\"game_mode\":1", "\"game_mode\":1e0"},
        {"\"tick\":40,", ""},
        {"\"pos\":[-34.5,69.0,-1816.5],", ""},
        {"\"absorption\":0,", ""},
        {"\"type\":\"state\",", ""},
        {"\"type\":\"state\"", "\"type\":\"event\""},
        {"\"type\":\"state\"", "\"type\":\"state\",\"save\":true"},
        {"\"type\":\"state\"", "\"type\":\"state\",\"colour\":1"},
        {"\"type\":\"state\"", "\"type\":\"state\",\"type\":\"state\""},
        {"\"tick\":40", "\"tick\":40,\"tick\":40"},
        {"\"seq\":3", "\"seq\":3,\"seq\":3"},
        {"\"session\":\"mc-1\"", "\"session\":\"mc-1\",\"session\":\"mc-1\""},
        {"\"session\":\"mc-1\"", "\"session\":\".bad\""},
        {"\"session\":\"mc-1\"", "\"session\":\"\""},
        {"\"session\":\"mc-1\"", "\"session\":1"},
        {"[-34.5,69.0,-1816.5]", "[-34.5,69.0]"},
        {"[-34.5,69.0,-1816.5]", "[-34.5,69.0,-1816.5,1]"},
        {"[-34.5,69.0,-1816.5]", "[-34.5,69.0,-1816.5,]"},
        {"[-34.5,69.0,-1816.5]", "{}"},
        {"\"count\":64", "\"count\":256"},
        {"\"count\":64", "\"count\":64,\"count\":64"},
        {"\"count\":64", "\"count\":64,\"extra\":1"},
        {"\"slot\":6,", ""},
        {"\"slot\":6", "\"slot\":41"},
        {"\"slot\":6", "\"slot\":40"},
        {"\"slot\":5", "\"slot\":6"},
        {"\"slot\":5", "\"slot\":0"},
        {",\"count\":64", ""},
        {"\"key\":\"minecraft:cobblestone\"", "\"key\":\"\""},
        {"\"flags\":1}", "\"flags\":256}"},
        {"\"data\":\"AAEC/w==\"", "\"data\":\"AAEC/w=\""},
        {"\"data\":\"AAEC/w==\"", "\"data\":\"AAEC_w==\""},
        {"\"data\":\"AAEC/w==\"", "\"data\":1"},
        {"\"equipment\":[", "\"equipment\":{\"a\":["},
        {"\"equipment\":[", "\"equipment\":null,\"e\":["},
        {"\"inventory\":[", "\"inventory\":[{},"},
        {"\"inventory\":[", "\"inventory\":[1,"},
        {"}]}", "}],}"},
        {"}]}", "}]} x"},
        {"}]}", "}]}}"},
        {"{\"type\"", "[{\"type\""},
        {"{\"type\"", "{\"type\"\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[2048];
        json_oracle_replace(line, sizeof line, state_line, cases[i].from, cases[i].to);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_RECAP);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_NONE);
    }
    /* A list with more items than slots, and a key of 255 and 256 bytes. */
    char line[8192], key[300], items[4096] = "";
    size_t n = 0;
    for (int k = 0; k < 7; k++)
        n += (size_t)snprintf(items + n, sizeof items - n, "%s{\"slot\":%d,\"key\":\"a\",\"count\":1}",
                              k ? "," : "", k % 6);
    char with[4200];
    snprintf(with, sizeof with, "\"equipment\":[%s],", items);
    json_oracle_replace(line, sizeof line, state_line, EQUIPMENT, with);
    json_oracle_compare(line, strlen(line), RECD_MSG_FMT_RECAP);
    for (size_t len = 254; len <= 256; len++) {
        memset(key, 'k', len);
        key[len] = 0;
        char to[320];
        snprintf(to, sizeof to, "\"key\":\"%s\"", key);
        json_oracle_replace(line, sizeof line, state_line, "\"key\":\"minecraft:shield\"", to);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_RECAP);
    }
}

/* Random edits of the line: both readers agree on every one. */
static void test_mutations_agree(void **state)
{
    (void)state;
    static const char *const inserts[] = {
        " ",  ",",    "\"",    "{",     "}",         "[",           "]",  ":",
        "0",  "-",    ".",     "e",     "1e400",     "true",        "\\u0074", "\xC3\xA9",
        "\xFF", "\"tick\":1,", "\"seq\":1,", "{\"slot\":1,\"key\":\"a\",\"count\":1},", "\"\"",
        "\"save\":false,", "NaN"};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_RECAP, RECD_MSG_FMT_RECAP,
                                          RECD_MSG_FMT_RECAP, RECD_MSG_FMT_NONE};
    json_oracle_mutations m = {inserts, JSON_ORACLE_COUNT(inserts), sfs, JSON_ORACLE_COUNT(sfs),
                               30000, 42};
    json_oracle_mutate(state_line, strlen(state_line), &m);
}

/* Every prefix of the line closed by one to three '}' (the byte that bounds the fast reader's
 * scans, now closing the line anywhere), with and without spaces around it. */
static void test_truncated_lines_agree(void **state)
{
    (void)state;
    static const char *const tails[] = {"}", "}}", "}}}", " } ", "]}", "}]}", "\"}", "0}", "e}"};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_RECAP};
    json_oracle_truncate(state_line, tails, JSON_ORACLE_COUNT(tails), sfs, 1);
}

/* Other session formats are not its: it declines them. */
static void test_other_formats_declined(void **state)
{
    (void)state;
    recd_msg m;
    assert_int_equal(recap_json_fast_state(state_line, strlen(state_line), RECD_MSG_FMT_NONE, &m), 0);
    assert_int_equal(
        recap_json_fast_state(state_line, strlen(state_line), RECD_MSG_FMT_SAMP_ONFOOT, &m), 0);
    /* Without a session format the .rec reader stays the fast one (the state fallback's). */
    assert_true(msg_json_fast_reader(RECD_MSG_FMT_NONE) != recap_json_fast_state);
    assert_true(msg_json_fast_reader(RECD_MSG_FMT_RECAP) == recap_json_fast_state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_recordings),
        cmocka_unit_test(test_fast_path_variants),
        cmocka_unit_test(test_edge_lines_agree),
        cmocka_unit_test(test_mutations_agree),
        cmocka_unit_test(test_truncated_lines_agree),
        cmocka_unit_test(test_other_formats_declined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
