/* SPDX-License-Identifier: MIT */
/* Replays fuzz inputs given as files without libFuzzer, so the targets build with any compiler
 * and a crash file can be re-run under gdb or valgrind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
            fprintf(stderr, "%s: read failed\n", argv[i]);
            return 1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        free(buf);
    }
    return 0;
}
