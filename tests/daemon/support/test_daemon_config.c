/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/config*.c: defaults, a full file, every error class with its exact
 * position and hint, listen URLs, templates, reload comparison, dumping, and the shipped
 * config/docs. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "support/config.h"
#include "support/log.h"
#include "record/formats/recap/recap_config.h"
#include "record/session_formats.h"
#include "recd/samp_rec.h"

static int load(const char *yaml, recd_config *cfg, recd_config_error *err)
{
    return recd_config_load_string(yaml, strlen(yaml), "t.yaml", cfg, err);
}

/* The load must fail with exactly this message. */
#define expect_error(yaml_, want_) expect_error_line((yaml_), (want_), __LINE__)

static void expect_error_line(const char *yaml, const char *want, int line)
{
    recd_config c;
    recd_config_error e;
    int rc = load(yaml, &c, &e);
    if (rc == 0)
        recd_config_free(&c);
    if (rc != -EINVAL || strcmp(e.text, want) != 0)
        fail_msg("line %d: for YAML:\n%s\nexpected: %s\n     got: %s (rc %d)", line, yaml, want, rc ? e.text : "success",
                 rc);
}

/* The load must fail at line:column with a message containing needle. */
#define expect_error_at(yaml_, l_, c_, needle_) expect_error_at_line((yaml_), (l_), (c_), (needle_), __LINE__)

static void expect_error_at_line(const char *yaml, unsigned line, unsigned col, const char *needle, int src_line)
{
    recd_config c;
    recd_config_error e;
    int rc = load(yaml, &c, &e);
    if (rc == 0)
        recd_config_free(&c);
    if (rc != -EINVAL || e.line != line || e.column != col || !strstr(e.message, needle))
        fail_msg("line %d: for YAML:\n%s\nexpected %u:%u containing '%s'\n     got: %s (rc %d)", src_line, yaml, line,
                 col, needle, rc ? e.text : "success", rc);
}

static void defaults(void **state)
{
    (void)state;
    recd_config c;
    assert_int_equal(recd_config_defaults(&c), 0);
    assert_int_equal(c.listen_count, 2);
    assert_int_equal(c.listen[0].transport, RECD_WIRE_TCP);
    assert_int_equal(c.listen[1].transport, RECD_WIRE_UDP);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(c.listen[i].addr.host, "127.0.0.1");
        assert_int_equal(c.listen[i].addr.port, 7070);
        assert_int_equal(c.listen[i].addr.family, AF_INET);
        assert_int_equal(c.listen[i].encoding, RECD_WIRE_AUTO);
    }
    assert_string_equal(c.output.root, "./recordings");
    assert_string_equal(c.output.path_template.text, RECD_PATH_TEMPLATE_DEFAULT);
    assert_true(c.output.rebase_parts);
    assert_int_equal(c.output.file_mode, 0640);
    assert_int_equal(c.output.dir_mode, 0750);
    assert_true(c.flush.interval_ms == 1000);
    assert_true(c.flush.buffer_size == 65536);
    assert_true(c.limits.max_frame == 65536);
    assert_true(c.limits.session_buffer == 1048576);
    assert_true(c.limits.process_buffer == 256ull << 20);
    assert_int_equal(c.limits.max_sessions, 10000);
    assert_int_equal(c.limits.max_connections, 1024);
    assert_true(c.rotation.max_size == 1ull << 30);
    assert_true(c.rotation.max_duration_ms == 0);
    assert_true(c.rotation.idle_timeout_ms == 60000);
    assert_true(c.retention.max_age_ms == 0 && c.retention.max_total_size == 0);
    assert_int_equal(c.retention.max_files_per_session, 0);
    assert_int_equal(recap_config_of(&c)->keyframe_interval, 200);
    assert_int_equal(recap_config_of(&c)->gzip_level, 6);
    assert_int_equal(recap_config_of(&c)->compressor, RECD_GZIP_LIBDEFLATE);
    assert_int_equal(c.rec.time_policy, RECD_REC_TIME_CLAMP);
    assert_true(c.metrics.enabled);
    assert_false(c.metrics.allow_remote);
    assert_string_equal(c.metrics.listen.host, "127.0.0.1");
    assert_int_equal(c.metrics.listen.port, 9464);
    assert_int_equal(c.log.level, RECD_LOG_INFO);
    assert_true(c.shutdown.drain_timeout_ms == 10000);
    assert_null(c.auth.token);

    /* An empty file, comments only, or an explicit null document give the same config. */
    static const char *const empty[] = {"", "# nothing here\n", "---\n", "~\n", "flush:\nlimits: ~\n"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        recd_config d;
        recd_config_error e;
        assert_int_equal(load(empty[i], &d, &e), 0);
        recd_config_diff diff;
        recd_config_compare(&c, &d, &diff);
        assert_int_equal(diff.count, 0);
        recd_config_free(&d);
    }
    recd_config_free(&c);
}

static const char full_yaml[] =
    "# every option set\n"
    "listen:\n"
    "  - tcp://0.0.0.0:7400\n"
    "  - url: udp://[::1]:7401\n"
    "    encoding: binary\n"
    "  - url: unix:///run/recd/ingest.sock\n"
    "    encoding: ndjson\n"
    "output:\n"
    "  root: /var/lib/recd\n"
    "  path_template: \"{session}/{date}/{format}-{part}.{ext}\"\n"
    "  rebase_parts: false\n"
    "  file_mode: 0600\n"
    "  dir_mode: \"0o700\"\n"
    "flush:\n"
    "  interval: 250ms\n"
    "  buffer_size: 128KiB\n"
    "limits:\n"
    "  max_frame: 16KiB\n"
    "  session_buffer: 2MiB\n"
    "  process_buffer: 1GiB\n"
    "  max_sessions: 500\n"
    "  max_connections: 100\n"
    "rotation:\n"
    "  max_size: 10GiB\n"
    "  max_duration: 2h\n"
    "  idle_timeout: 5m\n"
    "retention:\n"
    "  max_age: 30d\n"
    "  max_total_size: 100GiB\n"
    "  max_files_per_session: 10\n"
    "recap:\n"
    "  keyframe_interval: 100\n"
    "  gzip_level: 1\n"
    "  compressor: zlib\n"
    "rec:\n"
    "  time_policy: reject\n"
    "metrics:\n"
    "  enabled: false\n"
    "  listen: \"[::1]:9100\"\n"
    "  allow_remote: yes\n"
    "log:\n"
    "  level: debug\n"
    "shutdown:\n"
    "  drain_timeout: 0\n"
    "auth:\n"
    "  token: 0123456789abcdef-secret\n";

