/*
 * tests/unit/check_value_shape.c — value evidence that survives a change of
 * row set, period, region or labels (lib/core/snapshot/value_shape.h):
 * range, shape, pattern, length, digits and the frequency profile of
 * realistic column profiles, with their exact values; hashed profiles;
 * columns without sampled values; symmetry.
 *
 * Expected values are derived by hand where the comment shows the working;
 * the others were computed by a separate reference implementation of the
 * formulas in value_shape.h (in Python, from the same profiles), and are
 * asserted to 1e-9 (parts) and exactly (scores, 4 decimals).
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwt_snap.h"
#include "similarity.h"
#include "value_shape.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define T0 1764493844123456LL

/* ------------------------------------------------------------------ */
/* the columns                                                         */

/* Pickup longitudes over Manhattan and over Chicago (numeric(9,4)):
 * histograms only, ten buckets each. */
static const char *const lon_nyc_h[] = {"-74.0200", "-74.0100", "-74.0050", "-74.0000",
                                        "-73.9950", "-73.9900", "-73.9850", "-73.9800",
                                        "-73.9700", "-73.9600", "-73.9400", NULL};
static const char *const lon_chi_h[] = {"-87.8000", "-87.7500", "-87.7000", "-87.6800",
                                        "-87.6600", "-87.6400", "-87.6300", "-87.6200",
                                        "-87.6000", "-87.5800", "-87.5200", NULL};
/* Trips per station and day, 0..50: four MCVs, then a histogram. */
static const char *const counts_m[] = {"0", "1", "2", "3", NULL};
static const double counts_f[] = {0.20, 0.15, 0.10, 0.08};
static const char *const counts_h[] = {"4",  "5",  "6",  "8",  "10", "13",
                                       "17", "22", "30", "40", "50", NULL};
/* Model years 1990..2020. */
static const char *const years_h[] = {"1990", "1993", "1996", "1999", "2002", "2005",
                                      "2008", "2011", "2014", "2017", "2020", NULL};
/* Pickup times (timestamp without time zone) of January and of March. */
static const char *const jan_h[] = {"2019-01-01 00:04:05", "2019-01-04 06:12:44",
                                    "2019-01-07 11:30:00", "2019-01-10 17:45:12",
                                    "2019-01-13 23:02:51", "2019-01-16 08:19:33",
                                    "2019-01-19 14:41:07", "2019-01-22 20:55:40",
                                    "2019-01-25 03:27:18", "2019-01-28 09:13:09",
                                    "2019-01-31 23:59:58", NULL};
static const char *const mar_h[] = {"2019-03-01 00:00:31", "2019-03-03 19:40:02",
                                    "2019-03-06 13:05:55", "2019-03-09 07:21:48",
                                    "2019-03-12 01:58:10", "2019-03-15 16:33:29",
                                    "2019-03-18 10:07:14", "2019-03-21 04:50:36",
                                    "2019-03-24 22:16:03", "2019-03-27 17:38:47",
                                    "2019-03-31 23:58:20", NULL};
/* Recoded categories. */
static const char *const mf_m[] = {"M", "F", NULL};
static const char *const male_m[] = {"male", "female", NULL};
static const double mf_f[] = {0.52, 0.45};
static const char *const yn_m[] = {"Y", "N", NULL};
static const char *const one_zero_m[] = {"1", "0", NULL};
static const double yn_f[] = {0.7, 0.3};
/* Bike-share station IDs where trips start and where they end: one value
 * set, slightly different frequencies. */
static const char *const start_m[] = {"519", "497", "435", "402", "3255", NULL};
static const double start_f[] = {0.012, 0.010, 0.009, 0.008, 0.008};
static const char *const start_h[] = {"72",  "168", "259", "327",  "379",  "423",
                                      "465", "504", "3002", "3167", "3443", NULL};
static const char *const end_m[] = {"497", "519", "402", "435", "3255", NULL};
static const double end_f[] = {0.013, 0.011, 0.009, 0.008, 0.007};
static const char *const end_h[] = {"72",  "164", "253", "327",  "382",  "426",
                                    "470", "509", "3002", "3170", "3443", NULL};

enum {
    LON_NYC,
    LON_CHI,
    COUNTS,
    YEARS,
    TS_JAN,
    TS_MAR,
    MF,
    MALE,
    YN,
    ONE_ZERO,
    START,
    END,
    EMPTY,   /* analysed, but every row null: no sampled value */
    UNSEEN,  /* never analysed: no profile */
    NCOLS
};

