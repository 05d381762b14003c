/* SPDX-License-Identifier: MIT */
/* benchgen helpers: mapping prepared files, the monotonic clock, loopback-only addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchgen.h"

/* Reads one byte of every page. MAP_POPULATE reads the file into the page cache and maps it but
 * does not touch the bytes, and on a virtual machine that hands free memory back to its host, a
 * page the host took back faults on the host at its first touch, 1-2 us a page measured
 * (docs/performance.md, "The sender's input"). Left to the timed send loop, that made the
 * sender, not the receiver, set the rate in about one run in six to ten. */
static void touch_pages(const uint8_t *p, size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t step = page > 0 ? (size_t)page : 4096;
    volatile uint8_t sink = 0;
    for (size_t off = 0; off < len; off += step)
        sink ^= p[off];
    (void)sink;
}

int bg_file_map(bg_file *f, const char *path)
{
    f->data = NULL;
    f->len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "benchgen: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        fprintf(stderr, "benchgen: %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (st.st_size > 0) {
        /* MAP_POPULATE: page faults would otherwise land inside the timed send loop. */
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "benchgen: mmap %s: %s\n", path, strerror(errno));
            close(fd);
            return -1;
        }
        touch_pages(p, (size_t)st.st_size);
        f->data = p;
        f->len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

void bg_file_unmap(bg_file *f)
{
    if (f->data)
        munmap((void *)f->data, f->len);
    f->data = NULL;
    f->len = 0;
}

double bg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

double bg_cpu_seconds(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) < 0)
        return 0;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int bg_loopback_addr(const char *text, struct sockaddr_in *out)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || strlen(colon + 1) == 0 || strlen(colon + 1) > 5) {
        fprintf(stderr, "benchgen: bad address '%s' (want 127.0.0.1:PORT)\n", text);
        return -1;
    }
    char host[64];
    size_t hl = (size_t)(colon - text);
    if (hl >= sizeof host) {
        fprintf(stderr, "benchgen: bad address '%s'\n", text);
        return -1;
    }
    memcpy(host, text, hl);
    host[hl] = 0;
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &out->sin_addr) != 1) {
        fprintf(stderr, "benchgen: bad address '%s' (want 127.0.0.1:PORT)\n", text);
        return -1;
    }
    if ((ntohl(out->sin_addr.s_addr) >> 24) != 127) {
        fprintf(stderr, "benchgen: %s is not a loopback address; refusing to send\n", host);
        return -1;
    }
    out->sin_port = htons((uint16_t)port);
    return 0;
}
