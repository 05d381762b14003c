/* SPDX-License-Identifier: MIT */
/* benchgen: the benchmark load generator. Declarations shared by its subcommands (prepare
 * streams of samples once, then replay them over TCP, paced UDP or JetStream on loopback only; plus a
 * recvmmsg UDP sink, the raw limit for UDP). */
#ifndef BENCHGEN_H
#define BENCHGEN_H

#include <stddef.h>
#include <stdint.h>

/* A whole file mapped read-only (empty files map to data == NULL, len == 0). */
typedef struct bg_file {
    const uint8_t *data;
    size_t len;
} bg_file;

int bg_file_map(bg_file *f, const char *path); /* 0 or -1 with a message on stderr */
void bg_file_unmap(bg_file *f);

/* CLOCK_MONOTONIC seconds: the same clock as Python's time.monotonic() on Linux, so the harness
 * can subtract our timestamps from its own. */
double bg_now(void);
/* CPU seconds (user + system) this process has used so far: the harness weighs the receiver's CPU
 * against the sender's, which share the machine. */
double bg_cpu_seconds(void);

/* Parses "127.0.0.1:PORT" (or localhost:PORT) into an IPv4 loopback address; refuses anything
 * else so the generator can never send off the machine. 0 or -1 with a message. */
struct sockaddr_in;
int bg_loopback_addr(const char *text, struct sockaddr_in *out);

int bg_cmd_prepare(int argc, char **argv);
int bg_cmd_send_tcp(int argc, char **argv);
int bg_cmd_send_udp(int argc, char **argv);
int bg_cmd_send_nats(int argc, char **argv); /* exits 77 when built without libnats */
int bg_cmd_sink_udp(int argc, char **argv);

#endif
