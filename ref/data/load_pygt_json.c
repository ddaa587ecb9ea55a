/* Typed reading of a cJSON tree with JSON paths in the errors, and parsing with line numbers:
 * the helpers of ref/data/load_pygt.c (see ref/data/load_pygt_json.h). */
#include "ref/data/load_pygt_json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* 1 if the text opens more arrays/objects than it closes (outside strings): a file cut short.
 * Used to tell "truncated" from "malformed", which cJSON does not distinguish. */
static int json_is_truncated(const text *content)
{
    long depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < content->size; i++) {
        char ch = content->data[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = 0;
        } else if (ch == '"') {
            in_string = 1;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return depth > 0 || in_string;
}

/* ---- cJSON's memory under the budget ----------------------------------------------------------
 * cJSON allocates one node (64 bytes, 80 with malloc's header) per value, so its tree is about
 * 30 times the text: a small gzip of "[0,0,0,...]" becomes gigabytes. Its allocations go
 * through this hook, which refuses once the budget of ref/core/memory.h is spent; cJSON then
 * stops and returns NULL, and the flag tells that failure from malformed text.
 * Measuring the heap at every 64-byte node would cost more than the parse, so the hook
 * measures after each MiB cJSON takes (and before any large request): the tree can pass the
 * budget by at most about that MiB plus its headers. The parse runs on one thread. */
enum { JSON_CHECK_EVERY = 1 << 20 };
static size_t json_unchecked;   /* bytes cJSON took since the last measurement */
static int json_out_of_memory;  /* set when the hook refused, or malloc itself failed */

static void *json_malloc(size_t size)
{
    json_unchecked += size;
    if (json_unchecked >= JSON_CHECK_EVERY || size >= JSON_CHECK_EVERY) {
        json_unchecked = 0;
        uint64_t in_use;
        if (!tf_memory_fits((double)size, &in_use)) {
            json_out_of_memory = 1;
            return NULL;
        }
    }
    void *memory = malloc(size);
    if (!memory)
        json_out_of_memory = 1;
    return memory;
}

/* Parses the JSON text; on failure words the error with the line and the offending text. */
cJSON *pygt_json_parse(const text *content, const char *source, tf_error *err)
{
    if (content->size == 0) {
        tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a JSON object", source);
        return NULL;
    }
    /* free_fn stays free(): cJSON_Delete() anywhere frees what the hook allocated. */
    cJSON_Hooks hooks = {.malloc_fn = json_malloc, .free_fn = free};
    cJSON_InitHooks(&hooks);
    json_unchecked = JSON_CHECK_EVERY;  /* measure at the first node too */
    json_out_of_memory = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(content->data, content->size, &end, 0);
    if (json_out_of_memory) {
        /* cJSON freed its partial tree before returning; the text was not at fault. */
        cJSON_Delete(root);
        char size[32], limit[32];
        tf_format_bytes((double)content->size, size, sizeof size);
        if (tf_memory_limit() != 0)
            tf_error_set(err, TF_ERR_INPUT,
                         "%s: too large for memory: parsing its %s of JSON needs more memory than --memory-limit %s",
                         source, size, tf_format_bytes((double)tf_memory_limit(), limit, sizeof limit));
        else
            tf_error_set(err, TF_ERR_INPUT,
                         "%s: too large for memory: parsing its %s of JSON needs more memory than is available",
                         source, size);
        return NULL;
    }
    if (root) {
        while (end < content->data + content->size && strchr(" \t\r\n", *end))
            end++;
        if (end == content->data + content->size)
            return root;
        cJSON_Delete(root);
    }
    if (!end || end < content->data)
        end = content->data;
    const char *stop = content->data + content->size;
    char near[24];
    quote_field(end, end + 20 < stop ? end + 20 : stop, near, sizeof near);
    if (!root && json_is_truncated(content))
        end = stop;
    const char *why = root ? "unexpected content after the JSON value"
                      : end >= stop ? "unexpected end of file (truncated JSON?)"
                      : (strncmp(end, "NaN", 3) == 0 || strncmp(end, "Infinity", 8) == 0 ||
                         strncmp(end, "-Infinity", 9) == 0)
                          ? "NaN and Infinity are not JSON numbers"
                          : "malformed JSON";
    tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %s near \"%s\"", source, text_line_of(content, end), why, near);
    return NULL;
}

/* ---- typed values ----------------------------------------------------------------------- */

static const char *json_type_name(const cJSON *item)
{
    if (!item) return "nothing";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    return "an invalid value";
}

int pygt_json_fail(const pygt_json_context *c, const char *path, const char *what, const cJSON *found)
{
    return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: expected %s, found %s", c->source, path, what,
                        json_type_name(found));
}

/* The member `key` of object `object` (itself at `path`), or NULL with an error. */
const cJSON *pygt_json_member(const pygt_json_context *c, const cJSON *object, const char *path, const char *key)
{
    const cJSON *item = cJSON_IsObject(object) ? cJSON_GetObjectItemCaseSensitive(object, key) : NULL;
    if (!cJSON_IsObject(object))
        pygt_json_fail(c, path, "an object", object);
    else if (!item)
        tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: missing key \"%s\"", c->source, path, key);
    return item;
}

/* A finite number at `path`. */
int pygt_json_number(const pygt_json_context *c, const cJSON *item, const char *path, double *value)
{
    if (!cJSON_IsNumber(item))
        return pygt_json_fail(c, path, "a number", item);
    /* Every number here ends up as float32 (or a small integer): beyond FLT_MAX it would
     * silently become infinity. */
    if (!isfinite(item->valuedouble) || fabs(item->valuedouble) > FLT_MAX)
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: expected a finite number within float32 range, found %g",
                            c->source, path, item->valuedouble);
    *value = item->valuedouble;
    return TF_OK;
}

