/*
 * lib/pq/snapshot/capture.c — catalog-only capture (lib/pq/sql/capture.sql) and
 * the conversion of its rows into core snapshots.
 * SPDX-License-Identifier: MIT
 */
#include "pq_snapshot.h"
#include "pg_array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column numbers of capture.sql's result. */
enum {
    COL_OID,
    COL_SCHEMA,
    COL_TABLE,
    COL_RELTUPLES,
    COL_CAPTURED_AT,
    COL_ATTNUM,
    COL_NAME,
    COL_TYPE,
    COL_HAS_STATS,
    COL_NULL_FRAC,
    COL_N_DISTINCT,
    COL_AVG_WIDTH,
    COL_CORRELATION,
    COL_MCV,
    COL_FREQS,
    COL_HIST,
    COL_SETTINGS,
    N_COLS
};

/* The settings that change how values print, and the values a capture
 * wants (PostgreSQL documentation 20.11.2 "Locale and Formatting":
 * DateStyle, IntervalStyle, extra_float_digits; 20.11.1: bytea_output).
 * extra_float_digits 1 is the shortest exact form since PostgreSQL 12;
 * older servers need 3 for exact floats. */
static const char *const setting_names[4] = {"DateStyle", "IntervalStyle", "extra_float_digits",
                                             "bytea_output"};

static void wanted_settings(PGconn *conn, const char *out[4])
{
    out[0] = "ISO, MDY";
    out[1] = "postgres";
    out[2] = PQserverVersion(conn) >= 120000 ? "1" : "3";
    out[3] = "hex";
}

/* Splits "a|b|c|d" into four pieces in buf. */
static bool split_settings(const char *s, char buf[4][64])
{
    for (int i = 0; i < 4; i++) {
        const char *bar = i < 3 ? strchr(s, '|') : s + strlen(s);
        if (!bar || (size_t)(bar - s) >= 64)
            return false;
        memcpy(buf[i], s, (size_t)(bar - s));
        buf[i][bar - s] = '\0';
        s = bar + 1;
    }
    return true;
}

static int set_settings(PGconn *conn, const char *const values[4], pgw_error *err)
{
    const char *params[8];
    for (int i = 0; i < 4; i++) {
        params[2 * i] = setting_names[i];
        params[2 * i + 1] = values[i];
    }
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT set_config($1, $2, false), set_config($3, $4, false), "
                           "set_config($5, $6, false), set_config($7, $8, false)",
                           8, params, "fixing the print settings for the capture", err)) < 0)
        return rc;
    PQclear(r);
    return PGW_OK;
}

int pgwi_pq_print_settings_fix(PGconn *conn, char saved[4][64], bool *changed, pgw_error *err)
{
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT concat_ws('|', current_setting('DateStyle'), "
                           "current_setting('IntervalStyle'), "
                           "current_setting('extra_float_digits'), "
                           "current_setting('bytea_output'))",
                           0, NULL, "reading the print settings", err)) < 0)
        return rc;
    const char *want[4];
    wanted_settings(conn, want);
    bool ok = split_settings(PQgetvalue(r, 0, 0), saved);
    PQclear(r);
    if (!ok)
        return pgwi_error(err, PGW_EPG, "reading the print settings: unreadable value");
    *changed = false;
    for (int i = 0; i < 4; i++)
        *changed = *changed || strcmp(saved[i], want[i]) != 0;
    return *changed ? set_settings(conn, want, err) : PGW_OK;
}

void pgwi_pq_print_settings_restore(PGconn *conn, char saved[4][64])
{
    pgw_error ignored;
    const char *old[4] = {saved[0], saved[1], saved[2], saved[3]};
    set_settings(conn, old, &ignored);
}

/* Runs capture.sql into *out (PQclear it); if the session's print settings
 * differ from the fixed ones, sets them, runs again, and restores them.
 * *out is untouched on failure. */
