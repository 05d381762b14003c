/* SPDX-License-Identifier: MIT */
/* Crash recovery through its file operations table (storage/recovery_file_ops.h): ENOSPC or EIO
 * at each call in turn, short reads and short writes, and a part of more than 1 GiB that exists
 * only as a mapping of zero pages. Recovery must never lose or corrupt what a clean run keeps:
 * a failed file stays a .part, says which step failed and why, and the next run recovers it to
 * the same bytes. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/recap.h"
#include "recd/recovery.h"
#include "recd/samp_rec.h"
#include "storage/recovery_file_ops.h"

/* ---- The injecting table ----------------------------------------------------------------- */

typedef struct fault_plan {
    unsigned calls;       /* fallible calls made so far */
    unsigned fail_at;     /* the call (1-based) that fails; 0 = none */
    int fail_err;         /* its negative errno */
    const char *failed_op; /* the operation that was made to fail */
    size_t short_read;    /* when non-zero, a read returns at most this many bytes */
    size_t short_write;   /* when non-zero, a write takes at most this many bytes */
    /* A part presented larger than it is: fake_size bytes, of which the file's own bytes are the
     * start and the rest zeros (a private anonymous mapping: read, never allocated). */
    uint64_t fake_size;
    uint64_t truncated_to; /* what a truncate of the fake part asked for */
    unsigned truncates;
} fault_plan;

static const recovery_file_ops *sys = &recovery_file_ops_system;

/* Counts one fallible call; true when it is the one to fail. */
static bool fails(fault_plan *p, const char *op)
{
    if (++p->calls != p->fail_at)
        return false;
    p->failed_op = op;
    return true;
}

static int f_open_at(void *data, int dir_fd, const char *leaf, int flags)
{
    fault_plan *p = data;
    return fails(p, "open") ? p->fail_err : sys->open_at(NULL, dir_fd, leaf, flags);
}

static int f_stat_fd(void *data, int fd, recovery_file_stat *st)
{
    fault_plan *p = data;
    if (fails(p, "stat"))
        return p->fail_err;
    int rc = sys->stat_fd(NULL, fd, st);
    if (rc == 0 && p->fake_size)
        st->size = p->fake_size;
    return rc;
}

static ssize_t f_pread_at(void *data, int fd, void *buf, size_t len, uint64_t off)
{
    fault_plan *p = data;
    if (fails(p, "read"))
        return p->fail_err;
    if (p->short_read && len > p->short_read)
        len = p->short_read;
    return sys->pread_at(NULL, fd, buf, len, off);
}

static int f_map(void *data, int fd, size_t len, void **addr)
{
    fault_plan *p = data;
    if (fails(p, "map"))
        return p->fail_err;
    if (!p->fake_size)
        return sys->map(NULL, fd, len, addr);
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return -errno;
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_true((uint64_t)st.st_size <= len);
    assert_int_equal(pread(fd, m, (size_t)st.st_size, 0), (ssize_t)st.st_size);
    *addr = m;
    return 0;
}

static void f_unmap(void *data, void *addr, size_t len)
{
    fault_plan *p = data;
    if (p->fake_size)
        munmap(addr, len);
    else
        sys->unmap(NULL, addr, len);
}

static int f_truncate(void *data, int fd, uint64_t len)
{
    fault_plan *p = data;
    if (fails(p, "truncate"))
        return p->fail_err;
    if (p->fake_size) { /* the real file is only the fake part's first bytes */
        p->truncated_to = len;
        p->truncates++;
        return 0;
    }
    return sys->truncate(NULL, fd, len);
}

static ssize_t f_pwrite_at(void *data, int fd, const void *buf, size_t len, uint64_t off)
{
    fault_plan *p = data;
    if (fails(p, "write"))
        return p->fail_err;
    if (p->short_write && len > p->short_write)
        len = p->short_write;
    return sys->pwrite_at(NULL, fd, buf, len, off);
}

static int f_datasync(void *data, int fd)
{
    fault_plan *p = data;
    return fails(p, "fdatasync") ? p->fail_err : sys->datasync(NULL, fd);
}

static int f_rename(void *data, int dir_fd, const char *from, const char *to, char *chosen,
                    size_t cap)
{
    fault_plan *p = data;
    return fails(p, "rename") ? p->fail_err : sys->rename_noreplace(NULL, dir_fd, from, to, chosen, cap);
}

static int f_unlink_at(void *data, int dir_fd, const char *leaf)
{
    fault_plan *p = data;
    return fails(p, "unlink") ? p->fail_err : sys->unlink_at(NULL, dir_fd, leaf);
}