/* An array at `path` with its length. */
int pygt_json_array(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *length)
{
    if (!cJSON_IsArray(item))
        return pygt_json_fail(c, path, "an array", item);
    *length = cJSON_GetArraySize(item);
    return TF_OK;
}

/* Every element of the array `item` (at `path`) as a number: out [length of item]. */
static int numbers_of(const pygt_json_context *c, const cJSON *item, const char *path, double *out)
{
    int64_t i = 0;
    const cJSON *element;
    cJSON_ArrayForEach(element, item) {
        char element_path[280];
        snprintf(element_path, sizeof element_path, "%s[%lld]", path, (long long)i);
        if (pygt_json_number(c, element, element_path, &out[i]) != TF_OK)
            return TF_ERR_INPUT;
        i++;
    }
    return TF_OK;
}

/* A vector of numbers; *values is allocated (caller frees). */
int pygt_json_vector(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *length,
                     double **values)
{
    *values = NULL;
    if (pygt_json_array(c, item, path, length) != TF_OK)
        return TF_ERR_INPUT;
    double *out = tf_alloc((size_t)*length, sizeof *out, "a JSON vector", c->err);
    if (!out)
        return TF_ERR_INPUT;
    if (numbers_of(c, item, path, out) != TF_OK) {
        free(out);
        return TF_ERR_INPUT;
    }
    *values = out;
    return TF_OK;
}

/* A rectangular matrix of numbers (array of equally long arrays), row-major. */
int pygt_json_matrix(const pygt_json_context *c, const cJSON *item, const char *path, int64_t *rows,
                     int64_t *cols, double **values)
{
    *values = NULL;
    if (pygt_json_array(c, item, path, rows) != TF_OK)
        return TF_ERR_INPUT;
    *cols = 0;
    char first_row_path[256];
    snprintf(first_row_path, sizeof first_row_path, "%s[0]", path);
    if (*rows > 0 && pygt_json_array(c, item->child, first_row_path, cols) != TF_OK)
        return TF_ERR_INPUT;
    if (*cols > 0 && (size_t)*rows > SIZE_MAX / (size_t)*cols)
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: too large for memory", c->source, path);
    double *out = tf_alloc((size_t)(*rows * *cols), sizeof *out, "a JSON matrix", c->err);
    if (!out)
        return TF_ERR_INPUT;
    int64_t r = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, item) {
        char row_path[256];
        snprintf(row_path, sizeof row_path, "%s[%lld]", path, (long long)r);
        int64_t length = 0;
        if (pygt_json_array(c, row, row_path, &length) != TF_OK) {
            free(out);
            return TF_ERR_INPUT;
        }
        if (length != *cols) {
            free(out);
            return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: ragged rows: %lld numbers, expected %lld like row 0",
                                c->source, row_path, (long long)length, (long long)*cols);
        }
        if (numbers_of(c, row, row_path, out + r * *cols) != TF_OK) {
            free(out);
            return TF_ERR_INPUT;
        }
        r++;
    }
    *values = out;
    return TF_OK;
}

/* An edge list [[u, v], ...] with integer endpoints in 0..num_nodes-1. */
int pygt_json_edges(const pygt_json_context *c, const cJSON *item, const char *path, int64_t num_nodes,
                    int64_t *count, int32_t **src, int32_t **dst)
{
    *src = *dst = NULL;
    int64_t rows, cols;
    double *pairs;
    if (pygt_json_matrix(c, item, path, &rows, &cols, &pairs) != TF_OK)
        return TF_ERR_INPUT;
    if (rows > 0 && cols != 2) {
        free(pairs);
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s[0]: expected an edge [source, target], found %lld numbers",
                            c->source, path, (long long)cols);
    }
    *src = tf_alloc((size_t)rows, sizeof **src, "edge sources", c->err);
    *dst = *src ? tf_alloc((size_t)rows, sizeof **dst, "edge targets", c->err) : NULL;
    for (int64_t e = 0; *dst && e < rows; e++)
        for (int side = 0; side < 2; side++) {
            double id = pairs[2 * e + side];
            if (id != floor(id) || id < 0 || id >= (double)num_nodes) {
                tf_error_set(c->err, TF_ERR_INPUT, "%s: %s[%lld][%d]: vertex id %g out of range, expected an integer in 0..%lld",
                             c->source, path, (long long)e, side, id, (long long)num_nodes - 1);
                free(*dst);
                *dst = NULL;
                break;
            }
            (side == 0 ? *src : *dst)[e] = (int32_t)id;
        }
    free(pairs);
    if (!*dst) {
        free(*src);
        *src = NULL;
        return TF_ERR_INPUT;
    }
    *count = rows;
    return TF_OK;
}

/* Edge weights for `count` edges: a vector of that length, as float32. */
int pygt_json_weights(const pygt_json_context *c, const cJSON *item, const char *path, int64_t count, float **weights)
{
    *weights = NULL;
    int64_t length;
    double *values;
    if (pygt_json_vector(c, item, path, &length, &values) != TF_OK)
        return TF_ERR_INPUT;
    if (length != count) {
        free(values);
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld weights, expected one per edge (%lld)", c->source,
                            path, (long long)length, (long long)count);
    }
    *weights = tf_alloc((size_t)count, sizeof **weights, "edge weights", c->err);
    for (int64_t e = 0; *weights && e < count; e++)
        (*weights)[e] = (float)values[e];
    free(values);
    return *weights ? TF_OK : TF_ERR_INPUT;
}
