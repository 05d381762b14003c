/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the edit operations (recd/edit.h): on any input, cut, retime, transform,
 * split, concat, diff and the plot track either fail with an error or produce a file that
 * verifies; nothing crashes or leaks. */
#include <stdlib.h>
#include <string.h>

#include "recd/edit.h"
#include "recd/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_verify(int rc, const recd_buf *out)
{
    if (rc < 0)
        return;
    const recd_format *f = recd_format_sniff(out->data, out->len, NULL);
    recd_format_verdict v;
    if (!f || recd_format_verify(f, out->data, out->len, &v, NULL) < 0 || !v.valid)
        abort();
}

static int count_point(void *data, const recd_track_point *p)
{
    (void)p;
    (*(size_t *)data)++;
    return 0;
}

static int one_sink(void *data, size_t i, recd_sink *sink)
{
    recd_buf *b = data;
    recd_buf_reset(b);
    (void)i;
    *sink = recd_buf_sink(b);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    recd_edit_input in = {data, size};
    recd_buf out = {0};
    char err[256];
    recd_cut_opts cut = {100, 5000, false};
    must_verify(recd_edit_cut(in, &cut, recd_buf_sink(&out), NULL, err, sizeof err), &out);
    recd_buf_reset(&out);
    /* A slow grid: a 49-day span still resamples in milliseconds (the cap itself is tested in
     * test_edit_rec.c). */
    recd_retime_opts rt = {1.7, 0.01};
    must_verify(recd_edit_retime(in, &rt, recd_buf_sink(&out), NULL, err, sizeof err), &out);
    recd_buf_reset(&out);
    recd_transform_opts tr = {{10, -20, 1}, 37, false, {0, 0, 0}};
    must_verify(recd_edit_transform(in, &tr, recd_buf_sink(&out), NULL, err, sizeof err), &out);
    recd_buf_reset(&out);
    recd_edit_input two[2] = {in, in};
    must_verify(recd_edit_concat(two, 2, -1, recd_buf_sink(&out), NULL, err, sizeof err), &out);
    recd_buf_reset(&out);
    int64_t at[1] = {200};
    (void)recd_edit_split(in, at, 1, false, one_sink, &out, NULL, err, sizeof err);
    recd_buf_reset(&out);
    (void)recd_edit_diff(in, in, &out, NULL, err, sizeof err);
    size_t points = 0;
    (void)recd_track_read(data, size, count_point, &points, NULL, err, sizeof err);
    recd_buf_free(&out);
    return 0;
}