static int f_sync_dir(void *data, int dir_fd)
{
    fault_plan *p = data;
    return fails(p, "fsync-dir") ? p->fail_err : sys->sync_dir(NULL, dir_fd);
}

static void f_close_fd(void *data, int fd)
{
    (void)data;
    sys->close_fd(NULL, fd);
}

static recovery_file_ops fault_ops(fault_plan *p)
{
    recovery_file_ops o = {f_open_at, f_stat_fd, f_pread_at, f_map, f_unmap, f_truncate,
                           f_pwrite_at, f_datasync, f_rename, f_unlink_at, f_sync_dir, f_close_fd,
                           p};
    return o;
}

static int run(int root_fd, fault_plan *p, bool sync, recd_recover_summary *s)
{
    recovery_file_ops ops = fault_ops(p);
    recd_recover_options opt = {.sync = sync};
    memset(s, 0, sizeof *s);
    return recd_recover__root_ops(root_fd, &opt, s, recd_recover_plan_buffer, &ops);
}

/* ---- Parts ------------------------------------------------------------------------------- */

/* A Recap part of three members of ten ticks, cut inside the third: recovery cuts the tail and
 * patches the header's frame count and end time. */
static void make_cut_recap(recd_buf *b)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("fault-test");
    h.player_name = recd_recap_str("Alex");
    h.start_ms = INT64_C(1700000000000);
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(b)), 0);
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.health = 20.0f;
    size_t ends[3];
    for (unsigned m = 0; m < 3; m++) {
        for (unsigned t = 10 * m; t < 10 * m + 10; t++) {
            st.pos[0] = t * 0.5;
            st.pos[1] = 70.0;
            assert_int_equal(recd_recap_encoder_tick(e, t, &st, NULL, 0), 0);
        }
        assert_int_equal(recd_recap_encoder_flush(e), 0);
        ends[m] = b->len;
    }
    recd_recap_encoder_free(e);
    b->len = (ends[1] + ends[2]) / 2;
}

/* A .rec part of n on-foot blocks and half a block. */
static void make_cut_rec(recd_buf *b, unsigned n)
{
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(b)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    for (unsigned i = 0; i < n; i++) {
        recd_rec_onfoot o;
        memset(&o, 0, sizeof o);
        o.time_ms = 50 * i;
        o.rotation.w = 1.0f;
        o.position.z = (float)i;
        o.health = 90;
        assert_int_equal(recd_rec_writer_onfoot(&w, &o), 0);
    }
    b->len -= RECD_REC_ONFOOT_BLOCK_SIZE / 2;
}

static const char *path_in(const tu_root_fixture *f, const char *leaf)
{
    static char path[4][8192 + 300];
    static unsigned next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", f->root, leaf);
    return p;
}

/* What a clean run makes of content: the finalized file's bytes. */
static uint8_t *reference(const tu_root_fixture *f, const recd_buf *part, const char *leaf,
                          size_t *len)
{
    char part_leaf[256];
    snprintf(part_leaf, sizeof part_leaf, "%s.part", leaf);
    assert_int_equal(tu_write_file(path_in(f, part_leaf), part->data, part->len), 0);
    recd_recover_summary s;
    fault_plan p = {0};
    assert_int_equal(run(f->root_fd, &p, true, &s), 1);
    assert_int_equal(s.finalized, 1);
    recd_recover_summary_free(&s);
    uint8_t *data = tu_read_file(path_in(f, leaf), len);
    assert_non_null(data);
    assert_int_equal(unlink(path_in(f, leaf)), 0);
    return data;
}

/* Every fallible call of a run fails in turn (ENOSPC and EIO alternately, each also after short
 * writes): the file either ends finalized as in a clean run, or stays a .part with an error that
 * names the step and the errno, which the next clean run recovers to the very same bytes. */
