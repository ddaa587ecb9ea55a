/**
 * @file verify/techniques/matrix.h
 * @brief The model x technique matrix of `twofold verify`: every snapshot model of the table
 *        (ref/models/model.h) through every entry of the technique table that runs a model.
 *
 * A cell is one model under one entry (#TECHNIQUE_ON_MODEL or #TECHNIQUE_VARIANT_MODEL): each of the
 * entry's variants runs through engine_run() on that model, unless the model lacks a property the
 * variant needs (technique::model_needs), and the cell says
 *  - **equal**: the worst error of the variants that ran (or `bitwise`), and how many of the
 *    variants ran;
 *  - **n/a**: the technique does not apply to such a model: the model table's reason
 *    (#model_info::lacks), or the data does not fit it (the entry's skip);
 *  - **not yet**: it would apply and is not built for this model: the model table's reason
 *    (#model_info::not_yet);
 *  - **WRONG**: a variant's twin was not equal to its reference (that variant's row, with each
 *    twin's verdict, is printed above the matrix).
 * The reasons are printed once each under the matrix, numbered; a cell names its reason's number.
 * The cells run on the same data as the rows before them, with the same options; a new line of
 * the model table, or a new entry that runs a model, gets its row or column with no other change.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_MATRIX_H
#define TWOFOLD_VERIFY_TECHNIQUES_MATRIX_H

#include "verify/techniques/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a matrix run counted (on the rank that prints; zeros elsewhere). */
typedef struct matrix_tally {
    int cells;          /**< cells printed */
    int equal;          /**< of which every variant that ran was equal */
    int amplified;      /**< of those, cells past the tolerance with the twin's logic proven (`amp`) */
    int incomparable;   /**< of those, cells past it where the reference's own one-ulp spread is larger (`nc`) */
    int not_applicable; /**< of which the technique does not apply to the model (or the data) */
    int not_yet;        /**< of which it would apply and is not built for the model */
    int wrong;          /**< of which a twin was not equal to its reference */
} matrix_tally;

/**
 * Run every model of the table through the entries marked in @p chosen (NULL: every entry) that run a
 * model, on @p data (borrowed), with @p options (engine_options::model and corrupt are set per cell;
 * a cell's variants are spoiled when @p spoil names the entry, as technique_variant_rows() does), and
 * on rank 0 (or always, without a group) print the row of every variant that was WRONG, then the matrix,
 * its reasons and a footer with the \c \#wrong count. Every rank of the group must call it alike.
 * @return TF_OK (the tally says whether a twin was wrong), or a #tf_error_code with @p err set.
 */
int technique_matrix_run(const unsigned char *chosen, const dataset *data, const char *spoil,
                         const engine_options *options, matrix_tally *tally, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
