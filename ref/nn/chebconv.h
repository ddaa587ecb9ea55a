/**
 * @file ref/nn/chebconv.h
 * @brief Chebyshev graph convolution (Defferrard et al., 2016) as PyTorch Geometric's
 *        ChebConv: y = sum_{k<K} T_k(L^) x Theta_k^T + b.
 *
 * The basis T_k(L^) x comes from chebyshev_basis_forward() below and is computed once per input, however many convolutions read it: GConvGRU's three input gates share the
 * basis of X, two of its hidden gates the basis of H (ReInc's "reuse across gates").
 *
 * A convolution's parameters sit consecutively in the model's parameter_list, in
 * PyTorch's state_dict order: `PREFIX.bias` [out], then `PREFIX.lins.k.weight` [out][in] for
 * k = 0 .. K-1. Functions here take a pointer to the first (the bias).
 */
#ifndef TWOFOLD_REF_CHEBCONV_H
#define TWOFOLD_REF_CHEBCONV_H

#include <stdint.h>

#include "ref/nn/kernels.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Chebyshev basis of x for order @p k: T_0 = x, T_1 = L^ x, T_j = 2 L^ T_{j-1} - T_{j-2}.
 * @param kernels  the propagation kernels to use (ref_kernels or a twin)
 * @param p        a Chebyshev operator (ref_propagation_chebyshev)
 * @param x        [n][width]
 * @param width    feature columns
 * @param k        number of terms, >= 1 (PyTorch Geometric's K)
 * @param basis    [k][n][width] out: T_0 x .. T_{k-1} x
 */
void chebyshev_basis_forward(const kernels *kernels, const propagation *p, const float *x, int64_t width, int k,
                             float *basis);

/**
 * Backward of chebyshev_basis_forward(): given d_basis [k][n][width], the gradient of the loss
 * for each T_j x, add the gradient for x into dx [n][width]. Uses d_basis as scratch (its
 * content is destroyed).
 */
void chebyshev_basis_backward(const kernels *kernels, const propagation *p, float *d_basis, int64_t width, int k,
                              float *dx);

/**
 * Append the K + 1 parameters of one ChebConv named @p prefix (e.g. "recurrent.conv_x_z"),
 * initialized as PyTorch Geometric does (Glorot weights, zero bias).
 * @return the index of its first parameter (the bias), or -1 with @p err set.
 */
int64_t chebconv_add(parameter_list *list, const char *prefix, int k, int64_t in, int64_t out, rng *r,
                         tf_error *err);

/**
 * y += sum_k basis_k Theta_k^T + b.
 * @param kernels  the dense kernels to use
 * @param conv   the convolution's parameters: conv[0] bias, conv[1 + k] Theta_k
 * @param k      number of terms K
 * @param basis  [K][n][in] Chebyshev basis of the input
 * @param n      rows
 * @param in     input width
 * @param out    output width
 * @param y      [n][out], added into
 */
void chebconv_accumulate(const kernels *kernels, const parameter *conv, int k, const float *basis, int64_t n,
                         int64_t in, int64_t out, float *y);

/**
 * Backward of chebconv_accumulate() given basis [K][n][in] and dy [n][out]: adds into the
 * parameters' gradients and, unless @p d_basis is NULL, into d_basis [K][n][in].
 */
void chebconv_backward(const kernels *kernels, parameter *conv, int k, const float *basis, const float *dy,
                       int64_t n, int64_t in, int64_t out, float *d_basis);

#ifdef __cplusplus
}
#endif

#endif
