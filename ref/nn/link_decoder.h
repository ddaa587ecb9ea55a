/**
 * @file ref/nn/link_decoder.h
 * @brief The link decoder of TGN and JODIE: an MLP that scores a (source, destination) pair
 *        of embeddings.
 *
 *     score(u, v) = W_out ReLU(W_src z_u + b_src + W_dst z_v + b_dst) + b_out      (a logit)
 *
 * TGL's `EdgePredictor` ([TGL], chapters/references.md): three torch.nn.Linear layers,
 * `edge_predictor.src_fc` [d][d], `edge_predictor.dst_fc` [d][d] and `edge_predictor.out_fc`
 * [1][d]. A positive pair is (source, true destination), a negative pair (source, sampled
 * destination); the loss is binary cross-entropy on the logits (ref_bce_with_logits_sum()).
 */
#ifndef TWOFOLD_REF_LINK_DECODER_H
#define TWOFOLD_REF_LINK_DECODER_H

#include <stdint.h>

#include "ref/nn/kernels.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The decoder's width and parameters (owned by a model's parameter_list; this only points). */
typedef struct link_decoder {
    int64_t width;                   /**< d: embedding width */
    parameter *source_weight;        /**< src_fc.weight [d][d] */
    parameter *source_bias;          /**< src_fc.bias [d] */
    parameter *destination_weight;   /**< dst_fc.weight [d][d] */
    parameter *destination_bias;     /**< dst_fc.bias [d] */
    parameter *output_weight;        /**< out_fc.weight [1][d] */
    parameter *output_bias;          /**< out_fc.bias [1] */
} link_decoder;

/**
 * Scores of @p pairs pairs.
 * @param k            the kernels its products run on (ref_kernels or a twin)
 * @param decoder      the decoder
 * @param source       [pairs][d] z_u
 * @param destination  [pairs][d] z_v
 * @param pairs        number of pairs
 * @param hidden       [pairs][d] out: ReLU(W_src z_u + b_src + W_dst z_v + b_dst), kept for the backward
 * @param scores       [pairs] out: the logits
 */
void ref_link_decoder_forward(const kernels *k, const link_decoder *decoder, const float *source,
                              const float *destination, int64_t pairs, float *hidden, float *scores);

/**
 * Backward, given dscores [pairs]. Adds into the parameters' double gradient sums
 * (parameter.sums, ref/nn/parameters.h) and into dsource and
 * ddestination [pairs][d] (either may be NULL).
 * @param k             the kernels its products run on (the forward's)
 * @param decoder       the decoder
 * @param source        [pairs][d] the forward's z_u
 * @param destination   [pairs][d] the forward's z_v
 * @param hidden        [pairs][d] the forward's hidden layer
 * @param dscores       [pairs] gradient of the loss with respect to the scores
 * @param pairs         number of pairs
 * @param dhidden       [pairs][d] scratch (overwritten)
 * @param dsource       [pairs][d] added into
 * @param ddestination  [pairs][d] added into
 */
void ref_link_decoder_backward(const kernels *k, const link_decoder *decoder, const float *source,
                               const float *destination, const float *hidden, const float *dscores, int64_t pairs,
                               float *dhidden, float *dsource, float *ddestination);

#ifdef __cplusplus
}
#endif

#endif
