/* SPDX-License-Identifier: MIT */
/* gzip member writer/reader: determinism, multi-member files (zlib and libdeflate members mixed)
 * read by zlib, Python, zcat and Java, cut files readable up to the last complete member, zip-bomb
 * bound, corrupt tails. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "recd/gzip_members.h"
#include "testutil.h"

static const char *parts[3] = {"first member: hello, ", "second member: recap frames, ",
                               "third member: the end\n"};

static void build_file(recd_buf *file, size_t ends[3])
{
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    assert_non_null(d);
    for (int i = 0; i < 3; i++) { /* zlib, libdeflate, zlib: both compressors, mixed */
        recd_gzip_compressor c = i == 1 ? RECD_GZIP_LIBDEFLATE : RECD_GZIP_ZLIB;
        assert_int_equal(recd_gzip_member_write_with(d, c, 6, parts[i], strlen(parts[i]), file), 0);
        ends[i] = file->len;
    }
    recd_gzip_deflater_free(d);
}

static void expected_text(char *out, size_t cap, int members)
{
    out[0] = 0;
    for (int i = 0; i < members; i++)
        strncat(out, parts[i], cap - strlen(out) - 1);
}

typedef struct collect {
    recd_buf data;
    uint64_t ends[8];
    int n;
} collect;

static int collect_member(void *ctx, uint64_t off, uint64_t end, const uint8_t *data, size_t len)
{
    collect *c = ctx;
    (void)off;
    if (c->n < 8)
        c->ends[c->n] = end;
    c->n++;
    return recd_buf_append(&c->data, data, len);
}

static void test_deterministic_header(void **st)
{
    (void)st;
    recd_buf a = {0}, b = {0};
    assert_int_equal(recd_gzip_member_write(NULL, 9, "abc", 3, &a), 0);
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    assert_int_equal(recd_gzip_member_write(d, 1, "xyz", 3, &b), 0); /* other level first */
    b.len = 0;
    assert_int_equal(recd_gzip_member_write(d, 9, "abc", 3, &b), 0);
    recd_gzip_deflater_free(d);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    static const uint8_t hdr[10] = {0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF};
    assert_memory_equal(a.data, hdr, 10);
    assert_int_equal(recd_gzip_member_write(NULL, 0, "abc", 3, &a), -EINVAL);
    recd_buf_free(&a);
    recd_buf_free(&b);
}

/* libdeflate members: one call per member whatever its size, the same fixed header, read back
 * exactly; a compressor the library does not know is refused. */
static void test_libdeflate_members(void **st)
{
    (void)st;
    tu_rng rng = {77};
    size_t sizes[] = {0, 1, 100, 70000, 1 << 20};
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        uint8_t *in = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) /* compressible: a few symbols */
            in[i] = (uint8_t)("abcab\0\0\x07"[tu_rand_below(&rng, 8)]);
        for (int level = 1; level <= 9; level += 4) {
            recd_buf f = {0}, g = {0};
            recd_gzip_compressor ld = RECD_GZIP_LIBDEFLATE;
            assert_int_equal(recd_gzip_member_write_with(d, ld, level, in, n, &f), 0);
            assert_int_equal(recd_gzip_member_write_with(NULL, ld, level, in, n, &g), 0);
            assert_int_equal(f.len, g.len); /* shared or one-shot compressor: the same bytes */
            assert_memory_equal(f.data, g.data, f.len);
            static const uint8_t hdr[10] = {0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF};
            assert_memory_equal(f.data, hdr, 10);
            collect c = {0};
            recd_gzip_scan scan;
            assert_int_equal(recd_gzip_members_read(f.data, f.len, 0, collect_member, &c, &scan),
                             0);
            assert_int_equal(scan.members, 1);
            assert_int_equal(c.data.len, n);
            if (n)
                assert_memory_equal(c.data.data, in, n);
            recd_buf_free(&f);
            recd_buf_free(&g);
            recd_buf_free(&c.data);
        }
        free(in);
    }
    recd_buf f = {0};
    recd_gzip_compressor unknown = (recd_gzip_compressor)2;
    assert_int_equal(recd_gzip_member_write_with(d, unknown, 6, "abc", 3, &f), -EINVAL);
    assert_int_equal(recd_gzip_member_write_with(d, RECD_GZIP_LIBDEFLATE, 10, "abc", 3, &f),
                     -EINVAL);
    assert_int_equal(f.len, 0);
    recd_gzip_deflater_free(d);
}