static void full_file(void **state)
{
    (void)state;
    recd_config c;
    recd_config_error e;
    int rc = load(full_yaml, &c, &e);
    if (rc)
        fail_msg("%s", e.text);
    assert_int_equal(c.listen_count, 3);
    assert_int_equal(c.listen[0].transport, RECD_WIRE_TCP);
    assert_string_equal(c.listen[0].addr.host, "0.0.0.0");
    assert_int_equal(c.listen[0].addr.port, 7400);
    assert_string_equal(c.listen[0].url, "tcp://0.0.0.0:7400");
    assert_int_equal(c.listen[1].transport, RECD_WIRE_UDP);
    assert_string_equal(c.listen[1].addr.host, "::1");
    assert_int_equal(c.listen[1].addr.family, AF_INET6);
    assert_int_equal(c.listen[1].addr.port, 7401);
    assert_int_equal(c.listen[1].encoding, RECD_WIRE_BINARY);
    assert_int_equal(c.listen[2].transport, RECD_WIRE_UNIX);
    assert_string_equal(c.listen[2].path, "/run/recd/ingest.sock");
    assert_int_equal(c.listen[2].encoding, RECD_WIRE_NDJSON);
    assert_string_equal(c.output.root, "/var/lib/recd");
    assert_string_equal(c.output.path_template.text, "{session}/{date}/{format}-{part}.{ext}");
    assert_false(c.output.rebase_parts);
    assert_int_equal(c.output.file_mode, 0600);
    assert_int_equal(c.output.dir_mode, 0700);
    assert_true(c.flush.interval_ms == 250);
    assert_true(c.flush.buffer_size == 131072);
    assert_true(c.limits.max_frame == 16384);
    assert_true(c.limits.session_buffer == 2u << 20);
    assert_true(c.limits.process_buffer == 1u << 30);
    assert_int_equal(c.limits.max_sessions, 500);
    assert_int_equal(c.limits.max_connections, 100);
    assert_true(c.rotation.max_size == 10ull << 30);
    assert_true(c.rotation.max_duration_ms == 7200000);
    assert_true(c.rotation.idle_timeout_ms == 300000);
    assert_true(c.retention.max_age_ms == 30ull * 86400000);
    assert_true(c.retention.max_total_size == 100ull << 30);
    assert_int_equal(c.retention.max_files_per_session, 10);
    assert_int_equal(recap_config_of(&c)->keyframe_interval, 100);
    assert_int_equal(recap_config_of(&c)->gzip_level, 1);
    assert_int_equal(recap_config_of(&c)->compressor, RECD_GZIP_ZLIB);
    assert_int_equal(c.rec.time_policy, RECD_REC_TIME_REJECT);
    assert_false(c.metrics.enabled);
    assert_string_equal(c.metrics.listen.host, "::1");
    assert_int_equal(c.metrics.listen.port, 9100);
    assert_true(c.metrics.allow_remote);
    assert_int_equal(c.log.level, RECD_LOG_DEBUG);
    assert_true(c.shutdown.drain_timeout_ms == 0);
    assert_string_equal(c.auth.token, "0123456789abcdef-secret");
    recd_config_free(&c);
    assert_null(c.listen);
}

static void key_errors(void **state)
{
    (void)state;
    expect_error("flush:\n  interval: 1s\n  flush_intervall: 2s\n",
                 "t.yaml:3:3: unknown key 'flush_intervall' in 'flush' (did you mean 'interval'?)");
    expect_error("flush:\n  intervl: 2s\n", "t.yaml:2:3: unknown key 'intervl' in 'flush' (did you mean 'interval'?)");
    expect_error("limits:\n  max_size: 1GiB\n",
                 "t.yaml:2:3: unknown key 'max_size' in 'limits' (did you mean 'rotation.max_size'?)");
    expect_error_at("flush:\n  zzzzzz: 1\n", 2, 3, "known keys: interval, buffer_size");
    expect_error("flsh:\n  interval: 1s\n", "t.yaml:1:1: unknown section 'flsh' (did you mean 'flush'?)");
    expect_error("level: debug\n",
                 "t.yaml:1:1: unknown section 'level' (did you mean 'log.level'? keys go inside their section)");
    expect_error_at("bogus: 1\n", 1, 1, "sections are: listen, output");
    expect_error("log:\n  level: info\nflush:\n  interval: 1s\nlog:\n  level: debug\n",
                 "t.yaml:5:1: duplicate key 'log' (first set at line 1)");
    expect_error("flush:\n  interval: 1s\n  interval: 2s\n",
                 "t.yaml:3:3: duplicate key 'interval' in flush (first set at line 2)");
    expect_error_at("flush:\n  [a]: 1\n", 2, 3, "a key must be a single word");
}

