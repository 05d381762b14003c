/* SPDX-License-Identifier: MIT */
/* The StormLib worker's life (lib/src/formats/sc2/sc2_mpq.c): kept between good replays, replaced
 * after a crash, a stall, a damaged archive or a death while idle, private to the process that
 * forked it, and shared by threads in turn. The damaged replays are corpus replays with a few
 * bytes changed here at run time; skips without the corpus. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/sc2/sc2_mpq.h"

static const char *const wanted[] = {"replay.details", "replay.tracker.events"};
#define NWANTED 2

/* A byte to set in a copy of the 2010 replay, where StormLib then misbehaves (found by mutating
 * the corpus file; see docs/formats/sc2replay.md). */
typedef struct patch {
    size_t at;
    uint8_t value;
} patch;
static const patch aborts[] = {{1061, 4}, {1071, 162}, {1092, 117}};      /* a failed assertion */
static const patch stalls[] = {{9745, 180}, {9791, 217}, {9798, 3}, {9802, 39}}; /* bzip2 spins */
static const patch unreadable[] = {{9167, 48}, {9190, 221}, {9201, 194}, {9203, 14}};

static uint8_t *old_replay, *new_replay;
static size_t old_len, new_len;

static int setup(void **state)
{
    (void)state;
    old_replay = tu_corpus_file("sc2", "wol_1.0.0.16117_b15405.SC2Replay", &old_len);
    new_replay = tu_corpus_file("sc2", "lotv_5.0.0.80949_b80949.SC2Replay", &new_len);
    return old_replay && new_replay ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(old_replay);
    free(new_replay);
    return 0;
}

static uint8_t *patched(const patch *p, size_t n)
{
    uint8_t *copy = malloc(old_len);
    assert_non_null(copy);
    memcpy(copy, old_replay, old_len);
    for (size_t i = 0; i < n; i++) {
        assert_true(p[i].at < old_len);
        copy[p[i].at] = p[i].value;
    }
    return copy;
}

/* Extracts the newest replay and checks that both members came back whole. */
static void extract_good(recd_buf *details_copy)
{
    sc2_extract x;
    char err[256] = "";
    int rc = sc2_mpq_extract(new_replay, new_len, wanted, NWANTED, 64u << 20, &x, err, sizeof err);
    if (rc != 0)
        fail_msg("extract: %d %s", rc, err);
    assert_int_equal(x.status[0], 0);
    assert_int_equal(x.status[1], 0);
    assert_true(x.data[0].len > 100 && x.data[1].len > 100000);
    assert_true(x.nnames > 5);
    if (details_copy) {
        if (details_copy->len == 0)
            recd_buf_append(details_copy, x.data[0].data, x.data[0].len);
        assert_int_equal(details_copy->len, x.data[0].len);
        assert_memory_equal(details_copy->data, x.data[0].data, x.data[0].len);
    }
    sc2_extract_free(&x);
}

static int extract_damaged(const patch *p, size_t n, char *err, size_t errlen)
{
    uint8_t *copy = patched(p, n);
    sc2_extract x;
    int rc = sc2_mpq_extract(copy, old_len, wanted, NWANTED, 64u << 20, &x, err, errlen);
    sc2_extract_free(&x);
    free(copy);
    return rc;
}

static void test_kept_between_good_replays(void **state)
{
    (void)state;
    recd_buf details = {0};
    extract_good(&details);
    int pid = sc2_mpq_worker_pid();
    assert_true(pid > 0);
    for (int i = 0; i < 5; i++)
        extract_good(&details);
    assert_int_equal(sc2_mpq_worker_pid(), pid);
    recd_buf_free(&details);
}

static void test_replaced_after_a_crash(void **state)
{
    (void)state;
    extract_good(NULL);
    int before = sc2_mpq_worker_pid();
    char err[256] = "";
    assert_int_equal(extract_damaged(aborts, 3, err, sizeof err), -EBADMSG);
    if (!strstr(err, "StormLib stopped on replay.details (signal 6)"))
        fail_msg("err: %s", err);
    assert_int_equal(sc2_mpq_worker_pid(), 0);
    extract_good(NULL);
    assert_true(sc2_mpq_worker_pid() > 0 && sc2_mpq_worker_pid() != before);
}