static void test_empty_member(void **st)
{
    (void)st;
    recd_buf f = {0};
    assert_int_equal(recd_gzip_member_write(NULL, 6, NULL, 0, &f), 0);
    collect c = {0};
    recd_gzip_scan scan;
    assert_int_equal(recd_gzip_members_read(f.data, f.len, 0, collect_member, &c, &scan), 0);
    assert_int_equal(scan.members, 1);
    assert_int_equal(c.data.len, 0);
    assert_int_equal(scan.valid_end, f.len);
    recd_buf_free(&f);
    recd_buf_free(&c.data);
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc;
}

/* Java's GZIPInputStream, from a one-file program run by the JDK's source launcher. */
static const char java_reader[] =
    "import java.io.*;\nimport java.util.zip.*;\n"
    "public class GzRead {\n"
    "    public static void main(String[] a) throws Exception {\n"
    "        try (InputStream in = new GZIPInputStream(new FileInputStream(a[0]));\n"
    "             OutputStream out = new FileOutputStream(a[1])) {\n"
    "            in.transferTo(out);\n"
    "        }\n"
    "    }\n"
    "}\n";

/* One test for every external reader: zlib's gzread, Python's gzip module, zcat and Java (where a
 * JDK is installed; scripts/install-deps.sh installs one). */
static void test_external_readers(void **st)
{
    (void)st;
    recd_buf f = {0};
    size_t ends[3];
    build_file(&f, ends);
    char want[256];
    expected_text(want, sizeof(want), 3);

    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[4200], cut[4200], out[4200], cmd[13000];
    snprintf(path, sizeof(path), "%s/multi.gz", dir);
    snprintf(cut, sizeof(cut), "%s/cut.gz", dir);
    snprintf(out, sizeof(out), "%s/out.txt", dir);
    assert_int_equal(tu_write_file(path, f.data, f.len), 0);

    /* zlib */
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    char got[512];
    int n = gzread(gz, got, sizeof(got));
    gzclose(gz);
    assert_int_equal(n, (int)strlen(want));
    assert_memory_equal(got, want, strlen(want));

    /* Python and zcat on the whole file */
    const char *py = "python3 -c 'import gzip,sys; "
                     "sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())' '%s' > '%s'";
    char java[8600], java_src[4300];
    snprintf(java_src, sizeof java_src, "%s/GzRead.java", dir);
    assert_int_equal(tu_write_file(java_src, java_reader, strlen(java_reader)), 0);
    snprintf(java, sizeof java, "java '%s' '%%s' '%%s'", java_src);
    const char *readers[3] = {py, "zcat '%s' > '%s'", java};
    int nreaders = run("command -v java >/dev/null") == 0 ? 3 : 2;
    if (nreaders == 2)
        fprintf(stderr, "note: no java on PATH, Java's GZIPInputStream not checked\n");
    for (int r = 0; r < nreaders; r++) {
        snprintf(cmd, sizeof(cmd), readers[r], path, out);
        assert_int_equal(run(cmd), 0);
        size_t len;
        uint8_t *txt = tu_read_file(out, &len);
        assert_non_null(txt);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(txt, want, len);
        free(txt);
    }

    /* Cut inside the third member: our reader finds the repair point, and the repaired prefix
     * reads cleanly everywhere with exactly the first two members. */
    size_t cut_at = ends[1] + (ends[2] - ends[1]) / 2;
    recd_gzip_scan scan;
    assert_int_equal(recd_gzip_members_read(f.data, cut_at, 0, NULL, NULL, &scan), -EAGAIN);
    assert_true(scan.truncated);
    assert_int_equal(scan.valid_end, ends[1]);
    assert_int_equal(tu_write_file(cut, f.data, scan.valid_end), 0);
    expected_text(want, sizeof(want), 2);
    for (int r = 0; r < nreaders; r++) {
        snprintf(cmd, sizeof(cmd), readers[r], cut, out);
        assert_int_equal(run(cmd), 0);
        size_t len;
        uint8_t *txt = tu_read_file(out, &len);
        assert_non_null(txt);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(txt, want, len);
        free(txt);
    }
    gz = gzopen(cut, "rb");
    n = gzread(gz, got, sizeof(got));
    gzclose(gz);
    assert_int_equal(n, (int)strlen(want));
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    (void)run(cmd);
    recd_buf_free(&f);
}

