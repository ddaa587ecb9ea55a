/**
 * @file ref/nn/parameters.h
 * @brief A model's named parameters with their gradients, initialization, .npy save and load.
 *
 * Each parameter carries the name PyTorch gives it in the equivalent model's state_dict
 * (`recurrent.conv_z.lin.weight`), so a directory of `NAME.npy` files written here loads into
 * the PyTorch Geometric Temporal model with `torch.from_numpy`, and the other way round
 * (bench/peer/ does exactly that).
 */
#ifndef TWOFOLD_REF_PARAMETERS_H
#define TWOFOLD_REF_PARAMETERS_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/rng.h"
#include "ref/core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One trainable tensor and its gradient (same shape).
 *
 * The event models (ref/models/event_model.h) split a batch over processes, so their backward adds
 * into @c sums, in double, and rounds to @c grad once, after the sums of all processes are
 * added up (parameters_round_sums()): a float per process would be rounded before the
 * all-reduce, and Adam carries such one-ulp differences into the training (chapter 04).
 * The snapshot models add into @c grad directly and leave @c sums at zero.
 */
typedef struct parameter {
    char name[96];   /**< PyTorch state_dict key */
    tensor value;    /**< the values */
    tensor grad;     /**< d loss / d value, accumulated by backward functions */
    double *sums;    /**< [value.size] the gradient summed in double (event models), owned */
} parameter;

/** The parameters of one model, in a fixed order. Owns everything; free with parameters_free(). */
typedef struct parameter_list {
    int64_t count;       /**< number of parameters */
    int64_t capacity;    /**< allocated entries */
    parameter *items;    /**< [count] */
} parameter_list;

/**
 * Append a zero-filled parameter named @p name of the given shape [ndim].
 * @return its index, or -1 with @p err set (duplicate name, bad shape, no memory).
 */
int64_t parameters_add(parameter_list *list, const char *name, int ndim, const int64_t *shape, tf_error *err);

/** The parameter named @p name, or NULL. */
parameter *parameters_find(const parameter_list *list, const char *name);

/** Release all parameters and zero @p list. */
void parameters_free(parameter_list *list);

/** Set every gradient, and its double sums, to zero. */
void parameters_zero_grad(parameter_list *list);

/** Every gradient set to its double sums rounded to float: the one rounding of a batch's sums. */
void parameters_round_sums(parameter_list *list);

/** The name of the first tensor of @p list holding a NaN or an infinity in its values (or, when
 *  @p grads, its gradients), or NULL when all are finite. The trainers stop on it. */
const char *parameters_first_non_finite(const parameter_list *list, int grads);

/** Every parameter's double sums, in list order, into @p packed [parameters_size()]. */
void parameters_pack_sums(const parameter_list *list, double *packed);

/** The inverse of parameters_pack_sums(): @p packed [parameters_size()] into the sums. */
void parameters_unpack_sums(parameter_list *list, const double *packed);

/** Total number of scalar values over all parameters. */
int64_t parameters_size(const parameter_list *list);

/** Fill with uniform values in [-bound, bound). */
void parameter_init_uniform(parameter *p, double bound, rng *r);

/**
 * Glorot (Xavier) uniform initialization, as PyTorch Geometric's glorot(): bound
 * sqrt(6 / (rows + cols)) from the last two dimensions.
 */
void parameter_init_glorot(parameter *p, rng *r);

/** Write every parameter as DIRECTORY/NAME.npy (each file atomically). */
int parameters_save(const parameter_list *list, const char *directory, tf_error *err);

/**
 * Read every parameter from DIRECTORY/NAME.npy. A missing file or a shape different from
 * the parameter's is an error naming the file and the expected shape.
 */
int parameters_load(parameter_list *list, const char *directory, tf_error *err);

/** Copy the values (not the gradients) of @p from into @p to, which must have the same layout. */
void parameters_copy_values(parameter_list *to, const parameter_list *from);

/** Every gradient, one parameter after the other in list order, into @p packed [parameters_size()]
 *  (the one buffer a collective sends). */
void parameters_pack_gradients(const parameter_list *list, float *packed);

/** The inverse of parameters_pack_gradients(): @p packed [parameters_size()] into the gradients. */
void parameters_unpack_gradients(parameter_list *list, const float *packed);

/** Every value, in list order, into @p packed [parameters_size()]. */
void parameters_pack_values(const parameter_list *list, float *packed);

/** The inverse of parameters_pack_values(): @p packed [parameters_size()] into the values. */
void parameters_unpack_values(parameter_list *list, const float *packed);

#ifdef __cplusplus
}
#endif

#endif
