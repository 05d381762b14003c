/* SPDX-License-Identifier: MIT */
/* recd's memory. Per idle session: sessions that sent a few samples and went quiet (not yet idle
 * long enough to be finalized) must cost at most 4.5 KiB of heap each beyond the bytes still
 * buffered (4 KiB until the web console's view of a session, about 370 bytes, and the ring and
 * seek-index state, about 160, came in; Recap players measured about 4,220), for .rec and for Recap players with a full inventory. Measured as the growth of the
 * daemon's recd_heap_bytes gauge (allocator statistics) between session counts, the smaller of
 * two windows, so that one-time allocations (writer pools and their compressors, the first table
 * buckets) do not count. After a load: the
 * memory its batches freed stays resident for a while, and goes back to the kernel once the load
 * has been gone for a window (daemon/write/heap.h). The sanitizer build replaces the allocator, so there
 * the tests skip; the normal build runs them. */
#include "test_daemon_harness.h"

#define BUDGET_PER_SESSION 4608.0
#define WARM_SESSIONS 500
#define MEASURED_SESSIONS 2000

static const char *const item_keys[] = {
    "minecraft:diamond_sword", "minecraft:bow",         "minecraft:arrow",
    "minecraft:cooked_beef",   "minecraft:oak_planks",  "minecraft:cobblestone",
    "minecraft:torch",         "minecraft:water_bucket", "minecraft:iron_pickaxe",
    "minecraft:golden_apple",  "minecraft:ender_pearl", "minecraft:shield",
};
#define N_KEYS (sizeof item_keys / sizeof *item_keys)

/* A player with every slot filled: the most a Recap session keeps per player. */
static void full_player(recd_recap_state *st, unsigned i, unsigned tick)
{
    memset(st, 0, sizeof *st);
    st->pos[0] = 100.0 + i;
    st->pos[1] = 64.0;
    st->pos[2] = -20.0 + 0.25 * tick;
    st->rot[0] = 90.0;
    st->health = 20.0f;
    for (unsigned k = 0; k < RECD_RECAP_EQUIPMENT_SLOTS; k++) {
        st->equipment[k].key = recd_recap_str(item_keys[(i + k) % N_KEYS]);
        st->equipment[k].count = 1;
    }
    for (unsigned k = 0; k < RECD_RECAP_INVENTORY_SLOTS; k++) {
        st->inventory[k].key = recd_recap_str(item_keys[(i + k) % N_KEYS]);
        st->inventory[k].count = (uint8_t)(1 + k);
    }
}

static void send_recap_players(recd_client *c, unsigned from, unsigned to)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("memory-probe");
    h.player_name = recd_recap_str("MemoryProbe");
    h.player_uuid = recd_recap_str("fb293873-1e80-4240-bda9-04ec7e540318");
    h.world_name = recd_recap_str("world");
    h.start_ms = 1763213398000;
    for (unsigned i = from; i < to; i++) {
        recd_msg m;
        recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
        snprintf(m.session, sizeof m.session, "player-%u", i);
        assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
        td_send(c, &m);
        recd_msg_free(&m);
        for (unsigned tick = 0; tick < 3; tick++) {
            recd_recap_state st;
            full_player(&st, i, tick);
            recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
            snprintf(m.session, sizeof m.session, "player-%u", i);
            assert_int_equal(recd_msg_set_recap_state(&m, tick, &st), 0);
            td_send(c, &m);
            recd_msg_free(&m);
        }
    }
    assert_int_equal(recd_client_flush(c), 0);
}

static void send_rec_players(recd_client *c, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        char key[32];
        snprintf(key, sizeof key, "npc-%u", i);
        td_rec_session s;
        td_rec_session_init(&s, key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, i);
        td_send_open(c, key, s.format, 0);
        recd_msg m;
        for (int k = 0; k < 3 && td_rec_session_next(&s, &m); k++)
            td_send(c, &m);
        td_rec_session_free(&s);
    }
    assert_int_equal(recd_client_flush(c), 0);
}

#ifndef TU_SANITIZED
/* Heap once every session is open, written out and has been quiet for a few flush intervals. */
static double settled_heap(const td_daemon *d, unsigned sessions, double *buffered)
{
    assert_true(td_wait_metric(d, "recd_sessions_open", sessions, 30000) == sessions);
    uint64_t deadline = td_deadline(30000);
    while (td_metric(d, "recd_buffered_bytes") > 0 && td_now_ms() < deadline)
        td_sleep_ms(50);
    td_sleep_ms(1000); /* > 4 flush intervals: the idle trim has run */
    *buffered = td_metric(d, "recd_buffered_bytes");
    return td_metric(d, "recd_heap_bytes");
}
#endif