static void type_errors(void **state)
{
    (void)state;
    expect_error_at("flush: 5\n", 1, 8, "'flush' must be a mapping of keys");
    expect_error_at("flush:\n  - interval\n", 2, 3, "not a list");
    expect_error_at("flush:\n  interval:\n    a: 1\n", 3, 5, "flush.interval must be a single value, not a mapping");
    expect_error_at("flush:\n  interval: [1s]\n", 2, 13, "not a list");
    expect_error_at("flush:\n  interval:\n", 2, 12, "flush.interval has no value (the default is 1s)");
    expect_error_at("- a\n- b\n", 1, 1, "the top level must be a mapping");
    expect_error_at("just a string\n", 1, 1, "the top level must be a mapping");
    expect_error_at("listen: tcp://127.0.0.1:1\n", 1, 9, "'listen' must be a list");
    expect_error_at("listen:\n", 1, 8, "write 'listen: []'");
    expect_error_at("output:\n  rebase_parts: maybe\n", 2, 17, "expected true or false, got 'maybe'");
    expect_error_at("limits:\n  max_sessions: -5\n", 2, 17, "expected a whole number, got '-5'");
    expect_error_at("limits:\n  max_sessions: 99999999999999999999999\n", 2, 17, "too large");
}

static void value_errors(void **state)
{
    (void)state;
    expect_error("flush:\n  interval: 1x\n",
                 "t.yaml:2:13: flush.interval: invalid duration '1x': expected a unit after each number: ms, s, "
                 "m, h or d (e.g. 250ms, 30s, 1h30m)");
    expect_error("flush:\n  interval: 10\n",
                 "t.yaml:2:13: flush.interval: invalid duration '10': a number alone is not a duration: add a "
                 "unit, ms, s, m, h or d (e.g. 30s)");
    expect_error("flush:\n  interval: 5ms\n", "t.yaml:2:13: flush.interval: 5ms is below the minimum of 10ms");
    expect_error("flush:\n  interval: 2h\n", "t.yaml:2:13: flush.interval: 2h is above the maximum of 1h");
    expect_error("rotation:\n  max_size: 1KiB\n",
                 "t.yaml:2:13: rotation.max_size: 1KiB is below the minimum of 64KiB (or 0 to turn it off)");
}

static void more_value_errors(void **state)
{
    (void)state;
    expect_error("log:\n  level: warnig\n",
                 "t.yaml:2:10: log.level: unknown value 'warnig' (did you mean 'warning'?); expected one of: emerg, "
                 "alert, crit, err, error, warning, warn, notice, info, debug");
    expect_error_at("rec:\n  time_policy: drop\n", 2, 16, "expected one of: reject, clamp");
    expect_error("output:\n  file_mode: 0400\n", "t.yaml:2:14: output.file_mode: mode 0400 lacks the owner bits 0600 recd needs");
    expect_error_at("output:\n  dir_mode: 0980\n", 2, 13, "expected octal permission bits");
    expect_error_at("output:\n  dir_mode: 01777\n", 2, 13, "expected octal permission bits");
    expect_error_at("output:\n  path_template: \"{nope}/{session}.{ext}\"\n", 2, 18, "unknown placeholder");
    expect_error_at("output:\n  path_template: \"/abs/{session}.{ext}\"\n", 2, 18, "invalid path template");
    expect_error_at("output:\n  path_template: \"{session}/../{start}.{ext}\"\n", 2, 18, "invalid path template");
    expect_error_at("output:\n  root: \"\"\n", 2, 9, "path must not be empty");
    expect_error_at("auth:\n  token: short\n", 2, 10, "the token has 5 characters");
    expect_error_at("auth:\n  token: \"0123456789abcdef 0123\"\n", 2, 10, "printable ASCII without spaces");
    expect_error_at("flush:\n  interval: \"1\\0s\"\n", 2, 13, "contains a NUL byte");
    expect_error_at("recap:\n  gzip_level: 0\n", 2, 15, "below the minimum of 1");
    expect_error_at("recap:\n  gzip_level: 10\n", 2, 15, "above the maximum of 9");
    expect_error_at("recap:\n  compressor: zstd\n", 2, 15, "expected one of: libdeflate, zlib");
    expect_error_at("limits:\n  max_frame: 64KB\n", 2, 14, "expected a unit: B, KiB, MiB, GiB or TiB");
    expect_error_at("metrics:\n  listen: localhost:9464\n", 2, 11, "not an IPv4 address");
    expect_error_at("metrics:\n  listen: 9464\n", 2, 11, "missing ':PORT'");

    /* Nullable: an empty token means none. */
    recd_config c;
    recd_config_error e;
    assert_int_equal(load("auth:\n  token:\n", &c, &e), 0);
    assert_null(c.auth.token);
    recd_config_free(&c);
    assert_int_equal(load("auth:\n  token: ''\n", &c, &e), 0);
    assert_null(c.auth.token);
    recd_config_free(&c);
}

