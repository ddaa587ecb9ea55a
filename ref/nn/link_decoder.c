#include "ref/nn/link_decoder.h"

#include <string.h>

#include "ref/nn/layers.h"

void ref_link_decoder_forward(const kernels *k, const link_decoder *decoder, const float *source,
                              const float *destination, int64_t pairs, float *hidden, float *scores)
{
    const int64_t d = decoder->width;
    k->linear_forward(source, decoder->source_weight->value.data, decoder->source_bias->value.data, pairs, d, d,
                       hidden);
    k->linear_accumulate(destination, decoder->destination_weight->value.data, pairs, d, d, hidden);
    k->add_bias(hidden, decoder->destination_bias->value.data, pairs, d);
    k->relu_forward(hidden, pairs * d, hidden);
    k->linear_forward(hidden, decoder->output_weight->value.data, decoder->output_bias->value.data, pairs, d, 1,
                       scores);
}

void ref_link_decoder_backward(const kernels *k, const link_decoder *decoder, const float *source,
                               const float *destination, const float *hidden, const float *dscores, int64_t pairs,
                               float *dhidden, float *dsource, float *ddestination)
{
    const int64_t d = decoder->width;
    float *dactivated = dhidden; /* first d(ReLU output), then, in place, d(pre-activation) */
    memset(dactivated, 0, (size_t)(pairs * d) * sizeof(float));
    k->linear_backward_sums(hidden, decoder->output_weight->value.data, dscores, pairs, d, 1, dactivated,
                             decoder->output_weight->sums, decoder->output_bias->sums);
    for (int64_t i = 0; i < pairs * d; i++) /* ReLU: no gradient where the output is 0 */
        if (!(hidden[i] > 0.0f))
            dactivated[i] = 0.0f;
    k->linear_backward_sums(source, decoder->source_weight->value.data, dactivated, pairs, d, d, dsource,
                             decoder->source_weight->sums, decoder->source_bias->sums);
    k->linear_backward_sums(destination, decoder->destination_weight->value.data, dactivated, pairs, d, d,
                             ddestination, decoder->destination_weight->sums, decoder->destination_bias->sums);
}
