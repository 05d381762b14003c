/* SPDX-License-Identifier: MIT */
/* Writes the test writer's sample rFactor 2 replay to a file, for the rectool shell tests and the
 * fuzz seeds: rf2_sample_vcr [--gzip] OUT. */
#include <stdio.h>
#include <string.h>

#include "vcr_test_writer.h"

int main(int argc, char **argv)
{
    bool gzip = argc == 3 && strcmp(argv[1], "--gzip") == 0;
    if (argc != 2 + gzip) {
        fprintf(stderr, "usage: rf2_sample_vcr [--gzip] OUT\n");
        return 2;
    }
    recd_buf b = {0};
    FILE *f = NULL;
    int ok = vcrw_sample(gzip, &b) == 0 && (f = fopen(argv[argc - 1], "wb")) != NULL &&
             fwrite(b.data, 1, b.len, f) == b.len;
    if (f && fclose(f) != 0)
        ok = 0;
    recd_buf_free(&b);
    if (!ok) {
        perror(argv[argc - 1]);
        return 1;
    }
    return 0;
}
