/* SPDX-License-Identifier: MIT */
/* Content sniffing. Order matters: a format's signature is unambiguous, so it goes first; text is
 * checked before content guesses without a signature (a headerless block layout could match any
 * file whose size happens to be a multiple of its block size), and every signature librecd knows
 * has bytes that no text line holds. */
#include "sniff.h"

#include <stdbool.h>
#include <string.h>

#define TEXT_PROBE_BYTES 4096

static size_t skip_bom_and_blanks(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
        i = 3;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    return i;
}

/* The first line (or the first 4 KiB of it) has no control bytes other than tab and CR. */
static bool first_line_is_text(const uint8_t *buf, size_t len, bool *has_comma)
{
    *has_comma = false;
    size_t end = len < TEXT_PROBE_BYTES ? len : TEXT_PROBE_BYTES;
    for (size_t i = 0; i < end; i++) {
        uint8_t c = buf[i];
        if (c == '\n')
            return true;
        if (c == ',')
            *has_comma = true;
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7F)
            return false;
    }
    return end > 0;
}

static recd_text_encoding text_encoding(const uint8_t *buf, size_t len)
{
    size_t start = skip_bom_and_blanks(buf, len);
    bool has_comma = false;
    if (start < len && first_line_is_text(buf + start, len - start, &has_comma)) {
        if (buf[start] == '{')
            return RECD_TEXT_JSONL;
        if (has_comma)
            return RECD_TEXT_CSV;
    }
    return RECD_TEXT_NONE;
}

static void set(rt_sniffed *out, const char *name, const char *description)
{
    out->name = name;
    out->description = description;
}

void rt_sniff(const uint8_t *buf, size_t len, rt_sniffed *out)
{
    memset(out, 0, sizeof *out);
    if (len == 0) {
        out->empty = true;
        set(out, "empty", "empty file");
        return;
    }
    recd_sniff_result r;
    recd_format_sniff(buf, len, &r);
    if (r.level != RECD_SNIFF_SIGNATURE)
        out->text = text_encoding(buf, len);
    if (out->text == RECD_TEXT_JSONL) {
        set(out, "jsonl", "JSON lines text");
    } else if (out->text == RECD_TEXT_CSV) {
        set(out, "csv", "CSV text");
    } else if (!r.format) {
        set(out, "unknown", "not a recognised recording");
    } else {
        out->format = r.format;
        out->standard = r.standard;
        set(out, r.kind, r.description);
    }
}
