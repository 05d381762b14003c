/* SPDX-License-Identifier: MIT */
/* Optional libraries loaded with dlopen on first use (internal to librecd; rectool's plot uses it
 * too). A program that never reads an SC2 replay, publishes to nats:// or plots then maps none of
 * them: the dynamic loader's work before main() is most of a small export's cost
 * (docs/performance.md, "Export"). Headers still give the types: a pointer is declared as
 * DL_POINTER(SFileOpenArchive), so a prototype that changes breaks the build, not the call. */
#ifndef RECD_BASE_DL_TABLE_H
#define RECD_BASE_DL_TABLE_H

#include <stddef.h>

/* One symbol to look up, and the function pointer object its address is copied into. */
typedef struct dl_symbol {
    const char *name;
    void *slot;
} dl_symbol;

typedef struct dl_library {
    const char *label;      /* for people: "StormLib" */
    const char *soname;     /* what the build linked against: "libstorm.so.9" (CMake finds it) */
    const char *package;    /* the Debian package holding it, or "" when the build did not know */
    const char *needed_for; /* "reading StarCraft II replays" */
    const dl_symbol *symbols;
    size_t count;
    int state;      /* 0 not tried yet, 1 loaded, or the negative errno of the failure */
    char why[400];  /* the failure's message, kept for later calls */
} dl_library;

/* The members of a table struct, and its entries: with a list macro
 *   #define STORM_FUNCTIONS(X) X(SFileOpenArchive) X(SFileCloseArchive)
 *   static struct { STORM_FUNCTIONS(DL_POINTER) } storm;
 *   #define STORM_SYMBOL(fn) DL_SYMBOL(storm, fn)
 *   static const dl_symbol storm_symbols[] = {STORM_FUNCTIONS(STORM_SYMBOL)};
 * calls are then storm.SFileOpenArchive(...), after recd__dl_load() returned 0. */
#define DL_POINTER(fn) __typeof__(fn) *fn;
#define DL_SYMBOL(table, fn) {#fn, &(table).fn},
#define DL_LIBRARY(label, soname, package, needed_for, symbols)                                    \
    {label, soname, package, needed_for, symbols, sizeof symbols / sizeof symbols[0], 0, ""}

/* Opens lib->soname once (thread-safe) and fills every slot. 0, or -ELIBACC with err saying which
 * library could not be opened or which symbol it lacks, and the package to install; a failure is
 * remembered, so every later call reports it again without retrying. */
int recd__dl_load(dl_library *lib, char *err, size_t errlen);

#endif
