/* SPDX-License-Identifier: MIT */
/* The Python and Java clients carry their own format tables (clients/python/recd_client/
 * formats.py, clients/java/src/recd/client/): each must list exactly librecd's formats that have
 * wire hooks, with the same open format byte and, for Python, events where librecd has them. A
 * doctored copy of each table shows the check fails. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/format.h"
#include "recd/format_list.h"
#include "wire/wire_formats.h"

static char *slurp(const char *dir, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* 0 when formats.py's FORMATS holds every wired format (name, byte, events) and no other. */
static int python_disagrees(const char *py, char *why, size_t whylen)
{
    size_t wired = 0;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!f->wire)
            continue;
        wired++;
        char entry[96];
        snprintf(entry, sizeof entry, "WireFormat(\"%s\", %u,", f->name, f->wire->code);
        const char *at = strstr(py, entry), *end = at ? strchr(at, '\n') : NULL;
        if (!at || !end)
            return snprintf(why, whylen, "python: no %s with byte %u", f->name, f->wire->code), 1;
        const char *none = strstr(at, ", None)"); /* the entry's last field: its event encoder */
        bool no_events = none && none < end;
        if (no_events != (f->wire->event_read == NULL))
            return snprintf(why, whylen, "python: %s's events differ", f->name), 1;
    }
    if (count_of(py, "WireFormat(\"") != wired)
        return snprintf(why, whylen, "python: %zu entries, librecd has %zu",
                        count_of(py, "WireFormat(\""), wired), 1;
    return 0;
}

/* 0 when Formats.TABLE names every wired format and no other, each defined with librecd's byte
 * (java is the client's sources, concatenated). */
static int java_disagrees(const char *table, const char *java, char *why, size_t whylen)
{
    size_t wired = 0;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!f->wire)
            continue;
        wired++;
        char entry[96], samp[96], named[96], code[64];
        snprintf(entry, sizeof entry, "\"%s\", ", f->name);
        snprintf(samp, sizeof samp, "(\"%s\", %u)", f->name, f->wire->code);
        snprintf(named, sizeof named, "name() { return \"%s\"; }", f->name);
        snprintf(code, sizeof code, "code() { return %u; }", f->wire->code);
        const char *def = strstr(java, named);
        bool coded = strstr(java, samp) || (def && strstr(def, code) &&
                                            strstr(def, code) - def < 200);
        if (!strstr(table, entry) || !coded)
            return snprintf(why, whylen, "java: no %s with byte %u", f->name, f->wire->code), 1;
    }
    const char *map = strstr(table, "Map.of(");
    if (!map || count_of(map, "\", ") != wired)
        return snprintf(why, whylen, "java: TABLE's entries differ from librecd's %zu", wired), 1;
    return 0;
}

static const char *source_dir(void)
{
    const char *dir = getenv("RECD_SOURCE_DIR");
    if (!dir)
        skip();
    return dir;
}

static void python_matches(void **state)
{
    (void)state;
    char why[160] = "";
    char *py = slurp(source_dir(), "clients/python/recd_client/formats.py");
    if (python_disagrees(py, why, sizeof why))
        fail_msg("%s", why);
    char *bad = strstr(py, "WireFormat(\"recap\", 3,"); /* a doctored copy must fail */
    assert_non_null(bad);
    bad[strlen("WireFormat(\"recap\", ")] = '7';
    assert_int_equal(python_disagrees(py, why, sizeof why), 1);
    assert_string_equal(why, "python: no recap with byte 3");
    free(py);
    py = slurp(source_dir(), "clients/python/recd_client/formats.py");
    bad = strstr(py, "recap_state, recap_event)"); /* recap without its events must fail too */
    assert_non_null(bad);
    memmove(bad + 13, "None)", 5);
    memmove(bad + 18, bad + 25, strlen(bad + 25) + 1);
    assert_int_equal(python_disagrees(py, why, sizeof why), 1);
    assert_string_equal(why, "python: recap's events differ");
    free(py);
}

static void java_matches(void **state)
{
    (void)state;
    const char *dir = source_dir();
    static const char *const files[] = {"SampFormats.java", "RecapFormat.java", "CarlaFormat.java"};
    char *table = slurp(dir, "clients/java/src/recd/client/Formats.java");
    char *java = calloc(1, 3 << 20);
    for (size_t i = 0; i < 3; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "clients/java/src/recd/client/%s", files[i]);
        char *one = slurp(dir, rel);
        strcat(java, one);
        free(one);
    }
    char why[160] = "";
    if (java_disagrees(table, java, why, sizeof why))
        fail_msg("%s", why);
    char *bad = strstr(table, "\"carla\", "); /* a doctored copy must fail */
    assert_non_null(bad);
    memcpy(bad, "\"carlo\"", 7);
    assert_int_equal(java_disagrees(table, java, why, sizeof why), 1);
    assert_string_equal(why, "java: no carla with byte 4");
    free(table);
    free(java);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(python_matches),
        cmocka_unit_test(java_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
