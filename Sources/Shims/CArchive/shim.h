#ifndef INKY_CARCHIVE_SHIM_H
#define INKY_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>

/* libarchive's status codes are macros, which Swift does not import. */
static inline int inky_archive_ok(void) { return ARCHIVE_OK; }
static inline int inky_archive_eof(void) { return ARCHIVE_EOF; }
static inline int inky_archive_retry(void) { return ARCHIVE_RETRY; }
static inline int inky_archive_warn(void) { return ARCHIVE_WARN; }
static inline int inky_archive_failed(void) { return ARCHIVE_FAILED; }
static inline int inky_archive_fatal(void) { return ARCHIVE_FATAL; }
#endif