static const pgwt_col cols[NCOLS] = {
    [LON_NYC] = {"pickup_longitude", "numeric(9,4)", true, 0, -0.8, NULL, NULL, lon_nyc_h},
    [LON_CHI] = {"start_lng", "numeric(9,4)", true, 0.01, -0.7, NULL, NULL, lon_chi_h},
    [COUNTS] = {"trips", "integer", true, 0, 45, counts_m, counts_f, counts_h},
    [YEARS] = {"model_year", "integer", true, 0, 31, NULL, NULL, years_h},
    [TS_JAN] = {"tpep_pickup_datetime", "timestamp without time zone", true, 0, -1, NULL, NULL,
                jan_h},
    [TS_MAR] = {"pickup_at", "timestamp without time zone", true, 0, -1, NULL, NULL, mar_h},
    [MF] = {"Sex", "text", true, 0.03, 2, mf_m, mf_f, NULL},
    [MALE] = {"sex", "text", true, 0.03, 2, male_m, mf_f, NULL},
    [YN] = {"smoker", "text", true, 0, 2, yn_m, yn_f, NULL},
    [ONE_ZERO] = {"is_smoker", "integer", true, 0, 2, one_zero_m, yn_f, NULL},
    [START] = {"start_station_id", "integer", true, 0, 600, start_m, start_f, start_h},
    [END] = {"end_station_id", "integer", true, 0, 600, end_m, end_f, end_h},
    [EMPTY] = {"notes", "text", true, 1.0, 0, NULL, NULL, NULL},
    [UNSEEN] = {"fresh", "text", false, 0, 0, NULL, NULL, NULL},
};

static pgw_snapshot *snap(pgw_profile_mode mode)
{
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = mode;
    return pgwt_snapshot_opts("trips", NULL, T0, 100000, cols, NCOLS, &o);
}

/* The evidence of a pair, checked symmetric bit for bit and in range. */
static pgwi_value_evidence ev(const pgw_snapshot *a, size_t i, const pgw_snapshot *b, size_t j)
{
    pgwi_value_evidence x, y;
    pgwi_value_evidence_of(&x, a, i, b, j);
    pgwi_value_evidence_of(&y, b, j, a, i);
    ck_assert_msg(memcmp(&x, &y, sizeof x) == 0, "columns %zu and %zu: not symmetric", i, j);
    const double parts[] = {x.range, x.shape, x.pattern, x.length, x.digits, x.freq_profile};
    for (size_t k = 0; k < N(parts); k++)
        ck_assert_msg(parts[k] == -1.0 || (parts[k] >= 0.0 && parts[k] <= 1.0),
                      "columns %zu and %zu: part %zu is %.17g", i, j, k, parts[k]);
    ck_assert(x.score >= 0.0 && x.score <= 1.0);
    return x;
}

#define NEAR(got, want)                                                                    \
    ck_assert_msg(fabs((got) - (want)) < 1e-9, "%s = %.17g, expected %.17g", #got, (got), \
                  (double)(want))

/* ------------------------------------------------------------------ */
/* numeric and temporal: range and shape                               */

