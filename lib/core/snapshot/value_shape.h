/*
 * lib/core/snapshot/value_shape.h — value evidence that survives a change of
 * row set, period, region or labels (issue 17): how alike two columns'
 * values look when they share no value. Read from the sampled values a
 * profile keeps (most_common_vals and histogram_bounds) and their
 * frequencies, prepared once per column when the snapshot is built
 * (pgwi_prep). Not installed; pgw_similarity is unchanged by it.
 *
 * Weights. Every sampled value stands for a share of the column's non-null
 * rows: a most-common value its frequency; each of the n histogram bounds
 * an equal part of the rest, (1 - null_frac - sum of the MCV frequencies) / n.
 * The weights are normalised to sum to 1 (all equal when they sum to 0).
 *
 * Parts, each in [0, 1], or -1 when it cannot be computed:
 *
 * - range (numeric or temporal, both sides the same kind): the overlap of
 *   the intervals [lo, hi] the sampled values span, as the Ochiai (cosine)
 *   coefficient of intervals, |A ∩ B| / sqrt(|A| |B|). It lies between the
 *   Jaccard coefficient and the overlap coefficient |A ∩ B| / min(|A|, |B|):
 *   a range inside one twice as wide gives 0.71 (Jaccard 0.5, overlap 1),
 *   while a small range inside a huge one (counts 0..50 among IDs
 *   0..100000) stays near 0 (the overlap coefficient would call it 1).
 *   Two zero-width ranges give 1 when they are the same point, else 0; one
 *   zero-width range and one that is not give 0.
 * - shape (numeric or temporal, both sides the same kind): 1 - the
 *   Kolmogorov-Smirnov distance of the two CDFs (the ones pgw_similarity's
 *   distribution part uses) after each is min-max normalised to [0, 1] by
 *   its own range, so that longitudes over two regions, or the same
 *   timestamps a month later, compare by the form of their distribution.
 *   Two constant columns give 1; a constant column and one that is not, 0.
 * - pattern (raw profiles): the character-class pattern signature of each
 *   sampled value, at two grains, compared as weighted distributions by
 *   their overlap, sum over signatures of min(wa, wb) (= 1 - L1/2):
 *     fine:   an ASCII digit is `d` and every digit is kept, since the
 *             number of digits carries meaning (a year, a count, a fixed-
 *             width code); a run of letters of one case is one `A`
 *             (uppercase) or `a` (lowercase or non-ASCII), since word
 *             lengths vary between the labels of one column; a run of
 *             white space is one space; other characters are kept:
 *             `2019-01-01 00:04:05` → `dddd-dd-dd dd:dd:dd`,
 *             `Adelie Penguin` → `Aa Aa`, `3.25` → `d.dd`, `iPhone` → `aAa`;
 *     coarse: letters of either case are `a`, and every run of one symbol
 *             is collapsed: `d-d-d d:d:d`, `a a`, `d.d`.
 *   pattern = (fine overlap + coarse overlap) / 2. So `M`/`F` against
 *   `male`/`female` gives 0.5 (fine `A` and `a`, coarse `a` and `a`), `Y`/`N`
 *   against `1`/`0` gives 0, and a year (`dddd`) against a count (`d`,
 *   `dd`) gives 0.5.
 * - length (raw profiles): the value lengths in characters (code points)
 *   as weighted distributions, compared as the weighted Jaccard (Ruzicka)
 *   coefficient of their survival functions S(x) = P(length > x):
 *   ∫ min(Sa, Sb) dx / ∫ max(Sa, Sb) dx (the integral of S is the mean
 *   length). It is 1 for equal distributions, m / n for constant lengths
 *   m <= n (all 8 characters against all 9: 8/9), and 1 when every value on
 *   both sides is empty.
 * - digits (raw profiles): 1 - |da - db|, where d is the weighted mean share
 *   of ASCII digits among a value's characters (0 for an empty value).
 * - freq_profile (any mode, hashed too: frequencies are kept): the MCV
 *   frequencies sorted descending whatever their labels, as shares of the
 *   non-null rows, followed by the values outside the list modelled as
 *   equally frequent: their share (1 - null_frac - sum) spread over
 *   n_distinct - n_mcv values (n_distinct made absolute with the row
 *   estimate when it is a fraction; when that is unknown or too small,
 *   ceil(rest / least MCV frequency) values, the fewest PostgreSQL's
 *   choice of MCVs allows). freq_profile = 1 - L1 / 2 of the two rank-
 *   frequency sequences aligned by rank. So the number of distinct values
 *   counts: a tail over 10 values against one over 1000 differs. -1 when
 *   either side keeps no MCVs.
 *
 * relabelling (pgwi_value_relabelling; the rename score's shape of two
 *   columns of codes or labels, rename_score.c): freq_profile read as
 *   evidence that one column's categories were relabelled into the
 *   other's, which only holds when each category kept its share:
 *     relabelling = freq_profile * max(0, 1 - excess / 0.10)
 *   Units: every share is a fraction of the non-null rows (an MCV
 *   frequency over 1 - null_frac, as freq_profile reads it); rows are the
 *   snapshots' row estimates (pg_class.reltuples). Let n_a and n_b be the
 *   two row estimates, moved = |n_a - n_b| / max(n_a, n_b) the relative
 *   change of rows, and x_k, y_k the two sides' MCV shares sorted
 *   descending (k = 1, 2, ...). For each rank k up to the longer list:
 *   a side whose list has ended counts 0 there when its MCVs cover all its
 *   non-null rows, and ends the comparison when values outside its list
 *   remain (their shares are not known). With p = (x_k + y_k) / 2,
 *     tol_k = 0.005 + moved + 3 * sqrt(V(p, n_a) + V(p, n_b)),
 *     V(p, n) = p (1 - p) / m * (1 - m / n),   m = min(n, 30000),
 *   and excess = sum over k of max(0, |x_k - y_k| - tol_k). So excess is
 *   how far, in shares, the aligned categories differ beyond what a change
 *   of rows and ANALYZE's sampling explain; at 0.10 the reading is 0.
 *   Sources: ANALYZE samples 300 x default_statistics_target rows (30,000
 *   at the default 100) and estimates each MCV frequency as its share of
 *   that sample (PostgreSQL, src/backend/commands/analyze.c,
 *   std_typanalyze and compute_scalar_stats); V is the variance of a
 *   share of a simple random sample of m of n rows drawn without
 *   replacement, with the finite population correction 1 - m / n
 *   (Cochran, Sampling Techniques, 3rd ed., 1977, ch. 3), so a table
 *   ANALYZE read whole allows no sampling error; a share of a true
 *   relabelling strays beyond 3 standard errors by chance about 0.3% of
 *   the time (normal approximation); 0.005 covers frequencies kept as
 *   float4 and the rounding of the estimate; 0.10 is the scale: an excess
 *   of a tenth of the rows leaves no evidence of a relabelling. When
 *   either snapshot has no row estimate, no tolerance can be told: the
 *   reading is freq_profile undamped, and the excess is reported as -1.
 *   -1 when freq_profile is. Examples (tests/unit/check_value_shape.c,
 *   relabelling_reading): M/F and male/female in the same shares, 1;
 *   0.55/0.45 against 0.52/0.48 over the same 1000 rows, excess 0.05,
 *   0.97 * 0.5 = 0.485; the same over 1,000,000 rows (30,000 sampled),
 *   excess 0.0259, 0.7184; over 1000 and 1200 rows (moved 1/6), 0.97.
 *
 * score: the weighted mean of the parts that could be computed, with
 *   weights pattern 0.25, length 0.10, digits 0.10, shape 0.20, range 0.15,
 *   freq_profile 0.20, rounded to 4 decimals as pgw_similarity is.
 *   pattern is the most specific reading of text; length and digits are
 *   coarser and follow from it, so they weigh less. shape is what survives a
 *   change of region or period; range does not survive a change of period,
 *   so it weighs less than shape, but it is what separates two columns of
 *   one format over different spans (counts against years). freq_profile is
 *   the only part that survives relabelling. 0.0 when either side has no
 *   sampled values, or no part could be computed (the project's rule: no
 *   evidence is not similarity).
 *
 * Hashed profiles (PGW_PROFILE_HASHED) keep only hashes of the values: they
 * cannot be read, so pattern, length, digits, range and shape are -1 and
 * the score is freq_profile alone (0.0 without MCVs). A raw profile against
 * a hashed one degrades the same way.
 *
 * Temporal values: a sampled value is temporal when pgw_timestamp_parse
 * reads it (a date 2019-01-01, or an RFC 3339 timestamp), or reads it with
 * `Z` appended (PostgreSQL's `timestamp` output, 2019-01-01 00:04:05, taken
 * as UTC). A column is temporal when every sampled value is temporal and
 * not every one is a number; its values are seconds since the Unix epoch.
 * Times of day and other date styles are not temporal.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_VALUE_SHAPE_H
#define PGWITNESS_VALUE_SHAPE_H

#include "snapshot_internal.h"

/* The value evidence of one pair of columns; see the top of this file. */
typedef struct pgwi_value_evidence {
    double range;        /* overlap of the spanned ranges; -1 when not computable */
    double shape;        /* 1 - KS of the min-max-normalised CDFs; -1 when not computable */
    double pattern;      /* character-class pattern overlap; -1 when not readable */
    double length;       /* closeness of the length distributions; -1 when not readable */
    double digits;       /* closeness of the digit shares; -1 when not readable */
    double freq_profile; /* sorted MCV frequency profiles; -1 when either has no MCVs */
    double score;        /* weighted mean of the computed parts; 0.0 without evidence */
} pgwi_value_evidence;