static void each_failing_call(const tu_root_fixture *f, const recd_buf *part, const char *leaf)
{
    size_t ref_len;
    uint8_t *ref = reference(f, part, leaf, &ref_len);
    char part_leaf[256];
    snprintf(part_leaf, sizeof part_leaf, "%s.part", leaf);

    recd_recover_summary s;
    for (unsigned variant = 0; variant < 2; variant++) {
        const size_t short_read = variant ? 64 : 0, short_write = variant ? 3 : 0;
        fault_plan clean = {.short_read = short_read, .short_write = short_write};
        assert_int_equal(tu_write_file(path_in(f, part_leaf), part->data, part->len), 0);
        assert_int_equal(run(f->root_fd, &clean, true, &s), 1);
        recd_recover_summary_free(&s);
        assert_int_equal(unlink(path_in(f, leaf)), 0);
        assert_true(clean.calls >= 7); /* open, stat, read, truncate, write, fdatasync, rename */
        for (unsigned n = 1; n <= clean.calls; n++) {
            assert_int_equal(tu_write_file(path_in(f, part_leaf), part->data, part->len), 0);
            fault_plan p = {.fail_at = n, .fail_err = variant ? -EIO : -ENOSPC,
                            .short_read = short_read, .short_write = short_write};
            assert_int_equal(run(f->root_fd, &p, true, &s), 1);
            assert_non_null(p.failed_op);
            const recd_recover_file *r = &s.files[0];
            if (r->action == RECD_RECOVER_FAILED) {
                assert_int_equal(r->error, p.fail_err);
                if (!strstr(r->message, recd_strerror(p.fail_err)))
                    fail_msg("call %u (%s): the message '%s' does not say '%s'", n, p.failed_op,
                             r->message, recd_strerror(p.fail_err));
                assert_true(tu_exists(path_in(f, part_leaf)));
                assert_false(tu_exists(path_in(f, leaf)));
                recd_recover_summary_free(&s);
                fault_plan again = {0};
                assert_int_equal(run(f->root_fd, &again, true, &s), 1);
            } else if (strcmp(p.failed_op, "fsync-dir") != 0) {
                fail_msg("call %u (%s) failed, yet the file is %s", n, p.failed_op,
                         recd_recover_action_name(r->action));
            }
            if (s.files[0].action != RECD_RECOVER_FINALIZED)
                fail_msg("after call %u (%s) failed: %s: %s", n, p.failed_op,
                         recd_recover_action_name(s.files[0].action), s.files[0].message);
            recd_recover_summary_free(&s);
            size_t len;
            uint8_t *got = tu_read_file(path_in(f, leaf), &len);
            assert_non_null(got);
            if (len != ref_len || memcmp(got, ref, len) != 0)
                fail_msg("after call %u (%s) failed, the recovered file differs from a clean "
                         "run's (%zu bytes, not %zu)", n, p.failed_op, len, ref_len);
            free(got);
            assert_int_equal(unlink(path_in(f, leaf)), 0);
        }
    }
    free(ref);
}

static void recap_part_survives_each_failing_call(void **state)
{
    recd_buf b = {0};
    make_cut_recap(&b);
    each_failing_call(*state, &b, "r.recap");
    recd_buf_free(&b);
}

static void rec_part_survives_each_failing_call(void **state)
{
    recd_buf b = {0};
    make_cut_rec(&b, 40);
    each_failing_call(*state, &b, "t.rec");
    recd_buf_free(&b);
}

/* Short reads and writes alone are continued: the result is a clean run's. */
static void short_reads_and_writes_are_continued(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_cut_recap(&b);
    size_t ref_len;
    uint8_t *ref = reference(f, &b, "r.recap", &ref_len);
    assert_int_equal(tu_write_file(path_in(f, "r.recap.part"), b.data, b.len), 0);
    fault_plan p = {.short_read = 1, .short_write = 1};
    recd_recover_summary s;
    assert_int_equal(run(f->root_fd, &p, false, &s), 1);
    assert_int_equal(s.finalized, 1);
    recd_recover_summary_free(&s);
    assert_true(p.calls > b.len); /* one byte per read */
    size_t len;
    uint8_t *got = tu_read_file(path_in(f, "r.recap"), &len);
    assert_int_equal(len, ref_len);
    assert_memory_equal(got, ref, len);
    free(got);
    free(ref);
    recd_buf_free(&b);
}

/* A read that ends before the size fstat gave is not taken for a shorter part (that would cut
 * what was not read): the part is left as it was, with the reason. */
static ssize_t eof_at_half(void *data, int fd, void *buf, size_t len, uint64_t off)
{
    (void)data;
    if (off >= 40)
        return 0;
    return sys->pread_at(NULL, fd, buf, len > 40 - off ? 40 - off : len, off);
}

static void an_early_end_of_file_cuts_nothing(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_cut_rec(&b, 10);
    assert_int_equal(tu_write_file(path_in(f, "t.rec.part"), b.data, b.len), 0);
    recovery_file_ops ops = recovery_file_ops_system;
    ops.pread_at = eof_at_half;
    recd_recover_summary s = {0};
    assert_int_equal(recd_recover__root_ops(f->root_fd, NULL, &s, recd_recover_plan_buffer, &ops), 1);
    assert_int_equal(s.files[0].action, RECD_RECOVER_FAILED);
    assert_non_null(strstr(s.files[0].message, "cannot read"));
    recd_recover_summary_free(&s);
    size_t len;
    uint8_t *got = tu_read_file(path_in(f, "t.rec.part"), &len);
    assert_int_equal(len, b.len);
    assert_memory_equal(got, b.data, len);
    free(got);
    recd_buf_free(&b);
}