static void listen_errors(void **state)
{
    (void)state;
    expect_error("listen:\n  - tcp://localhost:7070\n",
                 "t.yaml:2:5: listen: 'localhost' is not an IPv4 address (host names are not resolved; use e.g. "
                 "127.0.0.1 or 0.0.0.0)");
    expect_error("listen:\n  - tcp://::1:7070\n",
                 "t.yaml:2:5: listen: '::1:7070': write IPv6 addresses in brackets, e.g. [::1]:7070");
    expect_error("listen:\n  - http://1.2.3.4:80\n", "t.yaml:2:5: listen: unknown scheme 'http'; use tcp://, tls://, udp:// or unix://");
    expect_error_at("listen:\n  - 1.2.3.4:80\n", 2, 5, "is not a listen URL");
    expect_error_at("listen:\n  - tcp://1.2.3.4:70000\n", 2, 5, "port must be a number from 0 to 65535");
    expect_error_at("listen:\n  - tcp://1.2.3.4:\n", 2, 5, "because it ends in ':'; give the port");
    expect_error_at("listen:\n  - \"tcp://1.2.3.4:\"\n", 2, 5, "port must be a number");
    expect_error_at("listen:\n  - tcp://1.2.3.4\n", 2, 5, "missing ':PORT'");
    expect_error_at("listen:\n  - tcp://1.2.3.4:7/x\n", 2, 5, "a tcp URL has no path");
    expect_error_at("listen:\n  - tcp://[::1:7\n", 2, 5, "missing ']'");
    expect_error_at("listen:\n  - tcp://[::1]7\n", 2, 5, "expected ':PORT'");
    expect_error_at("listen:\n  - tcp://[1.2.3.4]:7\n", 2, 5, "is not an IPv6 address");
    expect_error_at("listen:\n  - udp://300.1.1.1:7\n", 2, 5, "is not an IPv4 address");
    expect_error("listen:\n  - tcp://1.2.3.4:7\n  - tcp://1.2.3.4:7\n",
                 "t.yaml:3:5: listen: 'tcp://1.2.3.4:7' is the same socket as 'tcp://1.2.3.4:7' above");
    expect_error_at("listen:\n  - udp://[::1]:7\n  - udp://[0:0::1]:7\n", 3, 5, "is the same socket");
    expect_error_at("listen:\n  - unix://run/x.sock\n", 2, 5, "a Unix socket needs an absolute path");
    expect_error_at("listen:\n  - tcp://1.2.3.4:7?encoding=binary\n", 2, 5, "not as a ?query");
    char long_path[256] = "listen:\n  - unix:///";
    memset(long_path + strlen(long_path), 'a', 107); /* '/' + 107 = 108 bytes: no room for the NUL */
    strcat(long_path, "\n");
    expect_error_at(long_path, 2, 5, "longer than 107 bytes");
    long_path[strlen(long_path) - 2] = '\n';
    long_path[strlen(long_path) - 1] = '\0';
    recd_config ok_cfg;
    recd_config_error ok_err;
    assert_int_equal(load(long_path, &ok_cfg, &ok_err), 0);
    assert_int_equal(strlen(ok_cfg.listen[0].path), 107);
    recd_config_free(&ok_cfg);
    expect_error_at("listen:\n  - unix:///a\n  - unix:///a\n", 3, 5, "is the same socket");
    expect_error("listen:\n  - url: tcp://1.2.3.4:7\n    encodng: binary\n",
                 "t.yaml:3:5: unknown key 'encodng' in a listen entry (did you mean 'encoding'?)");
    expect_error("listen:\n  - url: tcp://1.2.3.4:7\n    encoding: json\n",
                 "t.yaml:3:15: listen encoding: unknown value 'json' (did you mean 'ndjson'?); expected one of: auto, "
                 "binary, ndjson");
    expect_error_at("listen:\n  - encoding: binary\n", 2, 5, "needs a 'url'");
    expect_error_at("listen:\n  - [tcp://1.2.3.4:7]\n", 2, 5, "must be a URL or a mapping");
    expect_error_at("listen:\n  - url: [a]\n", 2, 10, "listen url must be a single value");

    /* tcp and udp may share a port; port 0 may repeat (each picks its own). */
    recd_config c;
    recd_config_error e;
    assert_int_equal(load("listen:\n  - tcp://127.0.0.1:7\n  - udp://127.0.0.1:7\n  - tcp://127.0.0.1:0\n"
                          "  - tcp://127.0.0.1:0\n",
                          &c, &e),
                     0);
    assert_int_equal(c.listen_count, 4);
    recd_config_free(&c);
    /* An explicit empty list: socket activation only. */
    assert_int_equal(load("listen: []\n", &c, &e), 0);
    assert_int_equal(c.listen_count, 0);
    assert_null(c.listen);
    recd_config_free(&c);
    /* Too many entries. */
    char big[8192] = "listen:\n";
    for (int i = 0; i <= RECD_CONFIG_MAX_LISTEN; i++) {
        char line[64];
        snprintf(line, sizeof line, "  - tcp://127.0.0.1:%d\n", 1000 + i);
        strcat(big, line);
    }
    expect_error_at(big, RECD_CONFIG_MAX_LISTEN + 2, 5, "more than 64 listen entries");
}

static void yaml_errors(void **state)
{
    (void)state;
    expect_error("flush:\n  interval: [1s\n",
                 "t.yaml:3:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence "
                 "started at line 2)");
    expect_error("flush:\n\tinterval: 1s\n",
                 "t.yaml:2:1: YAML syntax error: found character that cannot start any token (while scanning for the "
                 "next token started at line 2); indent with spaces, YAML does not allow tabs");
    expect_error_at("flush:\n  interval: 1s\n bad: 1\n", 3, 2, "YAML syntax error");
    expect_error("flush: &f\n  interval: 1s\nlimits: *f\n",
                 "t.yaml:3:1: YAML anchors and aliases (*name) are not supported here; write the value out");
    expect_error_at("x: *nothing\n", 1, 4, "YAML syntax error");
    expect_error("log:\n  level: info\n---\nlog:\n  level: debug\n",
                 "t.yaml:3:1: only one YAML document is allowed (remove the second '---')");
    expect_error("flush:\n  interval: \xff\n", "t.yaml:2:13: cannot read the file as YAML: invalid leading UTF-8 octet");
    /* An alias used once refers to a node seen before: also rejected, where it is used. */
    expect_error_at("log: &l\n  level: info\nflush:\n  interval: 1s\nrec: *l\n", 5, 1, "aliases");

    /* Deep nesting is refused quickly (libyaml alone is quadratic in the depth). */
    size_t deep = 200000;
    char *brackets = malloc(deep + 1);
    assert_non_null(brackets);
    memset(brackets, '[', deep);
    brackets[deep] = '\0';
    expect_error("listen: [[[[[[[[[[[[[[[[[[[[tcp://1.2.3.4:1]]]]]]]]]]]]]]]]]]]]\n",
                 "t.yaml:1:24: lists and mappings are nested more than 16 levels deep");
    expect_error_at(brackets, 1, 17, "nested more than 16 levels deep");
    free(brackets);
}

