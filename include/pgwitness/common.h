/*
 * pgwitness/common.h — versions, status codes, error details, allocator hook.
 *
 * Every other pgwitness header includes this one. It declares the few things
 * all modules share:
 *
 *  - the release version (PGW_VERSION_* macros, pgw_version());
 *  - the status codes every function returns (PGW_OK or a negative PGW_E*),
 *    their static texts (pgw_strerror()), and the optional caller-owned
 *    detail record (pgw_error) that functions fill on failure;
 *  - the one allocator hook (pgw_set_allocator()) through which every
 *    allocation of the library passes, and pgw_free() for the few plain
 *    buffers the library hands out.
 *
 * Conventions used by every pgwitness function (README "Conventions"):
 *  - Returns int: PGW_OK (0) on success, a negative PGW_E* code on failure.
 *  - Out-parameters come first and are named `out`; they are untouched when
 *    the call fails.
 *  - The last parameter `pgw_error *err` is optional (NULL allowed). When
 *    given, a failing call fills it with the code, a message naming what was
 *    wrong, and where relevant a JSON path or a SQLSTATE. A successful call
 *    leaves it untouched.
 *  - No hidden global state other than the allocator hook; no internal locks.
 *    One thread at a time per handle; immutable values (snapshots, diffs)
 *    may be read from many threads at once.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_COMMON_H
#define PGWITNESS_COMMON_H

#include <stddef.h>

#include "pgwitness/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @def PGW_API
 * Marks a declaration as part of the exported ABI. The libraries are built
 * with hidden visibility by default and a linker version script each
 * (lib/pgwitness.map, lib/pgwitness-pq.map, naming every export), so only
 * declarations carrying PGW_API and listed in their library's map are
 * visible.
 */
#if defined(_WIN32)
#  define PGW_API
#elif defined(__GNUC__) || defined(__clang__)
#  define PGW_API __attribute__((visibility("default")))
#else
#  define PGW_API
#endif

/** Flag for the JSON encoders that take a `flags` argument
 *  (pgw_snapshot_to_json, pgw_diff_to_json, pgw_drift_to_json): indent with
 *  two spaces instead of the canonical compact form. The invalidation
 *  encoders (pgw_deps_to_json, pgw_write_to_json, pgw_verdict_to_json,
 *  pgw_payload_encode) always write the compact form: their output is one
 *  line, as JSON lines and NOTIFY payloads need. */
#define PGW_JSON_PRETTY 1u

/**
 * Status codes returned by every pgwitness function that can fail.
 *
 * PGW_OK is 0; every error is negative, so `if (rc < 0)` tests for failure.
 * Codes are stable across releases: new codes may be added, existing ones
 * never change value. pgw_strerror() gives a static text for each.
 */
typedef enum pgw_status {
    PGW_OK = 0,          /**< Success. */
    PGW_ENOMEM = -1,     /**< An allocation failed; nothing was changed. */
    PGW_EINVAL = -2,     /**< An argument was invalid (NULL where not allowed,
                              out of range, not UTF-8, ...). */
    PGW_ENOTFOUND = -3,  /**< The requested object (table, snapshot, id)
                              does not exist. */
    PGW_EPARSE = -4,     /**< Input text (JSON, payload) is malformed;
                              pgw_error.path says where. */
    PGW_ELIMIT = -5,     /**< A documented bound was exceeded (size, count). */
    PGW_EPG = -6,        /**< PostgreSQL reported an error;
                              pgw_error.sqlstate holds its SQLSTATE. */
    PGW_ECONN = -7,      /**< The database connection is missing, broken or
                              could not be established. */
    PGW_ESTATE = -8,     /**< The object or connection is in a state that does
                              not allow the call (e.g. a failed transaction). */
    PGW_EVERSION = -9,   /**< Unsupported version: a stored format, wire
                              format, schema or server newer/older than this
                              library understands. */
    PGW_EEXISTS = -10    /**< The object already exists. */
} pgw_status;

/** Lowest (most negative) status code defined by this release. */
#define PGW_STATUS_MIN PGW_EEXISTS

/** Size in bytes of pgw_error.message, including the terminating NUL. */
#define PGW_ERROR_MESSAGE_SIZE 512
/** Size in bytes of pgw_error.path, including the terminating NUL. */
#define PGW_ERROR_PATH_SIZE 256

/**
 * Detail of a failed call, owned by the caller (typically on the stack).
 *
 * Pass a pointer as the last argument of any pgwitness function; on failure
 * the function fills it. On success it is left untouched, so one record can
 * collect the first failure of a sequence of calls. Modelled on jansson's
 * json_error_t: no allocation, no global state.
 *
 * All strings are NUL-terminated UTF-8 and are cut (on a character boundary)
 * to fit their fixed buffers.
 */
