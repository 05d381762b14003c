/* SPDX-License-Identifier: MIT */
/* The tree-free state reader: its number parser equals strtod on random and edge-case text, it
 * takes the common lines without jansson, and on mutated lines it gives the jansson reader's
 * decision, values and error text. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rec/rec_json_fast.h"
#include "json_oracle.h"
#include "message/json/msg_json_formats.h"
#include "base/text.h"
#include "recd/message.h"

static const char onfoot_line[] =
    "{\"type\":\"state\",\"session\":\"s-1\",\"seq\":7,\"t\":100,\"left_right\":0,\"up_down\":-128,"
    "\"keys\":8,\"position\":[1.5,2.0,-0.0],\"rotation\":[1.0,0.0,0.0,0.0],\"health\":100,"
    "\"armour\":0,\"weapon\":22,\"additional_key\":0,\"special_action\":0,\"velocity\":[0.0,0.0,"
    "1e-45],\"surf_offset\":[0.0,0.0,0.0],\"surf_id\":0,\"anim_id\":1189,\"anim_flags\":{"
    "\"frame_delta\":4,\"loop\":false,\"lock_x\":true,\"lock_y\":false,\"freeze\":false,"
    "\"time\":8}}";
static const char vehicle_line[] =
    "{\"type\":\"state\",\"t\":31,\"vehicle_id\":1,\"left_right\":0,\"up_down\":0,\"keys\":0,"
    "\"rotation\":[0.7,0.0,0.0,-0.7],\"position\":[1697.0,-1953.6,14.8],\"velocity\":[0.0,0.0,"
    "0.0],\"vehicle_health\":1000.0,\"driver_health\":100,\"driver_armour\":0,\"weapon\":0,"
    "\"additional_key\":0,\"siren\":0,\"landing_gear\":0,\"trailer_id\":0,\"train_speed\":-0.17}";
static const char hydra_line[] =
    "{ \"type\" : \"state\" , \"hydra_thrust\" : [ 5000 , 0 ] , \"t\":31,\"vehicle_id\":1,"
    "\"left_right\":-1,\"up_down\":0,\"keys\":0,\"rotation\":[1,0,0,0],\"position\":[1e2,"
    "-1953.625,14.8E+1],\"velocity\":[0,0,0],\"vehicle_health\":1000,\"driver_health\":100,"
    "\"driver_armour\":0,\"weapon\":0,\"additional_key\":3,\"siren\":1,\"landing_gear\":0,"
    "\"trailer_id\":0 }\r\n";

/* ---- numbers --------------------------------------------------------------------------------- */

static void check_number(const char *s)
{
    size_t len = strlen(s);
    bool fi = false, si = false;
    int64_t fv = 0, sv = 0;
    double fd = 0, sd = 0;
    bool fok = rec_json_fast_number(s, len, &fi, &fv, &fd);
    bool sok = text_parse_number(s, len, &si, &sv, &sd);
    if (fok != sok)
        fail_msg("\"%s\": fast %d, reference %d", s, fok, sok);
    if (!fok)
        return;
    if (fi != si)
        fail_msg("\"%s\": integer syntax %d vs %d", s, fi, si);
    if (fi && fv != sv)
        fail_msg("\"%s\": %lld vs %lld", s, (long long)fv, (long long)sv);
    if (!fi) {
        double want = strtod(s, NULL);
        if (f64_to_bits(fd) != f64_to_bits(want))
            fail_msg("\"%s\": %.17g vs strtod %.17g", s, fd, want);
    }
}

static void test_number_edge_cases(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0", "-0", "0.0", "-0.0", "1", "-1", "9007199254740992", "9007199254740993",
        "999999999999999", "9999999999999999", "123456789012345678", "1234567890123456789",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "-9223372036854775809", "99999999999999999999", "1e22", "1e23", "1e-22", "1e-23",
        "123456789012345e22", "123456789012345e-22", "1234567890123456e-22", "0.1", "0.2", "0.3",
        "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "-1e309", "4.9e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "2.2250738585072011e-308",
        "3.4028235e38", "3.4028235677973366e+38", "1.401298464324817e-45", "1E5", "1e+5",
        "1e-5", "1e05", "1.0e0", "-1953.6", "14.8", "1697.0", "0.000001", "0.0000000000000000001",
        "00", "01", "-", "+1", ".5", "5.", "1e", "1e+", "1.e5", "--1", "1..2", "1e5.5", "", "0x10",
        "1 ", " 1", "inf", "nan", "1e99999999999", "1e-99999999999", "0e999999999",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_number(cases[i]);
}