static void cross_option_errors(void **state)
{
    (void)state;
    expect_error("flush:\n  buffer_size: 4MiB\n",
                 "t.yaml:2:16: flush.buffer_size (4MiB) is larger than limits.session_buffer (1MiB): sessions would "
                 "hit backpressure before they ever flush");
    /* Reported at the option set later in the file. */
    expect_error_at("flush:\n  buffer_size: 1MiB\nlimits:\n  session_buffer: 512KiB\n", 4, 19,
                    "is larger than limits.session_buffer");
    expect_error_at("limits:\n  max_frame: 2MiB\n", 2, 14, "limits.max_frame (2MiB) is larger than limits.session_buffer");
    expect_error_at("limits:\n  session_buffer: 512MiB\n  process_buffer: 256MiB\n", 3, 19,
                    "limits.session_buffer (512MiB) is larger than limits.process_buffer (256MiB)");
    expect_error("metrics:\n  listen: 0.0.0.0:9464\n",
                 "t.yaml:2:11: metrics.listen 0.0.0.0 is not a loopback address; the endpoint has no authentication, "
                 "so set metrics.allow_remote: true to expose it beyond this host");
    expect_error_at("metrics:\n  listen: 127.0.0.1:7070\nlisten: [tcp://127.0.0.1:7070]\n", 2, 11,
                    "same address as listener tcp://127.0.0.1:7070");

    expect_error_at("listen: [tcp://0.0.0.0:9464]\n", 0, 0, "metrics.listen uses the same address as listener");
    expect_error_at("listen: [\"tcp://[::]:9464\"]\n", 0, 0, "metrics.listen uses the same address as listener");

    recd_config c;
    recd_config_error e;
    assert_int_equal(load("listen: [udp://0.0.0.0:9464, tcp://127.0.0.2:9464]\n", &c, &e), 0);
    recd_config_free(&c);
    assert_int_equal(load("metrics:\n  listen: 0.0.0.0:9464\n  allow_remote: true\n", &c, &e), 0);
    recd_config_free(&c);
    assert_int_equal(load("metrics:\n  enabled: false\n  listen: 10.0.0.1:9464\n", &c, &e), 0);
    recd_config_free(&c);
    assert_int_equal(load("metrics:\n  listen: 127.9.9.9:1\n", &c, &e), 0);
    recd_config_free(&c);
    assert_int_equal(load("metrics:\n  listen: \"[::1]:1\"\n", &c, &e), 0);
    recd_config_free(&c);
    assert_int_equal(load("metrics:\n  listen: \"[::ffff:127.0.0.1]:1\"\n", &c, &e), 0);
    recd_config_free(&c);
    expect_error_at("metrics:\n  listen: \"[::]:1\"\n", 2, 11, "not a loopback address");
}

static void file_loading(void **state)
{
    (void)state;
    recd_config c;
    recd_config_error e;
    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/missing.yaml", dir);
    assert_int_equal(recd_config_load_file(path, &c, &e), -ENOENT);
    assert_int_equal(e.line, 0);
    char want[4400];
    snprintf(want, sizeof want, "%s: cannot open the config file: No such file or directory", path);
    assert_string_equal(e.text, want);

    assert_int_equal(recd_config_load_file(dir, &c, &e), -EINVAL);
    assert_non_null(strstr(e.text, "not a regular file"));

    snprintf(path, sizeof path, "%s/recd.yaml", dir);
    assert_int_equal(tu_write_file(path, full_yaml, strlen(full_yaml)), 0);
    assert_int_equal(recd_config_load_file(path, &c, &e), 0);
    assert_int_equal(c.listen_count, 3);
    recd_config_free(&c);

    static const char bad[] = "flush:\n  interval: 1s\n  flush_intervall: 2s\n";
    assert_int_equal(tu_write_file(path, bad, strlen(bad)), 0);
    assert_int_equal(recd_config_load_file(path, &c, &e), -EINVAL);
    snprintf(want, sizeof want, "%s:3:3: unknown key 'flush_intervall' in 'flush' (did you mean 'interval'?)", path);
    assert_string_equal(e.text, want);
    assert_string_equal(e.file, path);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.column, 3);

    /* Oversized files are refused before parsing. */
    size_t big_len = RECD_CONFIG_MAX_FILE_SIZE + 1;
    char *big = malloc(big_len);
    assert_non_null(big);
    memset(big, '#', big_len);
    assert_int_equal(tu_write_file(path, big, big_len), 0);
    free(big);
    assert_int_equal(recd_config_load_file(path, &c, &e), -EFBIG);
    remove(path);
}

static void reload_diff(void **state)
{
    (void)state;
    recd_config a, b;
    recd_config_error e;
    recd_config_diff d;
    assert_int_equal(recd_config_defaults(&a), 0);

    assert_int_equal(load("flush:\n  interval: 2s\nlog:\n  level: debug\nretention:\n  max_age: 7d\n", &b, &e), 0);
    recd_config_compare(&a, &b, &d);
    assert_int_equal(d.count, 3);
    assert_int_equal(d.restart_needed, 0);
    assert_string_equal(d.changes[0].key, "flush.interval");
    assert_true(d.changes[0].live);
    assert_string_equal(d.changes[1].key, "retention.max_age");
    assert_string_equal(d.changes[2].key, "log.level");
    recd_config_free(&b);

    assert_int_equal(load("output:\n  root: /elsewhere\nlisten:\n  - tcp://127.0.0.1:7070\n", &b, &e), 0);
    recd_config_compare(&a, &b, &d);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.restart_needed, 1);
    assert_string_equal(d.changes[0].key, "listen");
    assert_true(d.changes[0].live);
    assert_string_equal(d.changes[1].key, "output.root");
    assert_false(d.changes[1].live);
    recd_config_free(&b);

    assert_int_equal(load("listen:\n  - url: tcp://127.0.0.1:7070\n    encoding: ndjson\n  - udp://127.0.0.1:7070\n"
                          "limits:\n  max_sessions: 5\nrotation:\n  max_size: 0\nmetrics:\n  listen: 127.0.0.1:9999\n"
                          "auth:\n  token: aaaaaaaaaaaaaaaa\n",
                          &b, &e),
                     0);
    recd_config_compare(&a, &b, &d);
    assert_int_equal(d.count, 5);
    assert_int_equal(d.restart_needed, 1);
    for (size_t i = 0; i < d.count; i++)
        assert_true(d.changes[i].live == (strcmp(d.changes[i].key, "metrics.listen") != 0));
    recd_config_compare(&b, &b, &d);
    assert_int_equal(d.count, 0);
    recd_config_free(&b);
    recd_config_free(&a);
}