typedef struct pgw_error {
    /** The status code of the failure (a PGW_E* value), PGW_OK if unset. */
    int code;
    /** What was wrong, in one line, naming the offending input. For
     *  PGW_EPG, the server's message followed by its DETAIL and HINT when
     *  it sent them: "<operation>: <message> (DETAIL: <detail>) (HINT:
     *  <hint>)", each part's line breaks turned into "; ". */
    char message[PGW_ERROR_MESSAGE_SIZE];
    /** Where in a parsed document the problem is, as a JSON path such as
     *  "$.columns[3].name"; empty when not a parse error. */
    char path[PGW_ERROR_PATH_SIZE];
    /** The five-character SQLSTATE for PGW_EPG (e.g. "42P01"); empty
     *  otherwise. See PostgreSQL documentation, Appendix A "PostgreSQL Error
     *  Codes". */
    char sqlstate[6];
} pgw_error;

/**
 * Resets an error record to "no error" (code PGW_OK, empty strings).
 *
 * @param err  the record to clear; NULL is allowed and ignored.
 */
PGW_API void pgw_error_clear(pgw_error *err);

/**
 * Returns a static, human-readable text for a status code.
 *
 * @param code  a pgw_status value (PGW_OK or a PGW_E* code).
 * @return a non-empty NUL-terminated string with static storage duration
 *         (never freed, never NULL); distinct for every defined code, and
 *         "unknown pgwitness status code" for values outside the enum.
 */
PGW_API const char *pgw_strerror(int code);

/**
 * Returns the release version of the linked library as "MAJOR.MINOR.PATCH".
 *
 * Compare with PGW_VERSION_STRING to detect a header/library mismatch.
 *
 * @return a static string; never NULL.
 */
PGW_API const char *pgw_version(void);

/**
 * Returns the release version of the linked library as one integer,
 * MAJOR*10000 + MINOR*100 + PATCH (the same form as PGW_VERSION_NUMBER).
 */
PGW_API int pgw_version_number(void);

/**
 * A memory allocator the library uses instead of malloc/realloc/free.
 *
 * The functions follow the C standard's contracts: malloc_fn may return NULL
 * on failure (the library then returns PGW_ENOMEM and leaks nothing);
 * realloc_fn(NULL, n) acts as malloc_fn(n); free_fn(NULL) does nothing.
 * The library never requests 0 bytes. `userdata` is passed back unchanged
 * as the last argument of every call.
 */
typedef struct pgw_allocator {
    /** Allocates `size` bytes (size > 0). */
    void *(*malloc_fn)(size_t size, void *userdata);
    /** Resizes `ptr` (from this allocator, or NULL) to `size` bytes. */
    void *(*realloc_fn)(void *ptr, size_t size, void *userdata);
    /** Releases `ptr` (from this allocator, or NULL). */
    void (*free_fn)(void *ptr, void *userdata);
    /** Passed to every call above. */
    void *userdata;
} pgw_allocator;

/**
 * Installs the allocator used by every allocation of the library.
 *
 * Call once, before any other pgwitness call, while no pgwitness object
 * exists: memory allocated under one allocator must be released under the
 * same one. This is the only process-wide mutable state of the library; it
 * is not thread-safe against concurrent pgwitness calls.
 *
 * jansson's allocator is process-wide too (json_set_alloc_funcs()); the
 * library installs this allocator there as well, so JSON documents the
 * library builds are covered. A host that uses jansson itself shares the
 * allocator. Memory that libpq allocates (PGresult, PGconn) is libpq's own
 * and does not pass through this hook.
 *
 * @param allocator  the functions to use, copied by the call; NULL restores
 *                   the C library's malloc, realloc and free.
 * @return PGW_OK, or PGW_EINVAL when `allocator` is non-NULL and any of its
 *         three functions is NULL (nothing is changed then).
 */
PGW_API int pgw_set_allocator(const pgw_allocator *allocator);

/**
 * Allocates memory through the installed allocator (see
 * pgw_set_allocator()), like SQLite's sqlite3_malloc(). The adapter library
 * uses it for its own allocations; hosts rarely need it.
 *
 * @param size  bytes to allocate; 0 returns NULL.
 * @return the block (free with pgw_free()), or NULL when size is 0 or the
 *         allocator failed.
 */
PGW_API void *pgw_malloc(size_t size);

/**
 * Resizes a block from pgw_malloc()/pgw_realloc() through the installed
 * allocator.
 *
 * @param ptr   the block, or NULL (then it acts as pgw_malloc()).
 * @param size  the new size in bytes; 0 returns NULL and leaves ptr valid.
 * @return the resized block (free with pgw_free()); NULL on failure, in which
 *         case ptr is still valid and unchanged.
 */
PGW_API void *pgw_realloc(void *ptr, size_t size);

/**
 * Releases a plain buffer the library handed out (for example a string from
 * an encode function), using the installed allocator.
 *
 * Only for buffers whose documentation says "free with pgw_free" and for
 * blocks from pgw_malloc()/pgw_realloc(); objects have their own
 * pgw_<type>_free function.
 *
 * @param ptr  the buffer, or NULL (ignored).
 */
PGW_API void pgw_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_COMMON_H */