static void rand_digits(tu_rng *r, char *out, size_t *n, unsigned count, bool lead_nonzero)
{
    for (unsigned k = 0; k < count; k++) {
        char c = (char)('0' + tu_rand_below(r, 10));
        if (k == 0 && lead_nonzero && c == '0')
            c = '1';
        out[(*n)++] = c;
    }
}

/* Random text from the JSON number grammar, half the time with a random byte changed. */
static void test_number_random_text(void **state)
{
    (void)state;
    tu_rng r = {20261125};
    char s[128];
    for (int iter = 0; iter < 300000; iter++) {
        size_t n = 0;
        if (tu_rand_below(&r, 2))
            s[n++] = '-';
        unsigned id = 1 + tu_rand_below(&r, tu_rand_below(&r, 4) ? 8 : 24);
        if (tu_rand_below(&r, 4) == 0)
            s[n++] = '0';
        else
            rand_digits(&r, s, &n, id, true);
        if (tu_rand_below(&r, 3))
            s[n++] = '.', rand_digits(&r, s, &n, 1 + tu_rand_below(&r, tu_rand_below(&r, 4) ? 8 : 24),
                                       false);
        if (tu_rand_below(&r, 3) == 0) {
            s[n++] = tu_rand_below(&r, 2) ? 'e' : 'E';
            unsigned sign = tu_rand_below(&r, 3);
            if (sign)
                s[n++] = sign == 1 ? '-' : '+';
            rand_digits(&r, s, &n, 1 + tu_rand_below(&r, 3), false);
        }
        if (tu_rand_below(&r, 8) == 0) {
            static const char alphabet[] = "0123456789+-.eE x";
            s[tu_rand_below(&r, (uint32_t)n)] = alphabet[tu_rand_below(&r, sizeof alphabet - 1)];
        }
        s[n] = 0;
        check_number(s);
    }
}

/* Shortest and longer decimal forms of random doubles and floats (what writers send). */
static void test_number_printed_values(void **state)
{
    (void)state;
    tu_rng r = {99};
    char s[64];
    for (int iter = 0; iter < 200000; iter++) {
        double d;
        if (tu_rand_below(&r, 2)) {
            d = f64_from_bits(tu_rand(&r));
        } else {
            float f = f32_from_bits((uint32_t)tu_rand(&r));
            d = f;
        }
        if (d != d || d - d != 0)
            continue;
        snprintf(s, sizeof s, "%.*g", 1 + (int)tu_rand_below(&r, 17), d);
        if (!strpbrk(s, "eE.") && tu_rand_below(&r, 2))
            strcat(s, ".0");
        check_number(s);
        snprintf(s, sizeof s, "%.*f", (int)tu_rand_below(&r, 8), tu_rand_double(&r, -1e5, 1e5));
        check_number(s);
    }
}

/* ---- whole lines ----------------------------------------------------------------------------- */

static void test_fast_path_takes_common_lines(void **state)
{
    (void)state;
    const struct {
        const char *line;
        recd_msg_format sf, want;
    } cases[] = {
        {onfoot_line, RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_ONFOOT},
        {onfoot_line, RECD_MSG_FMT_SAMP_ONFOOT, RECD_MSG_FMT_SAMP_ONFOOT},
        {vehicle_line, RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_VEHICLE},
        {vehicle_line, RECD_MSG_FMT_SAMP_VEHICLE, RECD_MSG_FMT_SAMP_VEHICLE},
        {hydra_line, RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_VEHICLE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].line);
        while (len && (cases[i].line[len - 1] == '\n' || cases[i].line[len - 1] == '\r'))
            len--;
        recd_msg m;
        if (rec_json_fast_state(cases[i].line, len, cases[i].sf, &m) != 1)
            fail_msg("case %zu declined", i);
        assert_int_equal(m.format, cases[i].want);
        recd_msg_free(&m);
        json_oracle_compare(cases[i].line, strlen(cases[i].line), cases[i].sf);
    }
    /* Not its business: other types, Recap, a session of the other .rec format. */
    recd_msg m;
    assert_int_equal(rec_json_fast_state(vehicle_line, strlen(vehicle_line),
                                         RECD_MSG_FMT_SAMP_ONFOOT, &m), 0);
    assert_int_equal(rec_json_fast_state(onfoot_line, strlen(onfoot_line), RECD_MSG_FMT_RECAP, &m), 0);
    const char *open = "{\"type\":\"open\",\"format\":\"samp-onfoot\"}";
    assert_int_equal(rec_json_fast_state(open, strlen(open), RECD_MSG_FMT_NONE, &m), 0);
}