/* Rule 9 (docs/reliability.md, round 3): what a half-written file would weaken is refused unless
 * the file says it; `token: none` is no token on purpose, and dumps back as such. */
static void reload_refusals(void **state)
{
    (void)state;
    static const char running_yaml[] = "listen:\n  - tcp://0.0.0.0:7070\nlog:\n  level: info\n"
                                       "auth:\n  token: aaaaaaaaaaaaaaaa\n";
    static const struct {
        const char *yaml;
        recd_reload_refusal want;
    } cases[] = {
        {"", RECD_RELOAD_EMPTY_FILE},
        {"# half\n", RECD_RELOAD_EMPTY_FILE},
        {"listen:\n  - tcp://0.0.0.0:7070\nlog:\n  level: info\n", RECD_RELOAD_AUTH_OFF},
        {"listen:\n  - tcp://0.0.0.0:7070\nauth:\n  token:\n", RECD_RELOAD_AUTH_OFF},
        {"listen:\n  - tcp://0.0.0.0:7070\nauth:\n  token: none\n", RECD_RELOAD_ACCEPTED},
        {"log:\n  level: debug\nauth:\n  token: aaaaaaaaaaaaaaaa\n", RECD_RELOAD_DEFAULT_LISTENERS},
        {"{}", RECD_RELOAD_AUTH_OFF},
        {"listen: []\nauth:\n  token: bbbbbbbbbbbbbbbb\n", RECD_RELOAD_ACCEPTED},
        {running_yaml, RECD_RELOAD_ACCEPTED},
    };
    recd_config running;
    recd_config_error e;
    assert_int_equal(load(running_yaml, &running, &e), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recd_config next;
        char why[400] = "";
        assert_int_equal(load(cases[i].yaml, &next, &e), 0);
        recd_reload_refusal got = recd_config_reload_check(&running, &next, why, sizeof why);
        if (got != cases[i].want)
            fail_msg("case %zu: %s, expected %s (%s)", i, recd_reload_refusal_name(got),
                     recd_reload_refusal_name(cases[i].want), why);
        assert_true(got == RECD_RELOAD_ACCEPTED || why[0]);
        recd_config_free(&next);
    }
    /* Started from an empty file, an empty file changes nothing: not refused. */
    recd_config a, b;
    assert_int_equal(load("", &a, &e), 0);
    assert_int_equal(load("", &b, &e), 0);
    char why[400];
    assert_int_equal(recd_config_reload_check(&a, &b, why, sizeof why), RECD_RELOAD_ACCEPTED);
    recd_config_free(&a);
    recd_config_free(&b);

    /* `none` loads as no token, said on purpose, and dumps back as `none`. */
    assert_int_equal(load("auth:\n  token: none\n", &a, &e), 0);
    assert_null(a.auth.token);
    assert_true(a.auth.off);
    recd_buf out = {0};
    assert_int_equal(recd_config_dump(&a, &out), 0);
    assert_int_equal(recd_buf_append(&out, "", 1), 0);
    assert_non_null(strstr((const char *)out.data, "token: none\n"));
    assert_int_equal(recd_config_load_string((const char *)out.data, out.len - 1, "dump", &b, &e), 0);
    assert_true(b.auth.off);
    recd_buf_free(&out);
    recd_config_free(&a);
    recd_config_free(&b);
    recd_config_free(&running);
}

/* The load must fail with a message containing needle. */
static void expect_failure_with(const char *yaml, const char *needle)
{
    recd_config c;
    recd_config_error e;
    int rc = load(yaml, &c, &e);
    if (rc == 0)
        recd_config_free(&c);
    if (rc == 0 || !strstr(e.text, needle))
        fail_msg("for YAML:\n%s\nexpected an error containing '%s'\n     got: %s", yaml, needle,
                 rc ? e.text : "success");
}

