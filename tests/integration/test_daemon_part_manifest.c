/* SPDX-License-Identifier: MIT */
/* recd end to end with output.part_manifest: a session rotated into several parts gets one
 * NAME.json beside each part, and only once that part is finalized; the manifests name the
 * session, the instance and the part number the file name shows, and their sequence numbers,
 * sample counts and sample times, put in part order, cover exactly what was sent. A part that
 * kill -9 left unfinished gets its manifest from recovery. Without the option no manifest is
 * written. */
#include "test_daemon_harness.h"

#include <jansson.h>

#define SEQ0 1000u /* the first sample's sequence number */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool listed(const td_files *f, const char *path)
{
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->items[i].path, path) == 0)
            return true;
    return false;
}

/* Every manifest lies beside a finalized part, and no unfinished part has one; an in-progress
 * manifest (NAME.part.json) lies beside its .part, or beside the part the writer has just
 * renamed and not yet removed it for. */
static void check_only_finalized(const td_files *f)
{
    for (size_t i = 0; i < f->count; i++) {
        char other[1100], final[1100];
        const char *p = f->items[i].path;
        size_t n = strlen(p);
        if (ends_with(p, ".part.json")) {
            snprintf(other, sizeof other, "%.*s", (int)(n - 5), p);
            snprintf(final, sizeof final, "%.*s", (int)(n - 10), p);
            if (!listed(f, other) && !listed(f, final))
                fail_msg("%s lies beside no part", p);
        } else if (ends_with(p, ".json")) {
            snprintf(other, sizeof other, "%.*s", (int)(n - 5), p);
            if (!listed(f, other))
                fail_msg("%s lies beside no finalized part", p);
        } else if (ends_with(p, ".part")) {
            snprintf(other, sizeof other, "%.*s.json", (int)(n - 5), p);
            if (listed(f, other))
                fail_msg("%s: the unfinished part has a manifest", p);
        }
    }
}

static void write_config(td_daemon *d, bool manifests)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "listen:\n  - tcp://127.0.0.1:0\n  - udp://127.0.0.1:0\n  - unix://%s/in.sock\n"
             "output:\n  root: %s\n  path_template: \"{format}/{session}/{part}-{instance}.{ext}\"\n"
             "  part_manifest: %s\n"
             "metrics:\n  listen: 127.0.0.1:0\n"
             "rotation:\n  max_size: 64KiB\n"
             "flush:\n  interval: 100ms\n",
             d->dir, d->out, manifests ? "true" : "false");
    td_rewrite_config(d, yaml);
}

/* Sends states of s until it ends or max were sent, numbered from *seq on. */
static void send_states(recd_client *c, td_rec_session *s, uint64_t *seq, unsigned max)
{
    recd_msg m;
    for (unsigned i = 0; i < max && td_rec_session_next(s, &m); i++) {
        m.has_seq = true;
        m.seq = (*seq)++;
        td_send(c, &m);
    }
    assert_int_equal(recd_client_flush(c), 0);
}

static json_int_t int_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("manifest: %s is not an integer", key);
    return json_integer_value(v);
}

static const char *text_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        fail_msg("manifest: %s is not a string", key);
    return json_string_value(v);
}

typedef struct part_seen {
    char path[1024];
    json_t *m;
    json_int_t part;
} part_seen;

static int by_part(const void *a, const void *b)
{
    json_int_t x = ((const part_seen *)a)->part, y = ((const part_seen *)b)->part;
    return (x > y) - (x < y);
}

