/**
 * @file ref/data/load_pygt_json.h
 * @brief Reading typed values out of a parsed JSON document, each failure worded with the JSON
 *        path of the value (`$.edges[3][1]`): the helpers of the PyTorch Geometric Temporal
 *        loader. Internal to ref/data/load_pygt.c, which holds the five dataset layouts and the
 *        entry point load_pygt_json() (ref/data/loaders.h); nothing else should include this.
 *
 * The document is a cJSON tree. Every function takes a #pygt_json_context (the file name and
 * the error to fill), the item to read and its path, and returns 0 or TF_ERR_INPUT with a
 * one-line message "source: path: expected ..., found ...". Numbers are read as double and
 * must be finite within float32 range, because every value ends up as float32 (or a small
 * integer).
 *
 * Ownership: arrays returned through pointer arguments are allocated here and freed by the
 * caller (free()); on failure they are NULL. The cJSON tree of pygt_json_parse() belongs to
 * the caller (cJSON_Delete()).
 */
#ifndef TWOFOLD_REF_LOAD_PYGT_JSON_H
#define TWOFOLD_REF_LOAD_PYGT_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/io.h"

/** Everything a reading helper needs to word an error. */
typedef struct pygt_json_context {
    const char *source;   /**< the file name, first in every message */
    tf_error *err;        /**< where the message goes */
} pygt_json_context;

/**
 * Parse @p content as one JSON value followed by nothing but white space.
 * @return the tree (caller frees with cJSON_Delete()), or NULL with @p err naming the line and
 *         quoting the text where parsing stopped, and telling a truncated file, NaN/Infinity
 *         and trailing content from other malformed JSON.
 */
cJSON *pygt_json_parse(const text *content, const char *source, tf_error *err);

/** Set "expected @p what, found <the type of @p found>" at @p path. @return TF_ERR_INPUT. */
int pygt_json_fail(const pygt_json_context *c, const char *path, const char *what, const cJSON *found);

/** The member @p key of @p object (itself at @p path), or NULL with an error. */
const cJSON *pygt_json_member(const pygt_json_context *c, const cJSON *object, const char *path, const char *key);

/** @p item as a finite number within float32 range, into @p value [1]. @return 0 or TF_ERR_INPUT. */
int pygt_json_number(const pygt_json_context *c, const cJSON *item, const char *path, double *value);

/** @p item as an array; its length into @p length [1]. @return 0 or TF_ERR_INPUT. */
int pygt_json_array(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *length);

/**
 * @p item as an array of numbers.
 * @param c      the file name and the error to fill
 * @param item   the value to read
 * @param path   its JSON path, for messages
 * @param length  [1] gets the count n
 * @param values  [1] gets an allocated [n] array of the numbers (caller frees)
 * @return 0 or TF_ERR_INPUT
 */
int pygt_json_vector(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *length,
                     double **values);

/**
 * @p item as a rectangular matrix: an array of equally long arrays of numbers.
 * @param c      the file name and the error to fill
 * @param item   the value to read
 * @param path   its JSON path, for messages
 * @param rows,cols  [1] each: get the shape
 * @param values     [1] gets an allocated [rows][cols] array, row-major (caller frees)
 * @return 0, or TF_ERR_INPUT (also for ragged rows, naming the first one)
 */
int pygt_json_matrix(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *rows,
                     int64_t *cols, double **values);

/**
 * @p item as an edge list [[u, v], ...] whose endpoints are integers in 0 .. @p num_nodes - 1.
 * @param c      the file name and the error to fill
 * @param item   the value to read
 * @param path   its JSON path, for messages
 * @param num_nodes  the vertex count
 * @param count  [1] gets the number of edges E
 * @param src    [1] gets an allocated [E] array of sources (caller frees)
 * @param dst    [1] gets an allocated [E] array of targets (caller frees)
 * @return 0 or TF_ERR_INPUT
 */
int pygt_json_edges(const pygt_json_context *c, const cJSON *item, const char *path, int64_t num_nodes,
                    int64_t *count, int32_t **src, int32_t **dst);

/**
 * @p item as the weights of @p count edges: an array of exactly that many numbers.
 * @param c      the file name and the error to fill
 * @param item   the value to read
 * @param path   its JSON path, for messages
 * @param count  the edge count
 * @param weights  [1] gets an allocated [count] array, rounded to float32 (caller frees)
 * @return 0 or TF_ERR_INPUT
 */
int pygt_json_weights(const pygt_json_context *c, const cJSON *item, const char *path, int64_t count,
                      float **weights);

#endif