/* ---- More than 1 GiB, never allocated ---------------------------------------------------- */

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The Recap part on disk is a header and three members; the table presents it as 1 GiB and a
 * bit, the rest zeros, as a crash could leave a preallocated file. Recovery maps it, plans it
 * (the members are kept, the zeros cut), truncates it through the table and patches the header
 * in place; a failing map (ENOMEM) or truncate (EIO) leaves it untouched, with the reason. */
static void part_over_1_gib_is_recovered_through_the_table(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_cut_recap(&b);
    size_t whole = b.len; /* make_cut_recap cut inside the third member: keep two */
    recd_buf ref_part = {0};
    assert_int_equal(recd_buf_append(&ref_part, b.data, b.len), 0);
    size_t ref_len;
    uint8_t *ref = reference(f, &ref_part, "big.recap", &ref_len);
    recd_buf_free(&ref_part);
    const uint64_t fake = (UINT64_C(1) << 30) + 12345;
    long rss_before = max_rss_kib();

    const int errs[] = {-ENOMEM, -EIO};
    const char *ops_to_fail[] = {"map", "truncate"};
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(tu_write_file(path_in(f, "big.recap.part"), b.data, whole), 0);
        fault_plan p = {.fake_size = fake, .fail_err = errs[i]};
        p.fail_at = i == 0 ? 3 : 4; /* open, stat, map, truncate */
        recd_recover_summary s;
        assert_int_equal(run(f->root_fd, &p, false, &s), 1);
        assert_string_equal(p.failed_op, ops_to_fail[i]);
        assert_int_equal(s.files[0].action, RECD_RECOVER_FAILED);
        assert_int_equal(s.files[0].error, errs[i]);
        assert_non_null(strstr(s.files[0].message, recd_strerror(errs[i])));
        assert_int_equal(s.files[0].size_before, fake);
        recd_recover_summary_free(&s);
        size_t len;
        uint8_t *got = tu_read_file(path_in(f, "big.recap.part"), &len);
        assert_int_equal(len, whole);
        assert_memory_equal(got, b.data, whole); /* untouched */
        free(got);
        assert_int_equal(p.truncates, 0);
    }

    fault_plan p = {.fake_size = fake};
    recd_recover_summary s;
    assert_int_equal(run(f->root_fd, &p, true, &s), 1);
    if (s.files[0].action != RECD_RECOVER_FINALIZED)
        fail_msg("%s: %s", recd_recover_action_name(s.files[0].action), s.files[0].message);
    assert_int_equal(s.files[0].size_before, fake);
    assert_int_equal(s.files[0].size_after, ref_len);
    assert_int_equal(s.files[0].bytes_dropped, fake - ref_len);
    assert_int_equal(s.records_kept, 20);
    recd_recover_summary_free(&s);
    assert_int_equal(p.truncates, 1);
    assert_int_equal(p.truncated_to, ref_len);
    assert_false(tu_exists(path_in(f, "big.recap.part")));
    /* The real file held the kept bytes and more of the cut member; its header was patched in
     * place: cut to what the table was asked for, it is what a clean run of the part makes. */
    assert_int_equal(truncate(path_in(f, "big.recap"), (off_t)ref_len), 0);
    size_t len;
    uint8_t *got = tu_read_file(path_in(f, "big.recap"), &len);
    assert_int_equal(len, ref_len);
    assert_memory_equal(got, ref, len);
    free(got);
    free(ref);
    recd_buf_free(&b);
    /* Zero pages read from an anonymous mapping are not allocated. */
    long grown_kib = max_rss_kib() - rss_before;
    if (grown_kib > 64 * 1024)
        fail_msg("recovery of the fake 1 GiB part grew the peak RSS by %ld KiB", grown_kib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(recap_part_survives_each_failing_call, tu_root_setup,
                                        tu_root_teardown),
        cmocka_unit_test_setup_teardown(rec_part_survives_each_failing_call, tu_root_setup,
                                        tu_root_teardown),
        cmocka_unit_test_setup_teardown(short_reads_and_writes_are_continued, tu_root_setup,
                                        tu_root_teardown),
        cmocka_unit_test_setup_teardown(an_early_end_of_file_cuts_nothing, tu_root_setup,
                                        tu_root_teardown),
        cmocka_unit_test_setup_teardown(part_over_1_gib_is_recovered_through_the_table,
                                        tu_root_setup, tu_root_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
