/* SPDX-License-Identifier: MIT */
/* Command-line parsing and overrides for recd (see server_options.h). Overrides go through the
 * configuration schema, so a flag is validated exactly like the same key in the file. */
#include "server_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/nats_connect.h"
#include "record/session_formats.h"
#include "support/config_schema.h"

#define USAGE_WIDTH 85 /* columns of the usage text's wrapped paragraphs */

/* Prints words wrapped greedily into lines of at most USAGE_WIDTH columns. */
static void print_wrapped(FILE *out, const char *text)
{
    size_t col = 0;
    while (*text) {
        size_t n = strcspn(text, " ");
        if (col > 0 && col + 1 + n > USAGE_WIDTH) {
            fputc('\n', out);
            col = 0;
        } else if (col > 0) {
            fputc(' ', out);
            col++;
        }
        fwrite(text, 1, n, out);
        col += n;
        text += n;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

/* What recd records, with the files each format in the list writes. */
static void usage_formats(FILE *out)
{
    char files[512], text[768];
    session_formats_files_what(files, sizeof files);
    snprintf(text, sizeof text,
             "recd records game-server samples sent over TCP, UDP or Unix sockets, or read from NATS "
             "JetStream (nats://), into %s.", files);
    print_wrapped(out, text);
}

void recd_cli_usage(FILE *out)
{
    fputs("usage: recd [--config FILE] [--listen URL]... [--output DIR] [--metrics HOST:PORT]\n"
          "            [--flush-interval DUR] [--log-level LEVEL] [--print-ports]\n"
          "       recd --check-config FILE\n"
          "       recd --print-config [--config FILE] [overrides]\n"
          "       recd --version | --help\n"
          "\n",
          out);
    usage_formats(out);
    fputs("\n"
          "  -c, --config FILE       YAML configuration (docs/configuration.md); without it the\n"
          "                          built-in defaults apply (tcp and udp 127.0.0.1:7070,\n"
          "                          output ./recordings, metrics 127.0.0.1:9464)\n"
          "      --listen URL        tcp://HOST:PORT, tls://HOST:PORT (TLS: the tls: section),\n"
          "                          udp://HOST:PORT, unix:///PATH or\n"
          "                          nats://HOST:PORT/PREFIX (a fleet member, docs/fleet.md); repeat\n"
          "                          for several; replaces the file's listen list\n"
          "      --output DIR        output.root: where recordings are written\n"
          "      --metrics HOST:PORT serve /metrics and /healthz there (port 0: any free port)\n"
          "      --flush-interval D  flush.interval, e.g. 250ms, 1s, 1m30s (a unit is required)\n"
          "      --log-level LEVEL   emerg, alert, crit, err, warning, notice, info or debug\n"
          "      --print-ports       print every bound address on stdout, then 'ready'\n"
          "                          (\"listen tcp://127.0.0.1:40123\", \"metrics 127.0.0.1:9464\")\n"
          "      --check-config FILE load FILE, print the first error as file:line:col, exit 1 on\n"
          "                          error and 0 when it is valid\n"
          "      --print-config      print the effective configuration as YAML and exit\n"
          "      --version           print the version and exit\n"
          "  -h, --help              this text\n"
          "\n"
          "Flags override the configuration file, on start and on every reload (SIGHUP).\n"
          "Signals: SIGTERM/SIGINT drain, flush and finalize every file, then exit 0 (exit 1\n"
          "after write errors: files left as .part or removed behind recd's back, bytes never\n"
          "written); a second one stops waiting for clients at once (their connections are\n"
          "closed, files still finalized);\n"
          "SIGHUP reloads the configuration (an invalid file keeps the running one).\n",
          out);
}

/* "--name VALUE" or "--name=VALUE": the value, advancing *i; NULL when this is not --name. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                             bool *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=')
        return a + n + 1;
    if (strcmp(a, name) != 0 && !(short_name && strcmp(a, short_name) == 0))
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

int recd_cli_parse(int argc, char **argv, recd_cli *cli, char *why, size_t cap)
{
    memset(cli, 0, sizeof *cli);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool missing = false;
        const char *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cli->help = true;
        } else if (strcmp(a, "--version") == 0) {
            cli->version = true;
        } else if (strcmp(a, "--print-ports") == 0) {
            cli->print_ports = true;
        } else if (strcmp(a, "--print-config") == 0) {
            cli->print_config = true;
        } else if ((v = opt_value(argc, argv, &i, "--config", "-c", &missing))) {
            cli->config_path = v;
        } else if ((v = opt_value(argc, argv, &i, "--check-config", NULL, &missing))) {
            cli->check_config = v;
        } else if ((v = opt_value(argc, argv, &i, "--listen", NULL, &missing))) {
            if (cli->listen_count >= RECD_CONFIG_MAX_LISTEN) {
                snprintf(why, cap, "at most %d --listen options", RECD_CONFIG_MAX_LISTEN);
                return -EINVAL;
            }
            cli->listen[cli->listen_count++] = v;
        } else if ((v = opt_value(argc, argv, &i, "--output", NULL, &missing))) {
            cli->output = v;
        } else if ((v = opt_value(argc, argv, &i, "--metrics", NULL, &missing))) {
            cli->metrics = v;
        } else if ((v = opt_value(argc, argv, &i, "--flush-interval", NULL, &missing))) {
            cli->flush_interval = v;
        } else if ((v = opt_value(argc, argv, &i, "--log-level", NULL, &missing))) {
            cli->log_level = v;
        } else if (missing) {
            snprintf(why, cap, "option %s needs a value", a);
            return -EINVAL;
        } else {
            snprintf(why, cap, "unknown option '%.60s' (see recd --help)", a);
            return -EINVAL;
        }
    }
    return 0;
}

static const row *find_row(const char *key)
{
    for (size_t i = 0; i < recd_cfg_row_count(); i++)
        if (strcmp(recd_cfg_rows[i].key, key) == 0)
            return &recd_cfg_rows[i];
    return NULL;
}

static int set_key(recd_config *cfg, const char *key, const char *flag, const char *text, char *why,
                   size_t cap)
{
    const row *r = find_row(key);
    char inner[RECD_CFG_WHY_MAX] = "";
    if (!r)
        return -EINVAL;
    int rc = recd_cfg_parse_value(cfg, r, text, inner, sizeof inner);
    if (rc < 0)
        snprintf(why, cap, "%s: %s", flag, inner);
    return rc;
}

static bool loopback(const recd_hostport *hp)
{
    return strncmp(hp->host, "127.", 4) == 0 || strcmp(hp->host, "::1") == 0 ||
           strncmp(hp->host, "::ffff:127.", 11) == 0;
}

/* Applies the command-line overrides to cfg. 0 or -EINVAL with why. */
static int recd_cli_apply(const recd_cli *cli, recd_config *cfg, char *why, size_t cap)
{
    int rc;
    if (cli->listen_count) {
        recd_listen_config *l = calloc(cli->listen_count, sizeof *l);
        if (!l) {
            snprintf(why, cap, "out of memory");
            return -ENOMEM;
        }
        for (size_t i = 0; i < cli->listen_count; i++) {
            char inner[RECD_CFG_WHY_MAX] = "";
            if (recd_cfg_parse_listen_url(cli->listen[i], &l[i], inner, sizeof inner) < 0) {
                snprintf(why, cap, "--listen: %s", inner);
                free(l);
                return -EINVAL;
            }
            for (size_t j = 0; j < i; j++)
                if (strcmp(l[j].url, l[i].url) == 0) {
                    char shown[220]; /* a password, token or nkey seed as *** */
                    recd_nats_redacted(l[i].url, shown, sizeof shown);
                    snprintf(why, cap, "--listen: '%.100s' is given twice", shown);
                    free(l);
                    return -EINVAL;
                }
        }
        free(cfg->listen);
        cfg->listen = l;
        cfg->listen_count = cli->listen_count;
        cfg->written.listen = true; /* the command line names them: never the built-in ones */
    }
    if (cli->output && (rc = set_key(cfg, "output.root", "--output", cli->output, why, cap)) < 0)
        return rc;
    if (cli->flush_interval &&
        (rc = set_key(cfg, "flush.interval", "--flush-interval", cli->flush_interval, why, cap)) < 0)
        return rc;
    if (cli->log_level && (rc = set_key(cfg, "log.level", "--log-level", cli->log_level, why, cap)) < 0)
        return rc;
    if (cli->metrics) {
        if ((rc = set_key(cfg, "metrics.listen", "--metrics", cli->metrics, why, cap)) < 0)
            return rc;
        if (!cfg->metrics.allow_remote && !loopback(&cfg->metrics.listen)) {
            snprintf(why, cap,
                     "--metrics: %.80s is not a loopback address (set metrics.allow_remote: true in "
                     "the configuration file to expose the unauthenticated endpoint)",
                     cli->metrics);
            return -EINVAL;
        }
        cfg->metrics.enabled = true;
    }
    return 0;
}

int recd_cli_load_config(const recd_cli *cli, recd_config *cfg, char *why, size_t cap)
{
    int rc;
    if (cli->config_path) {
        recd_config_error err;
        memset(&err, 0, sizeof err);
        rc = recd_config_load_file(cli->config_path, cfg, &err);
        if (rc < 0) {
            snprintf(why, cap, "%s", err.text[0] ? err.text : recd_strerror(rc));
            return rc;
        }
    } else if ((rc = recd_config_defaults(cfg)) < 0) {
        snprintf(why, cap, "out of memory");
        return rc;
    }
    rc = recd_cli_apply(cli, cfg, why, cap);
    if (rc < 0)
        recd_config_free(cfg);
    return rc;
}
