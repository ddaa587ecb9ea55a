/**
 * @file chebconv.h
 * @brief Chebyshev graph convolution (Defferrard et al., 2016) as PyTorch Geometric's
 *        ChebConv: y = sum_{k<K} T_k(L^) x Theta_k^T + b.
 *
 * The basis T_k(L^) x comes from ref_chebyshev_basis_forward() (propagate.h) and is computed
 * once per input, however many convolutions read it: GConvGRU's three input gates share the
 * basis of X, two of its hidden gates the basis of H (ReInc's "reuse across gates").
 *
 * A convolution's parameters sit consecutively in the model's parameter_list, in
 * PyTorch's state_dict order: `PREFIX.bias` [out], then `PREFIX.lins.k.weight` [out][in] for
 * k = 0 .. K-1. Functions here take a pointer to the first (the bias).
 */
#ifndef TWOFOLD_CHEBCONV_H
#define TWOFOLD_CHEBCONV_H

#include <stdint.h>

#include "parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Append the K + 1 parameters of one ChebConv named @p prefix (e.g. "recurrent.conv_x_z"),
 * initialized as PyTorch Geometric does (Glorot weights, zero bias).
 * @return the index of its first parameter (the bias), or -1 with @p err set.
 */
int64_t ref_chebconv_add(parameter_list *list, const char *prefix, int k, int64_t in, int64_t out, rng *r,
                         tf_error *err);

/**
 * y += sum_k basis_k Theta_k^T + b.
 * @param conv   the convolution's parameters: conv[0] bias, conv[1 + k] Theta_k
 * @param k      number of terms K
 * @param basis  [K][n][in] Chebyshev basis of the input
 * @param n      rows
 * @param in     input width
 * @param out    output width
 * @param y      [n][out], added into
 */
void ref_chebconv_accumulate(const parameter *conv, int k, const float *basis, int64_t n, int64_t in, int64_t out,
                             float *y);

/**
 * Backward of ref_chebconv_accumulate() given dy [n][out]: adds into the parameters'
 * gradients and, unless @p d_basis is NULL, into d_basis [K][n][in].
 */
void ref_chebconv_backward(parameter *conv, int k, const float *basis, const float *dy, int64_t n, int64_t in,
                           int64_t out, float *d_basis);

#ifdef __cplusplus
}
#endif

#endif
