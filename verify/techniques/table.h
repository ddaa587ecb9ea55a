/**
 * @file verify/techniques/table.h
 * @brief The technique table: one entry per technique (verify/techniques/STEM.c), in chapter
 *        order, and the choosing of entries by the words a user types.
 *
 * An entry's name is unique in the table; its stem is the stem of its ref/ and opt/ files and of
 * its chapter, shared by the entries of one technique (fusion_temporal and fusion_spatial are
 * both "fusion"; schedule_hybrid is "schedule"). A word on the command line names an entry by its
 * name, or every entry of a stem by the stem.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_TABLE_H
#define TWOFOLD_VERIFY_TECHNIQUES_TABLE_H

#include "verify/techniques/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most entries the table holds; a chosen[] array has this many flags. */
#define TECHNIQUE_TABLE_MAX 32

/** The table: every technique, in chapter order, terminated by NULL (verify/techniques/table.c). */
extern const technique *const technique_table[];

/* The entries, in table order; each is defined in the file of its stem. */
extern const technique technique_train;           /**< 01: data-parallel training (train.c) */
extern const technique technique_incremental;     /**< 02: ReInc incremental aggregation (incremental.c) */
extern const technique technique_incremental_train; /**< 02: the aggregations served to a model in training (incremental.c) */
extern const technique technique_minibatch;       /**< 02: ReInc's sampled mini-batches on the ranks (minibatch.c) */
extern const technique technique_fusion_temporal; /**< 03: DGC temporal fusion (fusion.c) */
extern const technique technique_fusion_spatial;  /**< 03: DGC spatial fusion (fusion.c) */
extern const technique technique_dispatch;        /**< 04: Sven's redundancy-free dispatch (dispatch.c) */
extern const technique technique_async;           /**< 05: asynchronous and stale updates (async.c) */
extern const technique technique_partition;       /**< 06: vertex-partitioned training (partition.c) */
extern const technique technique_schedule;        /**< 07: DyGNeX schedules (schedule.c) */
extern const technique technique_schedule_hybrid; /**< 07: DynaHB hybrid batches, stem schedule (schedule_hybrid.c) */

/** The entry called @p name, or NULL. */
const technique *technique_find(const char *name);

/** Whether @p word names @p t: its name, its stem, or "all". */
int technique_named(const technique *t, const char *word);

/**
 * Mark in @p chosen [TECHNIQUE_TABLE_MAX] (indexed as technique_table) every entry @p word names
 * (technique_named()). @return how many it named: 0 means no technique is called @p word.
 */
int technique_choose(const char *word, unsigned char *chosen);

/**
 * The rows `twofold demo` shows (each entry's technique::demo cases) of the entries marked in
 * @p chosen (NULL: every entry), in table order, into @p rows [max]; a row's `corrupt` is set when
 * @p spoil names its entry (technique_named(); NULL: none). @return the number of rows.
 */
int technique_demo_rows(const unsigned char *chosen, const char *spoil, engine_row *rows, int max);

/**
 * Every variant of the entries marked in @p chosen (NULL: every entry) on @p data (borrowed, the
 * rows' data column: its name), into @p rows [max], with `corrupt` as technique_demo_rows() sets it.
 * @return the number of rows.
 */
int technique_variant_rows(const unsigned char *chosen, const dataset *data, const char *spoil, engine_row *rows,
                           int max);

#ifdef __cplusplus
}
#endif

#endif
