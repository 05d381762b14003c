/* SPDX-License-Identifier: MIT */
/* Path templates: config-time rejection with reasons, rendering, hostile values, suffixes. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recd/path_template.h"

static recd_path_vars vars(const char *format, const char *session, int64_t start_ms)
{
    const char *ext = strcmp(format, "recap") == 0 ? "recap" : "rec";
    recd_path_vars v = {format, ext, session, start_ms, 0, NULL};
    return v;
}

static void expect_reject(const char *text, int err, const char *why_contains)
{
    recd_path_template t;
    char why[256] = "";
    int rc = recd_path_template_parse(&t, text, why, sizeof why);
    if (rc != err || !strstr(why, why_contains))
        fail_msg("template '%s': rc %d (want %d), why '%s' (want '%s')", text, rc, err, why,
                 why_contains);
}

static void test_rejects(void **state)
{
    (void)state;
    expect_reject("", -EINVAL, "empty");
    expect_reject("/var/rec/{session}.{ext}", -EINVAL, "absolute");
    expect_reject("../{session}.{ext}", -EINVAL, "'..'");
    expect_reject("a/../{session}.{ext}", -EINVAL, "'..'");
    expect_reject("./{session}.{ext}", -EINVAL, "'.'");
    expect_reject(".hidden/{session}.{ext}", -EINVAL, "starts with '.'");
    expect_reject("a//{session}.{ext}", -EINVAL, "empty component");
    expect_reject("{session}.{ext}/", -EINVAL, "ends with '/'");
    expect_reject("{sesion}/{start}.{ext}", -EINVAL, "unknown placeholder '{sesion}'");
    expect_reject("{session/{start}.{ext}", -EINVAL, "unbalanced");
    expect_reject("{session}/{start.{ext}", -EINVAL, "unbalanced");
    expect_reject("{session}}/{start}.{ext}", -EINVAL, "unbalanced");
    expect_reject("{session}/{start}.{ext", -EINVAL, "unbalanced");
    expect_reject("{format}/{start}.{ext}", -EINVAL, "no {session}");
    expect_reject("{format}/{session}", -EINVAL, "'.{ext}'");
    expect_reject("{session}.{ext}/x", -EINVAL, "'.{ext}'");
    expect_reject("{session}/{start:%Y/%m}.{ext}", -EINVAL, "'/' inside");
    expect_reject("{session}/{start:%Q}.{ext}", -EINVAL, "unsupported strftime");
    expect_reject("{session}/{start:%}.{ext}", -EINVAL, "unsupported strftime");
    expect_reject("{session}/{start:}.{ext}", -EINVAL, "needs a format");
    expect_reject("{session}/{part:3}.{ext}", -EINVAL, "takes no format");
    expect_reject("my recs/{session}.{ext}", -EINVAL, "not allowed");
    expect_reject("a\\b/{session}.{ext}", -EINVAL, "not allowed");
    char longtext[700];
    memset(longtext, 'a', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    expect_reject(longtext, -ENAMETOOLONG, "longer than");
    /* A literal 230-byte file name fits the template limit but not a rendered component. */
    char longname[300];
    snprintf(longname, sizeof longname, "{session}/%0230d.{ext}", 7);
    expect_reject(longname, -ENAMETOOLONG, "longer than");
}

static void test_accepts_and_session_dir(void **state)
{
    (void)state;
    recd_path_template t;
    char why[256] = "";
    assert_int_equal(recd_path_template_parse(&t, RECD_PATH_TEMPLATE_DEFAULT, why, sizeof why), 0);
    assert_true(t.session_dir);
    assert_int_equal(recd_path_template_parse(&t, "{session}-{start}.{ext}", why, sizeof why), 0);
    assert_false(t.session_dir); /* no directory at all */
    assert_int_equal(
        recd_path_template_parse(&t, "{session}/{date}/{time}.{ext}", why, sizeof why), 0);
    assert_false(t.session_dir); /* one directory per day, not per session */
    assert_int_equal(
        recd_path_template_parse(&t, "rec/{format}/s={session}/{start:%Y%m%d}-{part}.{ext}", why,
                                 sizeof why), 0);
    assert_true(t.session_dir);
}

static void expect_render(const char *tmpl, recd_path_vars v, const char *want)
{
    recd_path_template t;
    char why[256] = "", out[RECD_PATH_MAX];
    if (recd_path_template_parse(&t, tmpl, why, sizeof why) != 0)
        fail_msg("template '%s' rejected: %s", tmpl, why);
    int n = recd_path_render(&t, &v, out, sizeof out);
    if (n < 0 || strcmp(out, want) != 0 || (size_t)n != strlen(want))
        fail_msg("'%s' rendered %d '%s', want '%s'", tmpl, n, n < 0 ? "" : out, want);
    assert_true(recd_path_relative_ok(out));
}

