#include "ref/nn/kernels.h"

#include "ref/nn/adam.h"
#include "ref/nn/layers.h"
#include "ref/nn/recurrent.h"

const kernels ref_kernels = {
    "ref",
    NULL, /* the reference backward scatters; it needs no extra structure */
    ref_linear_forward,
    ref_linear_accumulate,
    ref_linear_backward,
    ref_matmul_accumulate,
    ref_matmul_backward,
    ref_propagate_forward,
    ref_propagate_backward,
    ref_gru_cell_forward,
    ref_gru_cell_backward,
    ref_lstm_pointwise_forward,
    ref_lstm_pointwise_backward,
    NULL, /* plain loops on host memory cannot fail */
    REF_KERNELS_HOST_ENTRIES, /* ref_sigmoid_forward ... ref_graph_attention_edges_backward (kernels.h) */
};