static void test_manifests_follow_the_parts(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    write_config(&d, true);
    td_start(&d);
    const char *key = "walk.one_1";
    td_rec_session s;
    td_rec_session_init(&s, key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 300000, 7);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, key, RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    uint64_t seq = SEQ0;
    send_states(c, &s, &seq, 2500);
    /* A part was rotated and finalized while the session goes on: listed only then. */
    assert_true(td_wait_metric(&d, "recd_part_manifests_total", 1, 20000) >= 1);
    td_files f = td_session_files(&d, "samp-onfoot", key);
    check_only_finalized(&f);
    td_files_free(&f);
    send_states(c, &s, &seq, UINT32_MAX);
    td_send_close(c, key, RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    uint64_t sent = seq - SEQ0;
    assert_int_equal(sent, s.blocks);
    assert_true(td_metric(&d, "recd_part_manifest_failures_total") == 0);
    td_stop(&d); /* a graceful stop: the last part is finalized */

    f = td_session_files(&d, "samp-onfoot", key);
    assert_int_equal(f.parts, 0);
    check_only_finalized(&f);
    part_seen parts[64];
    size_t nparts = 0, nrec = 0;
    for (size_t i = 0; i < f.count; i++) {
        const char *p = f.items[i].path;
        if (ends_with(p, ".rec")) {
            nrec++;
            continue;
        }
        assert_true(ends_with(p, ".rec.json"));
        assert_true(nparts < 64);
        char full[2100];
        snprintf(full, sizeof full, "%s/%s", d.out, p);
        json_error_t err;
        json_t *m = json_load_file(full, JSON_REJECT_DUPLICATES, &err);
        if (!m)
            fail_msg("%s: %s", p, err.text);
        snprintf(parts[nparts].path, sizeof parts[nparts].path, "%.*s", (int)(strlen(p) - 5), p);
        parts[nparts].m = m;
        parts[nparts].part = int_at(m, "part");
        nparts++;
    }
    assert_int_equal(nparts, nrec);
    assert_true(nparts >= 2);
    qsort(parts, nparts, sizeof *parts, by_part);

    uint64_t next_seq = SEQ0, block = 0, total = 0;
    int64_t prev_end = 0;
    for (size_t i = 0; i < nparts; i++) {
        json_t *m = parts[i].m;
        assert_string_equal(text_at(m, "manifest"), "recd-part");
        assert_int_equal(int_at(m, "version"), 1);
        assert_string_equal(text_at(m, "session"), key);
        assert_string_equal(text_at(m, "format"), "samp-onfoot");
        assert_string_equal(text_at(m, "file"), parts[i].path);
        assert_int_equal(parts[i].part, (json_int_t)i); /* 0, 1, 2 ... with nothing missing */
        /* The file name is {part}-{instance}.rec: the manifest says the same. */
        const char *leaf = strrchr(parts[i].path, '/') + 1;
        char expect_leaf[512];
        snprintf(expect_leaf, sizeof expect_leaf, "%lld-%s.rec", (long long)parts[i].part,
                 text_at(m, "instance"));
        assert_string_equal(leaf, expect_leaf);
        /* Sequence numbers continue from part to part; counts are the part's blocks. */
        size_t len;
        char rel[1024]; /* bounded here: gcc then bounds td_read_output's path too */
        size_t rel_len = strnlen(parts[i].path, sizeof rel - 1);
        memcpy(rel, parts[i].path, rel_len);
        rel[rel_len] = '\0';
        uint8_t *data = td_read_output(&d, rel, &len);
        recd_rec_info info;
        assert_int_equal(recd_rec_probe(data, len, &info, NULL), 0);
        free(data);
        json_int_t samples = int_at(m, "samples");
        assert_int_equal(samples, info.block_count);
        assert_int_equal(int_at(m, "first_seq"), next_seq);
        assert_int_equal(int_at(m, "last_seq"), next_seq + (uint64_t)samples - 1);
        /* Sample times on the session clock: those of the part's first and last original blocks. */
        const uint8_t *orig = s.expect.data + RECD_REC_HEADER_SIZE;
        assert_int_equal(int_at(m, "first_time_ms"),
                         recd_rec_block_time(orig + block * RECD_REC_ONFOOT_BLOCK_SIZE));
        assert_int_equal(int_at(m, "last_time_ms"),
                         recd_rec_block_time(orig + (block + (uint64_t)samples - 1) *
                                                        RECD_REC_ONFOOT_BLOCK_SIZE));
        /* Wall-clock start and end, in order from part to part. */
        json_int_t start = int_at(m, "start_ms"), end = int_at(m, "end_ms");
        assert_true(start > 1700000000000 && start <= end && start >= prev_end);
        assert_true(ends_with(text_at(m, "start"), "Z") && ends_with(text_at(m, "end"), "Z"));
        assert_int_equal(strlen(text_at(m, "start")), strlen("2026-11-26T04:44:27.123Z"));
        prev_end = end;
        next_seq += (uint64_t)samples;
        block += (uint64_t)samples;
        total += (uint64_t)samples;
        json_decref(m);
    }
    assert_int_equal(total, sent);
    print_message("%zu parts, %llu samples\n", nparts, (unsigned long long)total);
    assert_int_equal(next_seq, seq);
    td_files_free(&f);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

static json_t *load_manifest(const td_daemon *d, const char *rel)
{
    char full[2100];
    snprintf(full, sizeof full, "%s/%s", d->out, rel);
    json_error_t err;
    json_t *m = json_load_file(full, JSON_REJECT_DUPLICATES, &err);
    if (!m)
        fail_msg("%s: %s", rel, err.text);
    return m;
}

/* Samples the session's manifests account for: finalized ones and the in-progress one. */
static uint64_t samples_on_record(const td_daemon *d, const char *key, bool *in_progress)
{
    td_files f = td_session_files(d, "samp-onfoot", key);
    uint64_t n = 0;
    *in_progress = false;
    for (size_t i = 0; i < f.count; i++) {
        const char *p = f.items[i].path;
        if (!ends_with(p, ".json"))
            continue;
        char full[2100];
        snprintf(full, sizeof full, "%s/%s", d->out, p);
        json_t *m = json_load_file(full, 0, NULL); /* NULL: renamed away meanwhile */
        if (m && json_is_integer(json_object_get(m, "samples")))
            n += (uint64_t)json_integer_value(json_object_get(m, "samples"));
        *in_progress |= m && ends_with(p, ".part.json") &&
                        json_is_true(json_object_get(m, "in_progress"));
        json_decref(m);
    }
    td_files_free(&f);
    return n;
}

/* kill -9 while a part is written: its in-progress manifest, stored after each flush, becomes
 * the manifest of the part recovery finalizes at the next start (marked recovered), so every
 * part has one and together they cover every sample sent. */
static void test_a_crashed_part_gets_its_manifest_at_recovery(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    write_config(&d, true);
    td_start(&d);
    const char *key = "crash.one_1";
    td_rec_session s;
    td_rec_session_init(&s, key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 100000, 5);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, key, RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    uint64_t seq = SEQ0;
    send_states(c, &s, &seq, 1500); /* about 1.6 parts of 64 KiB */
    uint64_t sent = seq - SEQ0;
    /* Flushes every 100 ms: wait until the manifests on disk account for every sample. */
    uint64_t deadline = td_deadline(20000);
    bool in_progress = false;
    while (samples_on_record(&d, key, &in_progress) != sent || !in_progress) {
        if (td_now_ms() > deadline)
            fail_msg("the manifests never accounted for the %llu samples sent",
                     (unsigned long long)sent);
        td_sleep_ms(20);
    }
    assert_int_equal(td_signal_wait(&d, SIGKILL), 128 + SIGKILL);
    td_close_client(c);
    td_files f = td_session_files(&d, "samp-onfoot", key);
    assert_int_equal(f.parts, 1);
    td_files_free(&f);

    td_start(&d); /* recovery finalizes the .part and completes its manifest */
    td_stop(&d);
    f = td_session_files(&d, "samp-onfoot", key);
    assert_int_equal(f.parts, 0);
    check_only_finalized(&f);
    uint64_t total = 0, recovered = 0, nrec = 0, nmanifests = 0;
    for (size_t i = 0; i < f.count; i++) {
        const char *p = f.items[i].path;
        if (ends_with(p, ".rec")) {
            nrec++;
            continue;
        }
        assert_false(ends_with(p, ".part.json"));
        json_t *m = load_manifest(&d, p);
        nmanifests++;
        char part_path[1024];
        snprintf(part_path, sizeof part_path, "%.*s", (int)(strlen(p) - 5), p);
        assert_string_equal(text_at(m, "file"), part_path);
        assert_null(json_object_get(m, "in_progress"));
        json_int_t samples = int_at(m, "samples");
        size_t len;
        uint8_t *data = td_read_output(&d, part_path, &len);
        recd_rec_info info;
        assert_int_equal(recd_rec_probe(data, len, &info, NULL), 0);
        free(data);
        assert_int_equal(samples, info.block_count);
        if (json_is_true(json_object_get(m, "recovered"))) {
            recovered++;
            assert_int_equal(int_at(m, "part"), 1); /* the part the crash left unfinished */
            assert_int_equal(int_at(m, "last_seq"), seq - 1);
        } else {
            assert_true(json_is_false(json_object_get(m, "recovered")));
            assert_int_equal(int_at(m, "first_seq"), SEQ0);
        }
        total += (uint64_t)samples;
        json_decref(m);
    }
    assert_int_equal(recovered, 1);
    assert_int_equal(nmanifests, nrec);
    assert_int_equal(total, sent);
    td_files_free(&f);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* The option off (the default): parts only. */
static void test_no_manifest_by_default(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    write_config(&d, false);
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "plain", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 3);
    td_send_rec_session(d.tcp, &s, 1763213398000);
    td_stop(&d);
    td_files f = td_session_files(&d, "samp-onfoot", "plain");
    assert_true(f.count >= 1);
    for (size_t i = 0; i < f.count; i++)
        assert_false(ends_with(f.items[i].path, ".json"));
    td_files_free(&f);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_manifests_follow_the_parts),
        td_unit_test(test_a_crashed_part_gets_its_manifest_at_recovery),
        td_unit_test(test_no_manifest_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