/* tls://, the tls: section, identities and auth.token_file (issue 40). */
static void tls_options(void **state)
{
    (void)state;
    recd_config c;
    recd_config_error e;
    const char *good = "listen: [tls://127.0.0.1:7443, tcp://127.0.0.1:7070]\n"
                       "tls: {cert: /c.pem, key: /k.pem, client_ca: /ca.pem, min_version: \"1.3\"}\n"
                       "identities:\n  \"gs-eu-*\": {sessions: \"eu-*\"}\n  gs-us-1: {sessions: us-1}\n";
    assert_int_equal(load(good, &c, &e), 0);
    assert_true(c.listen[0].tls);
    assert_false(c.listen[1].tls);
    assert_int_equal(c.listen[0].transport, RECD_WIRE_TCP);
    assert_int_equal(c.tls.min_version, 13);
    assert_int_equal(c.identity_count, 2);
    assert_string_equal(c.identities[0].pattern, "gs-eu-*");
    assert_string_equal(c.identities[1].sessions, "us-1");
    recd_buf out = {0};
    recd_config b;
    assert_int_equal(recd_config_dump(&c, &out), 0);
    assert_int_equal(recd_config_load_string((const char *)out.data, out.len, "dump", &b, &e), 0);
    recd_config_diff d;
    recd_config_compare(&c, &b, &d);
    assert_int_equal(d.count, 0);
    recd_config_free(&b);
    b = c;
    memset(&c, 0, sizeof c);
    assert_int_equal(load("listen: [tls://127.0.0.1:7443]\ntls: {cert: /c.pem, key: /k.pem, client_ca: /ca.pem}\n",
                          &c, &e), 0);
    recd_config_compare(&b, &c, &d);
    assert_true(d.count >= 1);
    bool saw = false;
    for (size_t i = 0; i < d.count; i++)
        saw |= strcmp(d.changes[i].key, "identities") == 0 && d.changes[i].live;
    assert_true(saw);
    recd_config_free(&b);
    recd_config_free(&c);
    recd_buf_free(&out);

    expect_failure_with("listen: [tls://127.0.0.1:7443]\n", "needs tls.cert and tls.key");
    expect_failure_with("tls: {cert: /c.pem}\n", "tls.cert and tls.key go together");
    expect_failure_with("tls: {min_version: \"1.1\"}\n", "tls.min_version");
    expect_failure_with("tls: {min_version: \"1.0\"}\n", "tls.min_version");
    expect_failure_with("identities: {\"a*\": {sessions: \"b*\"}}\n", "set tls.client_ca");
    expect_failure_with("tls: {client_ca: /ca.pem}\nidentities: {\"a*\": {}}\n", "needs sessions");
    expect_failure_with("tls: {client_ca: /ca.pem}\nidentities: {\"a*\": {session: x}}\n",
                        "unknown key 'session' in identities");
    expect_failure_with("metrics: {tls: true}\n", "metrics.tls needs tls.cert");
    expect_failure_with("auth: {token_file: /nonexistent/recd-token}\n", "auth.token_file");
    expect_failure_with("auth: {token: abcdefghijklmnopqrst, token_file: /x}\n", "give one of them");

    char path[] = "/tmp/recd-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "0123456789abcdef0123\n", 21), 21);
    close(fd);
    char yaml[200];
    snprintf(yaml, sizeof yaml, "auth: {token_file: %s}\n", path);
    assert_int_equal(load(yaml, &c, &e), 0);
    assert_string_equal(c.auth.token, "0123456789abcdef0123");
    out = (recd_buf){0};
    assert_int_equal(recd_config_dump(&c, &out), 0);
    assert_int_equal(recd_config_load_string((const char *)out.data, out.len, "dump", &b, &e), 0);
    assert_string_equal(b.auth.token, "0123456789abcdef0123");
    recd_config_free(&b);
    recd_config_free(&c);
    recd_buf_free(&out);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "short\n", 6), 6);
    close(fd);
    expect_failure_with(yaml, "the token has 5 characters");
    unlink(path);
}

static void dump_round_trip(void **state)
{
    (void)state;
    static const char *const sources[] = {full_yaml, "", "listen: []\nauth:\n  token: \"a\\\\b\\\"cdefghijklmnopq\"\n"};
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        recd_config a, b;
        recd_config_error e;
        assert_int_equal(load(sources[i], &a, &e), 0);
        recd_buf out = {0};
        assert_int_equal(recd_config_dump(&a, &out), 0);
        int rc = recd_config_load_string((const char *)out.data, out.len, "dump", &b, &e);
        if (rc)
            fail_msg("%s\n%.*s", e.text, (int)out.len, (const char *)out.data);
        recd_config_diff d;
        recd_config_compare(&a, &b, &d);
        assert_int_equal(d.count, 0);
        recd_config_free(&a);
        recd_config_free(&b);
        recd_buf_free(&out);
    }
}

/* Keeps config/recd.yaml and docs/configuration.md in step with the schema. */
static void shipped_files(void **state)
{
    (void)state;
    const char *src = getenv("RECD_SOURCE_DIR");
    if (!src || !*src) {
        print_message("RECD_SOURCE_DIR not set: shipped file checks skipped\n");
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/config/recd.yaml", src);
    recd_config shipped, def;
    recd_config_error e;
    int rc = recd_config_load_file(path, &shipped, &e);
    if (rc)
        fail_msg("%s", e.text);
    assert_int_equal(recd_config_defaults(&def), 0);
    recd_config_diff d;
    recd_config_compare(&def, &shipped, &d);
    if (d.count)
        fail_msg("config/recd.yaml differs from the built-in defaults in %s", d.changes[0].key);
    recd_config_free(&shipped);
    recd_config_free(&def);

    size_t ylen, mlen;
    char *yaml = (char *)tu_read_file(path, &ylen);
    snprintf(path, sizeof path, "%s/docs/configuration.md", src);
    char *md = (char *)tu_read_file(path, &mlen);
    assert_non_null(yaml);
    assert_non_null(md);
    yaml = realloc(yaml, ylen + 1);
    md = realloc(md, mlen + 1);
    yaml[ylen] = '\0';
    md[mlen] = '\0';
    for (size_t i = 0; i < recd_config_key_count(); i++) {
        recd_config_key_info k;
        recd_config_key_at(i, &k);
        char needle[128];
        snprintf(needle, sizeof needle, "`%s`", k.key);
        if (!strstr(md, needle))
            fail_msg("docs/configuration.md does not document %s", k.key);
        const char *name = strchr(k.key, '.') ? strchr(k.key, '.') + 1 : k.key;
        snprintf(needle, sizeof needle, "%s:", name);
        if (!strstr(yaml, needle))
            fail_msg("config/recd.yaml does not mention %s", k.key);
        assert_non_null(k.doc);
        assert_non_null(k.type);
    }
    free(yaml);
    free(md);
}

/* Mutated configs must never crash or leak, whatever the outcome. */
static void mutations_are_safe(void **state)
{
    (void)state;
    tu_rng rng = {7};
    size_t base_len = strlen(full_yaml);
    char *buf = malloc(base_len + 64);
    assert_non_null(buf);
    static const char alphabet[] = ":-[]{}&*!|>'\"#%@`, \n\t0123456789abcxyz.\\\x00\xc3\xa9\xff";
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, full_yaml, base_len);
        size_t len = base_len;
        int edits = 1 + (int)tu_rand_below(&rng, 4);
        for (int k = 0; k < edits; k++) {
            size_t at = tu_rand_below(&rng, (uint32_t)len);
            switch (tu_rand_below(&rng, 3)) {
            case 0: buf[at] = alphabet[tu_rand_below(&rng, sizeof alphabet - 1)]; break;
            case 1: memmove(buf + at, buf + at + 1, len - at - 1); len--; break;
            default:
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = alphabet[tu_rand_below(&rng, sizeof alphabet - 1)];
                len++;
            }
        }
        recd_config c;
        recd_config_error e;
        if (recd_config_load_string(buf, len, "m.yaml", &c, &e) == 0)
            recd_config_free(&c);
        else
            assert_true(e.text[0] != '\0');
    }
    free(buf);
}