static void test_render(void **state)
{
    (void)state;
    /* 1700000000 s = 2023-11-14 22:13:20 UTC */
    recd_path_vars v = vars("samp-onfoot", "abc", INT64_C(1700000000123));
    expect_render(RECD_PATH_TEMPLATE_DEFAULT, v, "samp-onfoot/abc/20231114T221320Z.rec");
    v.part = 7;
    expect_render("{session}/{date}/{time}-{part}.{ext}", v, "abc/2023-11-14/221320-7.rec");
    expect_render("{session}/{start:%s}.{ext}", v, "abc/1700000000.rec");
    /* strftime output is sanitised: %D has '/', %T has ':', %c has spaces. */
    expect_render("{session}/{start:%D}.{ext}", v, "abc/11-14-23.rec");
    expect_render("{session}/{start:%T}.{ext}", v, "abc/22-13-20.rec");
    expect_render("{session}/{start:%a %b}.{ext}", v, "abc/Tue-Nov.rec");
    expect_render("{session}/x{start:.%Y}.{ext}", v, "abc/x.2023.rec");
    expect_render("{session}/{start:.%Y}.{ext}", v, "abc/-2023.rec"); /* never a dot-leading name */
    recd_path_vars r = vars("recap", "match-7_p.1", -1);
    expect_render(RECD_PATH_TEMPLATE_DEFAULT, r, "recap/match-7_p.1/19691231T235959Z.recap");
    recd_path_vars veh = vars("samp-vehicle", "k", 0);
    expect_render("{format}/{session}.{ext}", veh, "samp-vehicle/k.rec");
    /* A fleet's parts of one session, told apart by the instance that wrote them. */
    v.instance = "rec-b";
    expect_render("{session}/{part}-{instance}.{ext}", v, "abc/7-rec-b.rec");
    expect_render("{instance}/{session}/{start}.{ext}", v, "rec-b/abc/20231114T221320Z.rec");
}

static void test_render_rejects_hostile_values(void **state)
{
    (void)state;
    recd_path_template t;
    assert_int_equal(recd_path_template_parse(&t, RECD_PATH_TEMPLATE_DEFAULT, NULL, 0), 0);
    char out[RECD_PATH_MAX];
    const char *bad_keys[] = {"", ".", "..", ".hidden", "../etc", "a/b", "a b", "a\\b", "k\n",
                              "\xc3\xa4", "x{y}",
                              "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"};
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        recd_path_vars v = vars("samp-onfoot", bad_keys[i], 0);
        if (recd_path_render(&t, &v, out, sizeof out) != -EINVAL)
            fail_msg("hostile key #%zu accepted", i);
        assert_false(recd_path_session_key_ok(bad_keys[i]));
    }
    assert_true(recd_path_session_key_ok("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                                         "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"));
    recd_path_vars v = vars("samp-onfoot", "ok", 0);
    v.format = "../../etc";
    assert_int_equal(recd_path_render(&t, &v, out, sizeof out), -EINVAL);
    v = vars("recap", "ok", 0);
    v.ext = "rec"; /* does not match the format */
    assert_int_equal(recd_path_render(&t, &v, out, sizeof out), -EINVAL);
    v = vars("samp-onfoot", "ok", 0);
    v.ext = "sh";
    assert_int_equal(recd_path_render(&t, &v, out, sizeof out), -EINVAL);
    v = vars("samp-onfoot", "ok", INT64_MAX);
    assert_int_equal(recd_path_render(&t, &v, out, sizeof out), -ERANGE);
    /* {instance} needs a name, and a name as safe as a session key. */
    recd_path_template ti;
    assert_int_equal(recd_path_template_parse(&ti, "{session}/{instance}.{ext}", NULL, 0), 0);
    v = vars("samp-onfoot", "ok", 0);
    assert_int_equal(recd_path_render(&ti, &v, out, sizeof out), -EINVAL);
    v.instance = "../up";
    assert_int_equal(recd_path_render(&ti, &v, out, sizeof out), -EINVAL);
    v.instance = "rec-a";
    assert_true(recd_path_render(&ti, &v, out, sizeof out) > 0);
    assert_string_equal(out, "ok/rec-a.rec");
    v = vars("samp-onfoot", "ok", 0);
    char tiny[8];
    assert_int_equal(recd_path_render(&t, &v, tiny, sizeof tiny), -ENAMETOOLONG);
}

static void test_relative_ok(void **state)
{
    (void)state;
    assert_true(recd_path_relative_ok("a/b/c.rec"));
    assert_true(recd_path_relative_ok("c.rec.part"));
    assert_false(recd_path_relative_ok(""));
    assert_false(recd_path_relative_ok("/a"));
    assert_false(recd_path_relative_ok("a//b"));
    assert_false(recd_path_relative_ok("a/"));
    assert_false(recd_path_relative_ok("a/../b"));
    assert_false(recd_path_relative_ok("a/./b"));
    assert_false(recd_path_relative_ok("a/.b"));
    assert_false(recd_path_relative_ok("a/b c"));
    assert_false(recd_path_relative_ok(NULL));
}

static void test_suffix(void **state)
{
    (void)state;
    char out[RECD_PATH_MAX];
    assert_int_equal(recd_path_with_suffix("a/x.rec", 2, out, sizeof out), 9);
    assert_string_equal(out, "a/x-2.rec");
    assert_true(recd_path_with_suffix("a.d/x", 1, out, sizeof out) > 0);
    assert_string_equal(out, "a.d/x-1");
    assert_true(recd_path_with_suffix("x.tar.recap", 10, out, sizeof out) > 0);
    assert_string_equal(out, "x.tar-10.recap");
    assert_int_equal(recd_path_with_suffix("a/x.rec", 2, out, 5), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_accepts_and_session_dir),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_render_rejects_hostile_values),
        cmocka_unit_test(test_relative_ok),
        cmocka_unit_test(test_suffix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