static void test_replaced_after_a_stall(void **state)
{
    (void)state;
    sc2_mpq_set_timeout_ms((int)tu_scaled_ms(300));
    char err[256] = "";
    int rc = extract_damaged(stalls, 4, err, sizeof err);
    sc2_mpq_set_timeout_ms(0);
    assert_int_equal(rc, -EBADMSG);
    if (!strstr(err, "StormLib did not finish reading replay.details within"))
        fail_msg("err: %s", err);
    assert_int_equal(sc2_mpq_worker_pid(), 0);
    extract_good(NULL);
}

/* A member StormLib reports unreadable: the answer is complete, but the worker that read the
 * damage is not trusted with the next replay. */
static void test_replaced_after_damage(void **state)
{
    (void)state;
    extract_good(NULL);
    assert_true(sc2_mpq_worker_pid() > 0);
    uint8_t *copy = patched(unreadable, 4);
    const char *const attributes[] = {"replay.attributes.events"};
    sc2_extract x;
    char err[256] = "";
    int rc = sc2_mpq_extract(copy, old_len, attributes, 1, 1u << 20, &x, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(x.status[0], -EBADMSG);
    assert_non_null(strstr((const char *)x.data[0].data, "cannot be read"));
    sc2_extract_free(&x);
    free(copy);
    assert_int_equal(sc2_mpq_worker_pid(), 0);
    extract_good(NULL);
}

/* Killed while idle (by an operator, the OOM killer): the next replay is not blamed. */
static void test_idle_death_is_not_the_replays_fault(void **state)
{
    (void)state;
    extract_good(NULL);
    int pid = sc2_mpq_worker_pid();
    assert_true(pid > 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    extract_good(NULL);
    assert_true(sc2_mpq_worker_pid() > 0 && sc2_mpq_worker_pid() != pid);
}

/* A forked copy of this process must not talk to this process's worker. */
static void test_a_fork_gets_its_own_worker(void **state)
{
    (void)state;
    extract_good(NULL);
    int parents = sc2_mpq_worker_pid();
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (sc2_mpq_worker_pid() != 0)
            _exit(2);
        sc2_extract x;
        char err[256];
        int rc = sc2_mpq_extract(new_replay, new_len, wanted, NWANTED, 64u << 20, &x, err,
                                 sizeof err);
        int ok = rc == 0 && x.status[1] == 0 && sc2_mpq_worker_pid() != parents;
        sc2_extract_free(&x);
        exit(ok ? 0 : 3); /* exit, not _exit: the exit hook reaps the child's own worker */
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(sc2_mpq_worker_pid(), parents);
    extract_good(NULL);
    assert_int_equal(sc2_mpq_worker_pid(), parents);
}

static void *extract_in_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++) {
        sc2_extract x;
        char err[256];
        int rc = sc2_mpq_extract(new_replay, new_len, wanted, NWANTED, 64u << 20, &x, err,
                                 sizeof err);
        bool ok = rc == 0 && x.status[0] == 0 && x.status[1] == 0;
        sc2_extract_free(&x);
        if (!ok)
            return (void *)1;
    }
    return NULL;
}

static void test_threads_take_turns(void **state)
{
    (void)state;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, extract_in_thread, NULL), 0);
    for (int i = 0; i < 3; i++) {
        void *result;
        assert_int_equal(pthread_join(t[i], &result), 0);
        assert_null(result);
    }
}

int main(void)
{
    tu_require_corpus("sc2");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_between_good_replays),
        cmocka_unit_test(test_replaced_after_a_crash),
        cmocka_unit_test(test_replaced_after_a_stall),
        cmocka_unit_test(test_replaced_after_damage),
        cmocka_unit_test(test_idle_death_is_not_the_replays_fault),
        cmocka_unit_test(test_a_fork_gets_its_own_worker),
        cmocka_unit_test(test_threads_take_turns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