static void schema_introspection(void **state)
{
    (void)state;
    assert_true(recd_config_key_count() > 25);
    recd_config_key_info k;
    recd_config_key_at(0, &k);
    assert_string_equal(k.key, "listen");
    int found = 0;
    for (size_t i = 0; i < recd_config_key_count(); i++) {
        recd_config_key_at(i, &k);
        if (strcmp(k.key, "output.root") == 0) {
            found = 1;
            assert_false(k.live);
            assert_string_equal(k.default_value, "./recordings");
            assert_string_equal(k.type, "path");
        }
    }
    assert_true(found);
}

static void overrides(void **state)
{
    (void)state;
    recd_config c;
    char why[512];
    assert_int_equal(recd_config_defaults(&c), 0);
    assert_int_equal(recd_config_set(&c, "flush.interval", "2s", why, sizeof why), 0);
    assert_true(c.flush.interval_ms == 2000);
    assert_int_equal(recd_config_set(&c, "log.level", "debug", why, sizeof why), 0);
    assert_int_equal(c.log.level, RECD_LOG_DEBUG);
    assert_int_equal(recd_config_set(&c, "output.root", "/srv/rec", why, sizeof why), 0);
    assert_string_equal(c.output.root, "/srv/rec");
    assert_int_equal(recd_config_set(&c, "flush.interval", "1x", why, sizeof why), -EINVAL);
    assert_string_equal(why, "flush.interval: invalid duration '1x': expected a unit after each number: ms, s, m, "
                             "h or d (e.g. 250ms, 30s, 1h30m)");
    assert_int_equal(recd_config_set(&c, "shutdown.drain_timeout", "1m30s", why, sizeof why), 0);
    assert_int_equal(recd_config_set(&c, "flush.intervall", "1s", why, sizeof why), -ENOENT);
    assert_string_equal(why, "unknown key 'flush.intervall'");
    assert_int_equal(recd_config_check(&c, why, sizeof why), 0);

    assert_int_equal(recd_config_set(&c, "metrics.listen", "0.0.0.0:9464", why, sizeof why), 0);
    assert_int_equal(recd_config_check(&c, why, sizeof why), -EINVAL);
    assert_non_null(strstr(why, "not a loopback address"));
    assert_int_equal(recd_config_set(&c, "metrics.enabled", "false", why, sizeof why), 0);
    assert_int_equal(recd_config_check(&c, why, sizeof why), 0);

    recd_listen_config l;
    assert_int_equal(recd_config_parse_listen("udp://[::1]:7000", &l, why, sizeof why), 0);
    assert_int_equal(l.transport, RECD_WIRE_UDP);
    assert_int_equal(l.addr.port, 7000);
    assert_int_equal(recd_config_parse_listen("tcp://host:1", &l, why, sizeof why), -EINVAL);
    assert_non_null(strstr(why, "not an IPv4 address"));

    /* Duplicate sockets introduced after loading are caught by the check. */
    recd_listen_config *two = calloc(2, sizeof *two);
    assert_non_null(two);
    assert_int_equal(recd_config_parse_listen("tcp://127.0.0.1:9", &two[0], why, sizeof why), 0);
    assert_int_equal(recd_config_parse_listen("tcp://127.0.0.1:9", &two[1], why, sizeof why), 0);
    free(c.listen);
    c.listen = two;
    c.listen_count = 2;
    assert_int_equal(recd_config_check(&c, why, sizeof why), -EINVAL);
    assert_string_equal(why, "listen: 'tcp://127.0.0.1:9' is the same socket as 'tcp://127.0.0.1:9'");
    recd_config_free(&c);
}

int main(void)
{
    if (session_formats_install_config() < 0) /* the formats' sections, as recd's main() does */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),    cmocka_unit_test(full_file),   cmocka_unit_test(key_errors),
        cmocka_unit_test(type_errors), cmocka_unit_test(value_errors), cmocka_unit_test(more_value_errors),
        cmocka_unit_test(listen_errors), cmocka_unit_test(yaml_errors), cmocka_unit_test(cross_option_errors),
        cmocka_unit_test(file_loading), cmocka_unit_test(reload_diff), cmocka_unit_test(reload_refusals),
        cmocka_unit_test(dump_round_trip), cmocka_unit_test(tls_options),
        cmocka_unit_test(shipped_files), cmocka_unit_test(mutations_are_safe), cmocka_unit_test(schema_introspection), cmocka_unit_test(overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
