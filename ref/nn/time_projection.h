/**
 * @file ref/nn/time_projection.h
 * @brief JODIE's time projection: an embedding drifts with the time since the vertex was
 *        last updated.
 *
 * JODIE (Kumar, Zhang and Leskovec, KDD 2019, Eq. 3) projects a user's embedding forward in
 * time: u(t + delta) = (1 + w delta) * u(t), a linear layer of the elapsed time acting as an
 * elementwise scale. TGL implements it as `JODIETimeEmbedding` ([JODIE], [TGL] in
 * chapters/references.md):
 *
 *     z = y * (1 + W_tau delta~ + b_tau),      delta~ = (t - mem_ts) / (t + 1)
 *
 * where y = LayerNorm(s') is the normalized updated memory, W_tau [d][1] and b_tau [d] are a
 * torch.nn.Linear(1, d) (`time_emb.weight`, `time_emb.bias`), and delta~ is the time since the
 * vertex's memory was last written, divided by t + 1 so it stays in [0, 1) on any time scale
 * (the caller computes it). TGL initializes W_tau and b_tau from N(0, 1/sqrt(1)) = N(0, 1)
 * ("NormalLinear, from the JODIE code").
 */
#ifndef TWOFOLD_REF_TIME_PROJECTION_H
#define TWOFOLD_REF_TIME_PROJECTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * z[k][i] = y[k][i] * (1 + weight[i] * delta[k] + bias[i]).
 * @param y       [n][width] embeddings
 * @param delta   [n] scaled elapsed times delta~
 * @param n       rows
 * @param width   d
 * @param weight  [width] W_tau
 * @param bias    [width] b_tau
 * @param z       [n][width] output (must not alias @p y)
 */
void ref_time_projection_forward(const float *y, const float *delta, int64_t n, int64_t width, const float *weight,
                                 const float *bias, float *z);

/**
 * Backward, given dz [n][width]: dy += dz * (1 + weight delta + bias),
 * dweight[i] += sum_k dz[k][i] y[k][i] delta[k], dbias[i] += sum_k dz[k][i] y[k][i] (sums in double).
 * @param y        [n][width] the forward's embeddings
 * @param delta    [n] the forward's delta~
 * @param n        rows
 * @param width    d
 * @param weight   [width] W_tau
 * @param bias     [width] b_tau
 * @param dz       [n][width] gradient of the loss with respect to z
 * @param dy       [n][width] added into (may be NULL)
 * @param dweight  [width] added into, in double (parameter.sums, ref/nn/parameters.h; may be NULL)
 * @param dbias    [width] added into, in double (may be NULL)
 */
void ref_time_projection_backward(const float *y, const float *delta, int64_t n, int64_t width, const float *weight,
                                  const float *bias, const float *dz, float *dy, double *dweight, double *dbias);

#ifdef __cplusplus
}
#endif

#endif