/* Scores column ia of a against column ib of b (indexes valid). Symmetric:
 * swapping the two sides gives the same evidence, bit for bit. */
void pgwi_value_evidence_of(pgwi_value_evidence *out, const pgw_snapshot *a, size_t ia,
                            const pgw_snapshot *b, size_t ib);

/* The freq_profile part alone (as pgwi_value_evidence_of fills it), for a
 * caller that needs no other part: -1 when either side keeps no MCVs. */
double pgwi_value_freq_profile(const pgw_snapshot *a, size_t ia, const pgw_snapshot *b,
                               size_t ib);

/* The frequency profile as evidence that one column's categories were
 * relabelled into the other's ("relabelling" above): freq_profile times
 * max(0, 1 - excess / 0.10), in [0, 1]; freq_profile undamped when either
 * snapshot has no row estimate; -1 when freq_profile is. Symmetric, bit
 * for bit. excess_out (may be NULL) receives the excess, a sum of shares
 * (>= 0), or -1 when freq_profile is -1 or there is no row estimate. */
double pgwi_value_relabelling(const pgw_snapshot *a, size_t ia, const pgw_snapshot *b,
                              size_t ib, double *excess_out);

/* The score of ve (the weighted mean of its computed parts, as
 * pgwi_value_evidence_of computes it) with freq in place of its
 * freq_profile (-1: left out). */
double pgwi_value_evidence_rescore(const pgwi_value_evidence *ve, double freq);

/* Prepares the value-shape fields of pr (the frequency profile in every
 * mode; patterns, lengths and digits for raw profiles; the normalised CDF
 * when prepare_profile() has built a numeric or temporal one), in the
 * arena. has_rows/rows: the snapshot's row estimate, for a fractional
 * n_distinct. PGW_OK or PGW_ENOMEM (pr may then hold some fields). */
int pgwi_value_shape_prepare(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p,
                             pgw_profile_mode mode, bool has_rows, int64_t rows);

/* A date or timestamp as seconds since the Unix epoch (see "Temporal
 * values" above); false when s is not one. */
bool pgwi_temporal_seconds(const char *s, double *out);

#endif