static int run_capture(PGresult **out, PGconn *conn, const char *oids, const char *schema,
                       const char *table, pgw_error *err)
{
    const char *params[3] = {oids, schema, table};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_capture, 3, params, "capturing from the catalog",
                           err)) < 0)
        return rc;
    if (PQntuples(r) == 0 || PQnfields(r) != N_COLS) {
        *out = r;
        return PGW_OK;
    }
    const char *want[4];
    wanted_settings(conn, want);
    char have[4][64];
    if (!split_settings(PQgetvalue(r, 0, COL_SETTINGS), have)) {
        PQclear(r);
        return pgwi_error(err, PGW_EPG, "capturing from the catalog: unreadable print settings");
    }
    bool same = true;
    for (int i = 0; i < 4; i++)
        same = same && strcmp(have[i], want[i]) == 0;
    if (same) {
        *out = r;
        return PGW_OK;
    }
    PQclear(r);
    if ((rc = set_settings(conn, want, err)) < 0)
        return rc;
    rc = pgwi_pq_exec(&r, conn, pgwi_sql_capture, 3, params, "capturing from the catalog", err);
    /* Restore even when the capture failed: outside a transaction the
     * session keeps set_config's values; inside an aborted one the restore
     * fails harmlessly and the rollback undoes the change anyway. */
    pgw_error ignored;
    const char *old[4] = {have[0], have[1], have[2], have[3]};
    set_settings(conn, old, rc < 0 ? &ignored : err);
    if (rc < 0)
        return rc;
    *out = r;
    return PGW_OK;
}

static double parse_double(const char *s)
{
    return strtod(s, NULL);
}