/* The documented errors come out word for word, because the fast reader declines them. */
static void test_errors_are_jansson_errors(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *err;
    } cases[] = {
        {"\"health\":100", "\"health\":100,\"health\":100", "invalid JSON at column"},
        {"\"health\":100", "\"health\":300", "state.health: 300 does not fit u8"},
        {"\"health\":100", "\"health\":1e999", "invalid JSON at column"},
        {"\"health\":100", "\"health\":100,\"colour\":1", "state: unknown key \"colour\""},
        {"\"health\":100,", "", "state: missing key \"health\" (samp-onfoot)"},
        {"\"loop\":false", "\"loop\":0", "state.anim_flags.loop: expected true or false, got an integer"},
        {"\"loop\":false", "\"loop\":false,\"loop\":true", "invalid JSON at column"},
        {"[1.5,2.0,-0.0]", "[1.5,2.0]", "state.position: expected an array of 3 numbers"},
        {"\"t\":100", "\"t\":4294967296", "state.t: 4294967296 does not fit u32"},
        {"\"t\":100", "\"t\":1.5", "state.t: expected an integer, got a real number"},
        {"\"seq\":7", "\"seq\":-1", "state.seq: -1 is below 0"},
        {"\"s-1\"", "\".bad\"", "state.session: \".bad\" is not a valid session key"},
        {"\"s-1\"", "\"s\xC3\x28\"", "invalid JSON at column"},
        {"1e-45", "3.5e38", "state.velocity[2]: 3.5e+38 does not fit f32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[1024], err[256] = "";
        json_oracle_replace(line, sizeof line, onfoot_line, cases[i].from, cases[i].to);
        recd_msg m;
        if (recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_NONE, &m, err, sizeof err) == 0)
            fail_msg("accepted %s", line);
        if (strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
            fail_msg("%s: \"%s\", want \"%s...\"", line, err, cases[i].err);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_NONE);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_SAMP_ONFOOT);
    }
}

/* Values at the edges of each field's range, which the fast reader checks inline: both readers
 * take or refuse each one alike, with the same value. */
static void test_range_edges_agree(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"\"health\":100", "\"health\":255"},   {"\"health\":100", "\"health\":256"},
        {"\"health\":100", "\"health\":-1"},    {"\"health\":100", "\"health\":-0"},
        {"\"up_down\":-128", "\"up_down\":-32768"}, {"\"up_down\":-128", "\"up_down\":-32769"},
        {"\"up_down\":-128", "\"up_down\":32767"},  {"\"up_down\":-128", "\"up_down\":32768"},
        {"\"keys\":8", "\"keys\":65535"},       {"\"keys\":8", "\"keys\":65536"},
        {"\"t\":100", "\"t\":4294967295"},      {"\"t\":100", "\"t\":4294967296"},
        {"\"t\":100", "\"t\":-9223372036854775808"}, {"\"weapon\":22", "\"weapon\":63"},
        {"\"weapon\":22", "\"weapon\":64"},     {"\"additional_key\":0", "\"additional_key\":3"},
        {"\"additional_key\":0", "\"additional_key\":4"}, {"\"time\":8", "\"time\":15"},
        {"\"time\":8", "\"time\":16"},          {"\"frame_delta\":4", "\"frame_delta\":256"},
        {"1e-45", "3.4028234e38"},              {"1e-45", "-3.4028234663852886e38"},
        {"1e-45", "3.4028235e38"},              {"1e-45", "3.4028235677973366e38"},
        {"1e-45", "3.4028235677973367e38"},     {"1e-45", "1e-46"},
        {"1e-45", "7"},                         {"1e-45", "-9223372036854775808"},
        {"1e-45", "123456789012345678"},        {"\"health\":100", "\"health\":1.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[1024];
        json_oracle_replace(line, sizeof line, onfoot_line, cases[i].from, cases[i].to);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_NONE);
        json_oracle_compare(line, strlen(line), RECD_MSG_FMT_SAMP_ONFOOT);
    }
}