START_TEST(longitudes_of_two_regions)
{
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    pgwi_value_evidence e = ev(s, LON_NYC, s, LON_CHI);
    /* [-74.02, -73.94] and [-87.80, -87.52] do not meet. */
    ck_assert(e.range == 0.0);
    /* Normalised, Manhattan's bounds are at 0, 1/8, 3/16, 1/4, 5/16, 3/8,
     * 7/16, 1/2, 5/8, 3/4, 1; Chicago's at 0, 5/28, 5/14, 3/7, 1/2, 4/7,
     * 17/28, 9/14, 5/7, 11/14, 1. Each bucket holds a tenth: at u = 1/2
     * Manhattan has 7 tenths below, Chicago 4, the widest gap: KS 0.3. */
    NEAR(e.shape, 0.7);
    /* Every value is -dd.dddd: 8 characters, 6 of them digits. */
    ck_assert(e.pattern == 1.0 && e.length == 1.0 && e.digits == 1.0);
    ck_assert(e.freq_profile == -1.0); /* no MCVs */
    /* (0.25 + 0.10 + 0.10 + 0.20 * 0.7 + 0.15 * 0) / 0.80 */
    ck_assert(e.score == 0.7375);
    /* The exact-value evidence sees nothing alike: no shared value, and
     * disjoint ranges for the KS distance. */
    pgw_similarity sim;
    pgwi_similarity(&sim, s, LON_NYC, s, LON_CHI);
    ck_assert(sim.values == 0.0 && sim.distribution == 0.0);
    /* A column against itself. */
    e = ev(s, LON_NYC, s, LON_NYC);
    ck_assert(e.range == 1.0 && e.shape == 1.0 && e.score == 1.0);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(longitudes_against_counts_and_years_against_counts)
{
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    /* Unrelated columns of one family score low on range and shape. */
    pgwi_value_evidence e = ev(s, LON_NYC, s, COUNTS);
    ck_assert(e.range == 0.0);
    NEAR(e.shape, 0.470125);
    /* -dd.dddd against d and dd, at both grains. */
    ck_assert(e.pattern == 0.0);
    NEAR(e.length, 0.16238636363636364);
    NEAR(e.digits, 0.75); /* 6 of 8 characters against all */
    ck_assert(e.freq_profile == -1.0);
    ck_assert(e.score == 0.2316);
    e = ev(s, LON_CHI, s, COUNTS);
    ck_assert(e.range == 0.0);
    NEAR(e.shape, 0.3784);
    ck_assert(e.score == 0.2086);

    /* A year (dddd) against a count (d, dd): the same coarse pattern d, so
     * pattern 0.5; lengths 4 against 1.8 on average; ranges apart. */
    e = ev(s, YEARS, s, COUNTS);
    ck_assert(e.range == 0.0);
    NEAR(e.shape, 0.482);
    NEAR(e.pattern, 0.5);
    NEAR(e.length, 0.32477272727272727);
    NEAR(e.digits, 1.0);
    ck_assert(e.score == 0.4423);
    /* Years fall inside the station IDs' range 72..3443, a small part of
     * it: 30 / sqrt(30 * 3371). */
    e = ev(s, YEARS, s, START);
    NEAR(e.range, 30.0 / sqrt(30.0 * 3371.0));
    /* Both stay well below the longitudes of two regions. */
    ck_assert(ev(s, YEARS, s, COUNTS).score < 0.45 && ev(s, LON_NYC, s, COUNTS).score < 0.25);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(timestamps_of_two_months)
{
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    pgwi_value_evidence e = ev(s, TS_JAN, s, TS_MAR);
    /* No shared value and no shared range, but the same pattern
     * dddd-dd-dd dd:dd:dd and nearly the same spread over the month. */
    ck_assert(e.range == 0.0);
    NEAR(e.shape, 0.94174187751702876);
    ck_assert(e.pattern == 1.0 && e.length == 1.0 && e.digits == 1.0);
    ck_assert(e.freq_profile == -1.0);
    ck_assert(e.score == 0.7979);
    /* pgw_similarity is unchanged: timestamps have no distribution part
     * there, and share no value. */
    pgw_similarity sim;
    pgwi_similarity(&sim, s, TS_JAN, s, TS_MAR);
    ck_assert(sim.distribution == -1.0 && sim.values == 0.0);
    /* A timestamp against a year: not the same kind, no range or shape;
     * 19 characters (14 digits) against 4 (all digits). */
    e = ev(s, TS_JAN, s, YEARS);
    ck_assert(e.range == -1.0 && e.shape == -1.0);
    ck_assert(e.pattern == 0.0);
    NEAR(e.length, 4.0 / 19.0);
    NEAR(e.digits, 14.0 / 19.0);
    ck_assert(e.score == 0.2105);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(temporal_values)
{
    double x;
    ck_assert(pgwi_temporal_seconds("2019-01-01", &x) && x == 1546300800.0);
    ck_assert(pgwi_temporal_seconds("2019-01-01 00:04:05", &x) && x == 1546300800.0 + 245);
    ck_assert(pgwi_temporal_seconds("2019-01-01 00:04:05+00", &x) && x == 1546300800.0 + 245);
    ck_assert(pgwi_temporal_seconds("2019-01-01 02:04:05.5+02", &x) && x == 1546300800.0 + 245.5);
    ck_assert(pgwi_temporal_seconds("2019-01-01T00:04:05Z", &x) && x == 1546300800.0 + 245);
    const char *no[] = {"",          "2019",       "2019-13-01", "2019-01-01 25:00:00",
                        "00:04:05",  "01/02/2019", "0044-03-15 BC", "infinity",
                        "2019-01-01 00:04:05 junk"};
    for (size_t i = 0; i < N(no); i++)
        ck_assert_msg(!pgwi_temporal_seconds(no[i], &x), "\"%s\" read as temporal", no[i]);

    /* A date column against a timestamp column: both temporal. */
    static const char *const d1[] = {"2019-01-01", "2019-01-31", NULL};
    static const char *const d2[] = {"2019-01-16 00:00:00", "2019-02-15 00:00:00", NULL};
    /* "2019-1-1" is not ISO: the column is text, not temporal. */
    static const char *const d3[] = {"2019-1-1", "2019-01-31", NULL};
    pgwt_col c[] = {{"d", "date", true, 0, -1, NULL, NULL, d1},
                    {"t", "timestamp", true, 0, -1, NULL, NULL, d2},
                    {"x", "text", true, 0, -1, NULL, NULL, d3}};
    pgw_snapshot *s = pgwt_snapshot("t", T0, 100, c, 3);
    /* Both 30 days wide, meeting for 15: 15 / 30. Uniform: shape 1. */
    pgwi_value_evidence e = ev(s, 0, s, 1);
    NEAR(e.range, 0.5);
    NEAR(e.shape, 1.0);
    e = ev(s, 0, s, 2);
    ck_assert(e.range == -1.0 && e.shape == -1.0);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(constant_columns)
{
    static const char *const five[] = {"5", NULL}, *const seven[] = {"7", NULL};
    static const double all[] = {1.0};
    static const char *const h[] = {"0", "10", NULL};
    pgwt_col c[] = {{"a", "integer", true, 0, 1, five, all, NULL},
                    {"b", "integer", true, 0, 1, seven, all, NULL},
                    {"c", "integer", true, 0, 1, five, all, NULL},
                    {"d", "integer", true, 0, -1, NULL, NULL, h}};
    pgw_snapshot *s = pgwt_snapshot("t", T0, 100, c, 4);
    pgwi_value_evidence e = ev(s, 0, s, 1);
    ck_assert(e.range == 0.0 && e.shape == 1.0); /* two points apart */
    ck_assert(e.freq_profile == 1.0);              /* one value, all rows */
    e = ev(s, 0, s, 2);
    ck_assert(e.range == 1.0 && e.shape == 1.0 && e.score == 1.0);
    e = ev(s, 0, s, 3); /* a point inside [0, 10]: a constant is no spread */
    ck_assert(e.range == 0.0 && e.shape == 0.0);
    pgw_snapshot_free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* text: pattern, length, digits; frequency profiles                   */

START_TEST(recoded_categories)
{
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    /* M/F → male/female with the same frequencies. */
    pgwi_value_evidence e = ev(s, MF, s, MALE);
    ck_assert(e.freq_profile == 1.0);
    /* fine A against a: 0; coarse a against a: 1. */
    ck_assert(e.pattern == 0.5);
    /* Shares of the non-null rows 52/97 and 45/97. Lengths: S = 1 on
     * [0, 1) for M/F; for male/female 1 on [0, 4), 45/97 on [4, 6):
     * 1 / (4 + 2 * 45/97). */
    NEAR(e.length, 1.0 / (4.0 + 2.0 * 45.0 / 97.0));
    ck_assert(e.digits == 1.0);
    ck_assert(e.range == -1.0 && e.shape == -1.0);
    /* (0.25 * 0.5 + 0.10 * length + 0.10 + 0.20) / 0.65 */
    ck_assert(e.score == 0.6851);

    /* Y/N → 1/0: a text column and an integer one. */
    e = ev(s, YN, s, ONE_ZERO);
    ck_assert(e.freq_profile == 1.0);
    ck_assert(e.pattern == 0.0);  /* A against d at both grains */
    ck_assert(e.length == 1.0);   /* one character each */
    ck_assert(e.digits == 0.0);   /* none against all */
    ck_assert(e.range == -1.0 && e.shape == -1.0);
    ck_assert(e.score == 0.4615); /* (0.10 + 0.20) / 0.65 */

    /* Two unrelated two-letter codes look alike to this evidence: the same
     * pattern A, one character, and frequency profiles 0.536/0.464
     * against 0.7/0.3: 1 - (0.164 + 0.164) / 2. Telling them apart is the
     * name's job. */
    e = ev(s, MF, s, YN);
    ck_assert(e.pattern == 1.0 && e.length == 1.0 && e.digits == 1.0);
    NEAR(e.freq_profile, 1.0 - (0.7 - 52.0 / 97.0));
    ck_assert(e.score == 0.9496);
    pgw_snapshot_free(s);
}
END_TEST

/* The relabelling reading, both ways round (it is symmetric bit for bit),
 * with its excess. */
static double relab(const pgw_snapshot *a, size_t i, const pgw_snapshot *b, size_t j,
                    double *excess)
{
    double ex, ey;
    double x = pgwi_value_relabelling(a, i, b, j, &ex);
    double y = pgwi_value_relabelling(b, j, a, i, &ey);
    ck_assert_msg(x == y && ex == ey, "relabelling not symmetric: %.17g %.17g", x, y);
    ck_assert(pgwi_value_relabelling(a, i, b, j, NULL) == x);
    *excess = ex;
    return x;
}

/* One categorical column "c" of `rows` rows with these MCVs. */
static pgw_snapshot *cat(double rows, double null_frac, double n_distinct,
                         const char *const *mcv, const double *freqs)
{
    pgwt_col c[] = {{"c", "text", true, null_frac, n_distinct, mcv, freqs, NULL}};
    return pgwt_snapshot("t", T0, rows, c, 1);
}

/* The sampling variance of a share p read from n rows, as value_shape.h
 * writes it: p (1 - p) / m (1 - m / n), m = min(n, 30000). */
static double share_var(double p, double n)
{
    double m = n < 30000 ? n : 30000;
    return p * (1 - p) / m * (1 - m / n);
}

START_TEST(relabelling_reading)
{
    static const char *const ab[] = {"a", "b", NULL}, *const xy[] = {"x", "y", NULL};
    static const char *const abc[] = {"a", "b", "c", NULL}, *const pqr[] = {"p", "q", "r", NULL};
    static const double f5545[] = {0.55, 0.45}, f4555[] = {0.45, 0.55}, f5248[] = {0.52, 0.48};
    static const double f53[] = {0.5, 0.3}, f532[] = {0.5, 0.3, 0.2};
    static const double f_half[] = {0.275, 0.225}; /* 0.55, 0.45 of half the rows */
    double ex;

    /* The same shares under new labels, over the same rows: the reading is
     * the frequency profile, 1, with no excess. The order of the MCVs does
     * not matter (shares are sorted), nor does null_frac (shares of the
     * non-null rows): M/F 0.52/0.45 of 97% against male/female. */
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    ck_assert(relab(s, MF, s, MALE, &ex) == 1.0 && ex == 0.0);
    pgw_snapshot *a = cat(1000, 0, 2, ab, f5545), *b = cat(1000, 0.5, 2, xy, f_half);
    ck_assert(relab(a, 0, b, 0, &ex) == 1.0 && ex == 0.0);
    pgw_snapshot_free(b);
    b = cat(1000, 0, 2, xy, f4555);
    ck_assert(relab(a, 0, b, 0, &ex) == 1.0 && ex == 0.0);
    pgw_snapshot_free(b);

    /* Different shares over the same 1000 rows: ANALYZE read every row, so
     * sampling allows nothing and only the 0.005 floor is tolerated:
     * excess 2 * (0.03 - 0.005) = 0.05; the profile 1 - 0.06 / 2 = 0.97,
     * damped by 1 - 0.05 / 0.10: 0.485. */
    b = cat(1000, 0, 2, xy, f5248);
    NEAR(relab(a, 0, b, 0, &ex), 0.97 * 0.5);
    NEAR(ex, 0.05);
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);

    /* The same shares from 1,000,000 rows: ANALYZE samples 30,000, and 3
     * standard errors of each share are allowed besides the floor. */
    a = cat(1e6, 0, 2, ab, f5545);
    b = cat(1e6, 0, 2, xy, f5248);
    double tol0 = 0.005 + 3 * sqrt(2 * share_var(0.535, 1e6));
    double tol1 = 0.005 + 3 * sqrt(2 * share_var(0.465, 1e6));
    double want = (0.03 - tol0) + (0.03 - tol1);
    NEAR(relab(a, 0, b, 0, &ex), 0.97 * (1 - want / 0.10));
    NEAR(ex, want);
    ck_assert(ex > 0.025 && ex < 0.026); /* 0.0259: damped to 0.7184 */
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);

    /* Shares far apart (M/F 0.536/0.464 against Y/N 0.7/0.3 of 100,000
     * rows): the excess passes 0.10 and the reading is 0, though the
     * frequency profile alone says 0.836. */
    ck_assert(relab(s, MF, s, YN, &ex) == 0.0);
    ck_assert(ex > 0.10);
    NEAR(pgwi_value_freq_profile(s, MF, s, YN), 1.0 - (0.7 - 52.0 / 97.0));

    /* A change of row count: the shares may move by the relative change,
     * (1200 - 1000) / 1200 = 1/6, so 0.55/0.45 against 0.52/0.48 is
     * undamped (0.97); from 1000 to 1010 rows only 0.005 + 10/1010 is
     * allowed: excess 2 * (0.03 - 0.005 - 10/1010). */
    a = cat(1000, 0, 2, ab, f5545);
    b = cat(1200, 0, 2, xy, f5248);
    NEAR(relab(a, 0, b, 0, &ex), 0.97);
    ck_assert(ex == 0.0);
    pgw_snapshot_free(b);
    b = cat(1010, 0, 2, xy, f5248);
    want = 2 * (0.03 - 0.005 - 10.0 / 1010.0);
    NEAR(relab(a, 0, b, 0, &ex), 0.97 * (1 - want / 0.10));
    NEAR(ex, want);
    pgw_snapshot_free(b);
    pgw_snapshot_free(a);

    /* Values outside the MCV list (0.2 of the rows over 8 more values): the
     * shares past the list are not known, so the comparison stops there;
     * the frequency profile still counts the tail: 0.5/0.3 and 8 x 0.025
     * against 0.5/0.3/0.2: 1 - (0.175 + 7 * 0.025) / 2 = 0.825. */
    a = cat(1000, 0, 10, ab, f53);
    b = cat(1000, 0, 3, pqr, f532);
    NEAR(relab(a, 0, b, 0, &ex), 0.825);
    ck_assert(ex == 0.0);
    pgw_snapshot_free(b);
    /* Both lists complete, a third value only on one side: its share is
     * compared with 0 (0.2 - 0.005 beyond the floor, with 0.05 - 0.005 and
     * 0.15 - 0.005 at the first two ranks): the reading is 0. */
    pgw_snapshot_free(a);
    a = cat(1000, 0, 2, ab, f5545);
    b = cat(1000, 0, 3, abc, f532);
    ck_assert(relab(a, 0, b, 0, &ex) == 0.0);
    NEAR(ex, (0.05 - 0.005) + (0.15 - 0.005) + (0.2 - 0.005));
    pgw_snapshot_free(b);
    pgw_snapshot_free(a);

    /* Without a row count on either side no tolerance can be told: the
     * frequency profile, undamped, and the excess -1. */
    a = cat(-1, 0, 2, ab, f5545);
    b = cat(1000, 0, 2, xy, f5248);
    NEAR(relab(a, 0, b, 0, &ex), 0.97);
    ck_assert(ex == -1.0);
    pgw_snapshot_free(b);
    pgw_snapshot_free(a);

    /* No MCVs on a side (a histogram only, or no sampled values): -1. */
    ck_assert(relab(s, LON_NYC, s, MF, &ex) == -1.0 && ex == -1.0);
    ck_assert(relab(s, EMPTY, s, MF, &ex) == -1.0 && ex == -1.0);
    ck_assert(relab(s, UNSEEN, s, MF, &ex) == -1.0 && ex == -1.0);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(station_ids_start_and_end)
{
    /* One value set, two roles. The value evidence cannot tell them apart,
     * and it must not pretend to: it is high, as expected. Keeping start
     * with start is the name score's and the assignment's job. */
    pgw_snapshot *s = snap(PGW_PROFILE_RAW);
    pgwi_value_evidence e = ev(s, START, s, END);
    ck_assert(e.range == 1.0); /* both 72..3443 */
    NEAR(e.shape, 0.98711282051282051);
    NEAR(e.pattern, 0.99931818181818182);
    NEAR(e.length, 0.9995713673381913);
    NEAR(e.digits, 1.0);
    /* Shares .013 .011 .009 .008 .007 against .012 .010 .009 .008 .008,
     * then tails of 600 - 5 values at .952/595 and .953/595: L1 .003 +
     * .001. */
    NEAR(e.freq_profile, 0.998);
    ck_assert(e.score == 0.9968);
    /* Station IDs against counts: 72..3443 and 0..50 do not meet, and the
     * frequency profiles are far apart. */
    e = ev(s, START, s, COUNTS);
    ck_assert(e.range == 0.0);
    NEAR(e.freq_profile, 0.11106722689075621);
    ck_assert(e.score == 0.4353);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(frequency_profile_counts_distinct_values)
{
    /* MCVs 0.5 and 0.3, then 0.2 over the values outside the list. */
    static const char *const ab[] = {"a", "b", NULL}, *const xy[] = {"x", "y", NULL};
    static const double f[] = {0.5, 0.3};
    pgwt_col c[] = {
        {"ten", "text", true, 0, 12, ab, f, NULL},        /* tail: 10 values of 0.02 */
        {"thousand", "text", true, 0, 1002, xy, f, NULL}, /* 1000 of 0.0002 */
        {"unknown", "text", true, 0, 0, xy, f, NULL},     /* ceil(0.2 / 0.3) = 1 of 0.2 */
        {"fraction", "text", true, 0, -0.01, xy, f, NULL} /* 0.01 * 1200 rows = 12 */
    };
    pgw_snapshot *s = pgwt_snapshot("t", T0, 1200, c, 4);
    /* 10 * |0.02 - 0.0002| + 990 * 0.0002 = 0.396 */
    NEAR(ev(s, 0, s, 1).freq_profile, 1.0 - 0.396 / 2.0);
    /* |0.02 - 0.2| + 9 * 0.02 = 0.36 */
    NEAR(ev(s, 0, s, 2).freq_profile, 1.0 - 0.36 / 2.0);
    ck_assert(ev(s, 0, s, 3).freq_profile == 1.0);
    /* Shares of the non-null rows: the same column with a third of its
     * rows null has the same profile. */
    static const double f3[] = {0.5 * 2 / 3, 0.3 * 2 / 3};
    pgwt_col d[] = {{"ten", "text", true, 1.0 / 3.0, 12, ab, f3, NULL}};
    pgw_snapshot *s2 = pgwt_snapshot("t", T0, 1200, d, 1);
    NEAR(ev(s, 0, s2, 0).freq_profile, 1.0);
    pgw_snapshot_free(s2);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(pattern_signatures)
{
    /* The grains, column by column: one value each, so the pattern part is
     * 1 for equal signatures, 0.5 when only the coarse one agrees. */
    static const char *const v[][2] = {
        {"Adelie Penguin", NULL}, {"Gentoo penguin", NULL}, /* Aa Aa / Aa a: coarse a a */
        {"Chinstrap Penguin", NULL},                        /* Aa Aa */
        {"3.25", NULL},          {"10.5", NULL},            /* d.dd / dd.d: coarse d.d */
        {"iPhone", NULL},        {"Zürich", NULL},          /* aAa / Aa */
        {"Zurich", NULL},        {"a  b", NULL},            /* Aa / a a */
        {"a b", NULL},
    };
    pgwt_col c[N(v)];
    static const double one[] = {1.0};
    for (size_t i = 0; i < N(v); i++)
        c[i] = (pgwt_col){v[i][0], "text", true, 0, 1, v[i], one, NULL};
    pgw_snapshot *s = pgwt_snapshot("t", T0, 100, c, N(v));
    ck_assert(ev(s, 0, s, 2).pattern == 1.0); /* word lengths do not count */
    ck_assert(ev(s, 0, s, 1).pattern == 0.5);
    ck_assert(ev(s, 3, s, 4).pattern == 0.5); /* digit counts do */
    ck_assert(ev(s, 5, s, 7).pattern == 0.5); /* aAa / Aa, coarse a */
    ck_assert(ev(s, 6, s, 7).pattern == 1.0); /* a non-ASCII letter is a */
    ck_assert(ev(s, 8, s, 9).pattern == 1.0); /* a run of white space is one */
    /* Lengths count characters: Zürich is 6, like Zurich. */
    ck_assert(ev(s, 6, s, 7).length == 1.0);
    /* 3.25 is 3 digits of 4, 10.5 too. */
    ck_assert(ev(s, 3, s, 4).digits == 1.0);
    pgw_snapshot_free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* degradation                                                         */

START_TEST(hashed_profiles_degrade)
{
    pgw_snapshot *raw = snap(PGW_PROFILE_RAW), *h = snap(PGW_PROFILE_HASHED);
    /* Only hashes are kept: pattern, length, digits, range and shape
     * cannot be read. The frequencies are kept: freq_profile still works,
     * and it is then the whole score. */
    pgwi_value_evidence e = ev(h, MF, h, MALE);
    ck_assert(e.pattern == -1.0 && e.length == -1.0 && e.digits == -1.0);
    ck_assert(e.range == -1.0 && e.shape == -1.0);
    ck_assert(e.freq_profile == 1.0 && e.score == 1.0);
    e = ev(raw, MF, h, MALE); /* one side hashed is enough */
    ck_assert(e.pattern == -1.0 && e.length == -1.0 && e.digits == -1.0);
    ck_assert(e.freq_profile == 1.0 && e.score == 1.0);
    e = ev(h, START, h, END);
    ck_assert(e.range == -1.0 && e.shape == -1.0 && e.pattern == -1.0);
    NEAR(e.freq_profile, 0.998);
    ck_assert(e.score == 0.998);
    /* Without MCVs nothing is left: no evidence is not similarity. */
    e = ev(h, LON_NYC, h, LON_CHI);
    ck_assert(e.range == -1.0 && e.shape == -1.0 && e.pattern == -1.0 && e.length == -1.0 &&
              e.digits == -1.0 && e.freq_profile == -1.0);
    ck_assert(e.score == 0.0);
    e = ev(h, TS_JAN, h, TS_JAN);
    ck_assert(e.score == 0.0);
    pgw_snapshot_free(raw);
    pgw_snapshot_free(h);
}
END_TEST

START_TEST(no_sampled_values)
{
    pgw_snapshot *s = snap(PGW_PROFILE_RAW), *none = snap(PGW_PROFILE_NONE);
    for (size_t i = 0; i < NCOLS; i++) {
        const size_t without[] = {EMPTY, UNSEEN};
        for (size_t k = 0; k < N(without); k++) {
            pgwi_value_evidence e = ev(s, i, s, without[k]);
            ck_assert(e.range == -1.0 && e.shape == -1.0 && e.pattern == -1.0 &&
                      e.length == -1.0 && e.digits == -1.0 && e.freq_profile == -1.0);
            ck_assert(e.score == 0.0);
        }
        pgwi_value_evidence e = ev(s, i, none, i);
        ck_assert(e.score == 0.0 && e.freq_profile == -1.0 && e.pattern == -1.0);
    }
    pgw_snapshot_free(s);
    pgw_snapshot_free(none);
}
END_TEST

START_TEST(symmetric_and_same_after_json)
{
    /* Every pair, both ways (ev() checks bit-for-bit symmetry); and the
     * evidence of a snapshot read back from its JSON is the same. */
    pgw_snapshot *s = snap(PGW_PROFILE_RAW), *h = snap(PGW_PROFILE_HASHED);
    char *json = NULL;
    size_t len = 0;
    ck_assert_int_eq(pgw_snapshot_to_json(&json, &len, s, 0, NULL), PGW_OK);
    pgw_snapshot *back = NULL;
    ck_assert_int_eq(pgw_snapshot_from_json(&back, json, len, NULL, NULL), PGW_OK);
    for (size_t i = 0; i < NCOLS; i++)
        for (size_t j = 0; j < NCOLS; j++) {
            pgwi_value_evidence x = ev(s, i, s, j), y = ev(back, i, back, j);
            ck_assert_msg(memcmp(&x, &y, sizeof x) == 0, "%zu %zu changed through JSON", i, j);
            (void)ev(s, i, h, j);
            (void)ev(h, i, h, j);
        }
    pgw_free(json);
    pgw_snapshot_free(back);
    pgw_snapshot_free(s);
    pgw_snapshot_free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("value_shape");
    TCase *tc = tcase_create("value_shape");
    tcase_add_test(tc, longitudes_of_two_regions);
    tcase_add_test(tc, longitudes_against_counts_and_years_against_counts);
    tcase_add_test(tc, timestamps_of_two_months);
    tcase_add_test(tc, temporal_values);
    tcase_add_test(tc, constant_columns);
    tcase_add_test(tc, recoded_categories);
    tcase_add_test(tc, relabelling_reading);
    tcase_add_test(tc, station_ids_start_and_end);
    tcase_add_test(tc, frequency_profile_counts_distinct_values);
    tcase_add_test(tc, pattern_signatures);
    tcase_add_test(tc, hashed_profiles_degrade);
    tcase_add_test(tc, no_sampled_values);
    tcase_add_test(tc, symmetric_and_same_after_json);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