/* Parses one value list; NULL (no list) is an empty list. */
static int list_of(pgwi_pg_array *out, const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col)) {
        out->n = 0;
        out->items = NULL;
        out->buf = NULL;
        return PGW_OK;
    }
    return pgwi_pg_array_parse(out, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* Reads the three value lists of a pg_stats row, and the frequencies as
 * numbers into *f (pgwi_free). PGW_EPARSE when a list does not read or
 * the two most-common lists differ in length; PGW_ENOMEM. The caller frees
 * the lists and *f on every path. */
static int read_lists(pgwi_pg_array *mcv, pgwi_pg_array *freqs, pgwi_pg_array *hist, double **f,
                      const PGresult *r, int row)
{
    int rc;
    if ((rc = list_of(mcv, r, row, COL_MCV)) < 0)
        return rc;
    if ((rc = list_of(freqs, r, row, COL_FREQS)) < 0)
        return rc;
    if ((rc = list_of(hist, r, row, COL_HIST)) < 0)
        return rc;
    if (freqs->n != mcv->n)
        return PGW_EPARSE;
    if (freqs->n && !(*f = pgwi_calloc(freqs->n, sizeof **f)))
        return PGW_ENOMEM;
    for (size_t k = 0; k < freqs->n; k++)
        (*f)[k] = parse_double(freqs->items[k]);
    return PGW_OK;
}

/* Adds one column from its capture row: names, type, and the pg_stats row
 * as pgw_column_stats. A statistics row whose lists cannot be read (an
 * element type printing something other than a one-dimensional array)
 * leaves the column without a profile rather than failing the capture. */
static int add_column(pgw_snapshot_builder *b, const PGresult *r, int row, bool has_stats,
                      pgw_error *err)
{
    const char *name = PQgetvalue(r, row, COL_NAME), *type = PQgetvalue(r, row, COL_TYPE);
    if (!has_stats)
        return pgw_snapshot_builder_add_column(b, name, type, NULL, err);
    pgwi_pg_array mcv = {0, NULL, NULL}, freqs = {0, NULL, NULL}, hist = {0, NULL, NULL};
    double *f = NULL;
    int rc = read_lists(&mcv, &freqs, &hist, &f, r, row);
    if (rc == PGW_EPARSE) {
        rc = pgw_snapshot_builder_add_column(b, name, type, NULL, err);
    } else if (rc < 0) {
        rc = pgwi_enomem(err);
    } else {
        pgw_column_stats st = PGW_COLUMN_STATS_INIT;
        st.null_frac = parse_double(PQgetvalue(r, row, COL_NULL_FRAC));
        st.n_distinct = parse_double(PQgetvalue(r, row, COL_N_DISTINCT));
        st.avg_width = (int32_t)strtol(PQgetvalue(r, row, COL_AVG_WIDTH), NULL, 10);
        st.has_correlation = !PQgetisnull(r, row, COL_CORRELATION);
        st.correlation = st.has_correlation ? parse_double(PQgetvalue(r, row, COL_CORRELATION))
                                            : 0.0;
        st.most_common_vals = (const char *const *)mcv.items;
        st.most_common_freqs = f;
        st.n_most_common = mcv.n;
        st.histogram_bounds = (const char *const *)hist.items;
        st.n_histogram_bounds = hist.n;
        rc = pgw_snapshot_builder_add_column(b, name, type, &st, err);
    }
    pgwi_free(f);
    pgwi_pg_array_free(&mcv);
    pgwi_pg_array_free(&freqs);
    pgwi_pg_array_free(&hist);
    return rc;
}

/* Builds the snapshot of the table whose rows start at *row, advancing
 * *row past them. */
static int build_one(pgw_snapshot **out, const PGresult *r, int *row,
                     const pgw_pq_capture_options *o, pgw_error *err)
{
    int first = *row, n = PQntuples(r);
    const char *oid = PQgetvalue(r, first, COL_OID);
    int last = first;
    while (last < n && strcmp(PQgetvalue(r, last, COL_OID), oid) == 0)
        last++;
    *row = last;

    pgw_snapshot_builder *b = NULL;
    bool any_stats = false;
    int rc;
    if ((rc = pgw_snapshot_builder_new(&b, o->snapshot, err)) < 0)
        return rc;
    if ((rc = pgw_snapshot_builder_set_table(b, PQgetvalue(r, first, COL_SCHEMA),
                                             PQgetvalue(r, first, COL_TABLE),
                                             (uint32_t)strtoul(oid, NULL, 10), err)) < 0)
        goto done;
    if (o->resource && (rc = pgw_snapshot_builder_set_resource(b, o->resource, err)) < 0)
        goto done;
    if (o->reason && (rc = pgw_snapshot_builder_set_reason(b, o->reason, err)) < 0)
        goto done;
    if (o->extra && (rc = pgw_snapshot_builder_set_extra(b, o->extra, err)) < 0)
        goto done;
    if ((rc = pgw_snapshot_builder_set_captured_at(
             b, strtoll(PQgetvalue(r, first, COL_CAPTURED_AT), NULL, 10), err)) < 0)
        goto done;
    if ((rc = pgw_snapshot_builder_set_reltuples(
             b, parse_double(PQgetvalue(r, first, COL_RELTUPLES)), err)) < 0)
        goto done;
    for (int i = first; i < last; i++) {
        if (PQgetisnull(r, i, COL_ATTNUM))
            continue; /* a table without columns */
        bool has = strcmp(PQgetvalue(r, i, COL_HAS_STATS), "t") == 0;
        any_stats = any_stats || has;
        if ((rc = add_column(b, r, i, has, err)) < 0)
            goto done;
    }
    /* In profile mode none the columns carry no profile, but the
     * statistics were there. */
    pgw_snapshot_builder_set_stats_available(b, any_stats);
    rc = pgw_snapshot_builder_finish(out, b, err);
done:
    pgw_snapshot_builder_free(b);
    return rc;
}

static int check_capture_options(const pgw_pq_capture_options *o, pgw_error *err)
{
    if (o->version != PGW_PQ_CAPTURE_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "capture options version %u is not %u (use "
                          "PGW_PQ_CAPTURE_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_CAPTURE_OPTIONS_VERSION);
    return PGW_OK;
}

int pgw_pq_capture(pgw_snapshot **out, PGconn *conn, const char *schema, const char *table,
                   const pgw_pq_capture_options *opts, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_capture", out, conn, schema, table) < 0)
        return PGW_EINVAL;
    if (!schema[0] || !table[0])
        return pgwi_error(err, PGW_EINVAL, "pq_capture: empty schema or table name");
    pgw_pq_capture_options defaults = PGW_PQ_CAPTURE_OPTIONS_INIT;
    const pgw_pq_capture_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = check_capture_options(o, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    PGresult *r;
    if ((rc = run_capture(&r, conn, NULL, schema, table, err)) < 0)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
    }
    int row = 0;
    pgw_snapshot *s = NULL;
    rc = build_one(&s, r, &row, o, err);
    PQclear(r);
    if (rc < 0)
        return rc;
    *out = s;
    return PGW_OK;
}

int pgwi_pq_capture_send(PGconn *conn, const char *oid_array, pgw_error *err)
{
    const char *params[3] = {oid_array, NULL, NULL};
    if (!PQsendQueryParams(conn, pgwi_sql_capture, 3, NULL, params, NULL, NULL, 0))
        return pgwi_pq_conn_error(err, conn, "sending the catalog capture");
    return PGW_OK;
}

int pgwi_pq_capture_rows(const PGresult *r, const pgw_pq_capture_options *opts,
                         pgwi_pq_capture_each each, void *userdata, void (*pump)(void *),
                         void *pump_arg, pgw_error *err)
{
    if (PQnfields(r) != N_COLS)
        return pgwi_error(err, PGW_EPG, "capturing from the catalog: unexpected result shape");
    for (int row = 0; row < PQntuples(r);) {
        uint32_t oid = (uint32_t)strtoul(PQgetvalue(r, row, COL_OID), NULL, 10);
        pgw_snapshot *s = NULL;
        int rc;
        bool failed = (rc = build_one(&s, r, &row, opts, err)) < 0 ||
                      (rc = each(oid, s, userdata, err)) < 0;
        if (pump)
            pump(pump_arg);
        if (failed)
            return rc;
    }
    return PGW_OK;
}