/* Random edits of the canonical lines: both readers agree on every one. */
static void test_mutations_agree(void **state)
{
    (void)state;
    static const char *const lines[] = {onfoot_line, vehicle_line, hydra_line};
    static const char *const inserts[] = {" ", ",", "\"", "{", "}", "[", "]", ":", "0", "-", ".",
                                          "e", "1e400", "true", "\"t\":1", "\\u0074", "\xC3\xA9",
                                          "\xFF", "\"vehicle_id\":1,", "\"tick\":0,", "\"seq\":1,"};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_ONFOOT,
                                          RECD_MSG_FMT_SAMP_VEHICLE, RECD_MSG_FMT_RECAP};
    for (size_t l = 0; l < JSON_ORACLE_COUNT(lines); l++) {
        json_oracle_mutations m = {inserts, JSON_ORACLE_COUNT(inserts), sfs,
                                   JSON_ORACLE_COUNT(sfs), 7000, 5 + l};
        json_oracle_mutate(lines[l], strlen(lines[l]), &m);
    }
}

/* Every prefix of the canonical lines closed by one to three '}' (the byte that bounds the fast
 * reader's scans, now closing the line anywhere), with and without spaces around it. */
static void test_truncated_lines_agree(void **state)
{
    (void)state;
    static const char *const lines[] = {onfoot_line, vehicle_line, hydra_line};
    static const char *const tails[] = {"}", "}}", "}}}", " } ", "]}", "\"}", "0}", "e}", "-}"};
    static const recd_msg_format sfs[] = {RECD_MSG_FMT_NONE, RECD_MSG_FMT_SAMP_ONFOOT,
                                          RECD_MSG_FMT_SAMP_VEHICLE};
    for (size_t l = 0; l < JSON_ORACLE_COUNT(lines); l++)
        json_oracle_truncate(lines[l], tails, JSON_ORACLE_COUNT(tails), sfs,
                             JSON_ORACLE_COUNT(sfs));
}

/* The UTF-8 check skips ASCII eight bytes at a time. A text under eight bytes is checked byte by
 * byte; with ASCII around it (which changes no answer) it falls at every offset of those words. */
static void test_utf8_check_alignment(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xC3",
                                         "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xC0\xAF", "\x80", "\xFF"};
    tu_rng r = {8};
    int invalid = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char s[16];
        size_t n = 0;
        for (unsigned k = 1 + tu_rand_below(&r, 4); k; k--) {
            const char *p = pieces[tu_rand_below(&r, 10)];
            if (n + strlen(p) > 7)
                break;
            memcpy(s + n, p, strlen(p));
            n += strlen(p);
        }
        bool valid = text_utf8_valid((const uint8_t *)s, n); /* byte by byte */
        invalid += !valid;
        char buf[40];
        for (size_t pre = 0; pre < 17; pre++) {
            memset(buf, 'x', pre);
            memcpy(buf + pre, s, n);
            for (size_t post = 0; post < 17; post += 8) {
                memset(buf + pre + n, 'y', post);
                if (text_utf8_valid((const uint8_t *)buf, pre + n + post) != valid)
                    fail_msg("%zu bytes after %zu ASCII: want %d", n, pre, valid);
            }
        }
    }
    assert_true(invalid > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_edge_cases),
        cmocka_unit_test(test_number_random_text),
        cmocka_unit_test(test_number_printed_values),
        cmocka_unit_test(test_fast_path_takes_common_lines),
        cmocka_unit_test(test_errors_are_jansson_errors),
        cmocka_unit_test(test_range_edges_agree),
        cmocka_unit_test(test_mutations_agree),
        cmocka_unit_test(test_truncated_lines_agree),
        cmocka_unit_test(test_utf8_check_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