static void check_budget(void (*send)(recd_client *, unsigned, unsigned), const char *what)
{
#ifdef TU_SANITIZED
    (void)send;
    printf("SKIP: %s: the sanitizer's allocator replaces malloc, so heap statistics mean nothing "
           "here (the normal build measures this)\n", what);
    skip();
#else
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 200ms\nrotation:\n  idle_timeout: 10m\n");
    /* One pool thread: the writer keeps a compressor (about 660 KiB with libdeflate at level 6)
     * per job running at once, and how many jobs overlap depends on the machine's load. A busy CI
     * machine made new ones in both windows (+665 B per session each). With one thread the
     * warm-up makes the only one. */
    setenv("UV_THREADPOOL_SIZE", "1", 1);
    td_start(&d);
    unsetenv("UV_THREADPOOL_SIZE");
    double buffered;
    if (td_metric(&d, "recd_heap_bytes") <= 0) {
        td_stop(&d);
        td_cleanup(&d);
        printf("SKIP: %s: this C library has no allocator statistics (recd_heap_bytes is 0)\n", what);
        skip();
    }
    /* Two windows of half the sessions each, and the smaller growth: what is made once (table
     * buckets doubling) lands in one window only. */
    recd_client *c = td_connect(d.tcp);
    send(c, 0, WARM_SESSIONS);
    double h0 = settled_heap(&d, WARM_SESSIONS, &buffered);
    const unsigned half = MEASURED_SESSIONS / 2;
    send(c, WARM_SESSIONS, WARM_SESSIONS + half);
    double h1 = settled_heap(&d, WARM_SESSIONS + half, &buffered);
    send(c, WARM_SESSIONS + half, WARM_SESSIONS + MEASURED_SESSIONS);
    double h2 = settled_heap(&d, WARM_SESSIONS + MEASURED_SESSIONS, &buffered);
    td_close_client(c);
    double grew = h1 - h0 < h2 - h1 ? h1 - h0 : h2 - h1;
    double per = grew / half;
    double allowed = BUDGET_PER_SESSION + buffered / (WARM_SESSIONS + MEASURED_SESSIONS);
    printf("%s: %.0f heap bytes per idle session (budget %.0f; the windows grew %.0f and %.0f)\n",
           what, per, allowed, (h1 - h0) / half, (h2 - h1) / half);
    if (per > allowed) {
        td_dump_log(&d);
        fail_msg("%s: %.0f heap bytes per idle session, over the %.0f budget", what, per, allowed);
    }
    td_stop(&d);
    td_cleanup(&d);
#endif
}

#define LOAD_SESSIONS 32
#define LOAD_BLOCKS 20000 /* 1.4 MiB per session, 44 MiB in all, held until the sessions close */

#ifndef TU_SANITIZED
static long rss_mib(pid_t pid) { return td_rss_kib(pid) / 1024; }
#endif

static void test_memory_goes_back_after_a_load(void **state)
{
    (void)state;
#ifdef TU_SANITIZED
    printf("SKIP: the sanitizer's allocator replaces malloc's heap (the normal build runs this)\n");
    skip();
#else
    td_daemon d;
    /* Nothing is flushed before the closes: the whole load is buffered at once. */
    td_setup(&d, "flush:\n  interval: 60s\n  buffer_size: 2MiB\nlimits:\n  session_buffer: 4MiB\n"
                 "rotation:\n  idle_timeout: 10m\n");
    td_start(&d);
    if (td_metric(&d, "recd_heap_bytes") <= 0) { /* the heap policy is glibc's (daemon/write/heap.c) */
        td_stop(&d);
        td_cleanup(&d);
        printf("SKIP: this C library is not glibc (recd_heap_bytes is 0)\n");
        skip();
    }
    recd_client *c = td_connect(d.tcp);
    td_rec_session s[LOAD_SESSIONS];
    for (unsigned i = 0; i < LOAD_SESSIONS; i++) {
        char key[32];
        snprintf(key, sizeof key, "load-%u", i);
        td_rec_session_init(&s[i], key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                            24u * 3600u * 1000u, i);
        td_send_open(c, key, s[i].format, 0);
    }
    recd_msg m;
    for (unsigned k = 0; k < LOAD_BLOCKS; k++)
        for (unsigned i = 0; i < LOAD_SESSIONS; i++) {
            assert_true(td_rec_session_next(&s[i], &m));
            td_send(c, &m);
        }
    assert_int_equal(recd_client_flush(c), 0);
    double total = (double)LOAD_SESSIONS * LOAD_BLOCKS;
    assert_true(td_wait_metric(&d, "recd_samples_total{transport=\"tcp\",format=\"samp-onfoot\"}", total, 60000) >= total);
    long loaded = rss_mib(d.pid);
    for (unsigned i = 0; i < LOAD_SESSIONS; i++) {
        td_send_close(c, s[i].session, s[i].format);
        td_rec_session_free(&s[i]);
    }
    assert_int_equal(recd_client_flush(c), 0);
    assert_true(td_wait_metric(&d, "recd_files_finalized_total", LOAD_SESSIONS, 60000) >= LOAD_SESSIONS);
    td_sleep_ms(2000);
    long kept = rss_mib(d.pid);
    uint64_t deadline = td_deadline(40000);
    long now = kept;
    while ((now = rss_mib(d.pid)) > loaded - 30 && td_now_ms() < deadline)
        td_sleep_ms(500);
    printf("RSS %ld MiB with the load buffered, %ld MiB 2 s after it was written, %ld MiB at the "
           "end\n", loaded, kept, now);
    if (loaded < 40 || kept < loaded - 10 || now > loaded - 30) {
        td_dump_log(&d);
        fail_msg("expected at least 40 MiB under load, kept 2 s after it, and at least 30 MiB "
                 "given back within 40 s");
    }
    td_close_client(c);
    td_stop(&d);
    td_cleanup(&d);
#endif
}

static void test_idle_recap_session_budget(void **state)
{
    (void)state;
    check_budget(send_recap_players, "recap");
}

static void test_idle_rec_session_budget(void **state)
{
    (void)state;
    check_budget(send_rec_players, "samp-onfoot");
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_idle_recap_session_budget),
        td_unit_test(test_idle_rec_session_budget),
        td_unit_test(test_memory_goes_back_after_a_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