static void test_cut_everywhere(void **st)
{
    (void)st;
    recd_buf f = {0};
    size_t ends[3];
    build_file(&f, ends);
    for (size_t cut = 0; cut <= f.len; cut++) {
        collect c = {0};
        recd_gzip_scan scan;
        int rc = recd_gzip_members_read(f.data, cut, 0, collect_member, &c, &scan);
        int complete = cut >= ends[2] ? 3 : cut >= ends[1] ? 2 : cut >= ends[0] ? 1 : 0;
        assert_int_equal(scan.members, (uint64_t)complete);
        assert_int_equal(c.n, complete);
        assert_int_equal(scan.valid_end, complete ? ends[complete - 1] : 0);
        bool at_boundary = cut == scan.valid_end;
        assert_int_equal(rc, at_boundary ? 0 : -EAGAIN);
        assert_int_equal(scan.truncated, !at_boundary);
        char want[256];
        expected_text(want, sizeof(want), complete);
        assert_int_equal(c.data.len, strlen(want));
        if (c.data.len)
            assert_memory_equal(c.data.data, want, c.data.len);
        recd_buf_free(&c.data);
    }
    recd_buf_free(&f);
}

static void test_corrupt_tails(void **st)
{
    (void)st;
    recd_buf f = {0};
    size_t ends[3];
    build_file(&f, ends);
    recd_gzip_scan scan;

    /* Flip a CRC byte of member 2. */
    f.data[ends[1] - 6] ^= 0x55;
    assert_int_equal(recd_gzip_members_read(f.data, f.len, 0, NULL, NULL, &scan), -EBADMSG);
    assert_true(scan.corrupt);
    assert_int_equal(scan.members, 1);
    assert_int_equal(scan.valid_end, ends[0]);
    f.data[ends[1] - 6] ^= 0x55;

    /* Garbage after the last member. */
    assert_int_equal(recd_buf_append(&f, "garbage", 7), 0);
    assert_int_equal(recd_gzip_members_read(f.data, f.len, 0, NULL, NULL, &scan), -EBADMSG);
    assert_int_equal(scan.members, 3);
    assert_int_equal(scan.valid_end, ends[2]);
    recd_buf_free(&f);
}

static void test_zip_bomb_bound(void **st)
{
    (void)st;
    size_t big = 4u << 20;
    uint8_t *zeros = calloc(1, big);
    recd_buf f = {0};
    assert_int_equal(recd_gzip_member_write(NULL, 9, zeros, big, &f), 0);
    free(zeros);
    assert_true(f.len < 16384);
    recd_gzip_scan scan;
    assert_int_equal(recd_gzip_members_read(f.data, f.len, 65536, NULL, NULL, &scan), -EMSGSIZE);
    assert_true(scan.corrupt);
    assert_int_equal(scan.members, 0);
    /* Exactly at the bound is fine. */
    assert_int_equal(recd_gzip_members_read(f.data, f.len, big, NULL, NULL, &scan), 0);
    assert_int_equal(scan.members, 1);
    recd_buf_free(&f);
}

/* Members written by zlib's own gzip writer (with a file name and OS byte) are read too. */
static void test_foreign_member(void **st)
{
    (void)st;
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    gz_header gh;
    memset(&gh, 0, sizeof(gh));
    gh.name = (Bytef *)"name.txt";
    gh.comment = (Bytef *)"comment";
    gh.hcrc = 1;
    assert_int_equal(deflateSetHeader(&z, &gh), Z_OK);
    uint8_t out[512];
    z.next_in = (Bytef *)"payload";
    z.avail_in = 7;
    z.next_out = out;
    z.avail_out = sizeof(out);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof(out) - z.avail_out;
    deflateEnd(&z);
    collect c = {0};
    recd_gzip_scan scan;
    assert_int_equal(recd_gzip_members_read(out, n, 0, collect_member, &c, &scan), 0);
    assert_int_equal(c.data.len, 7);
    assert_memory_equal(c.data.data, "payload", 7);
    recd_buf_free(&c.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_header), cmocka_unit_test(test_empty_member),
        cmocka_unit_test(test_external_readers),     cmocka_unit_test(test_cut_everywhere),
        cmocka_unit_test(test_corrupt_tails),        cmocka_unit_test(test_zip_bomb_bound),
        cmocka_unit_test(test_foreign_member),
        cmocka_unit_test(test_libdeflate_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
